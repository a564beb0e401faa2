// Every lake package's error guard across two real builds. The built lake-reader and every @lake
// package it uses are installed twice, into two node_modules folders, so each install has its own
// copy of each package and of @lake/errors under it. An error made by copy A's class must pass copy
// B's guard of that class (and no other class's guard), though `instanceof` across copies is false;
// copy B's describeError gives it the exit code copy A's own would.
import { afterAll, describe, expect, it } from "vitest";
import { readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { EXIT } from "@lake/cli";
import { importFrom, installBuild } from "@lake/tooling/copies";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";

afterAll(cleanupTempDirs);

const app = fileURLToPath(new URL("..", import.meta.url));
const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
/** Whether a workspace package is published (the private ones, @lake/tooling and @lake/testdata, hold no error class and have no build). */
const published = (name: string) => !(JSON.parse(readFileSync(join(app, "node_modules", name, "package.json"), "utf8")) as { private?: boolean }).private;
const lakePackages = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((n) => n.startsWith("@lake/") && n !== "@lake/errors" && published(n));

/** One code of each error class, with the exit code @lake/cli's describeError (or the app's) gives it. */
const CASES: Readonly<Record<string, { code: string; exit: number }>> = {
  AdaptersError: { code: "UnknownRuntime", exit: EXIT.usage },
  ChainError: { code: "Fork", exit: EXIT.corrupt },
  CliError: { code: "Usage", exit: EXIT.usage },
  EventsError: { code: "NewerRollup", exit: EXIT.refused },
  LayoutError: { code: "Io", exit: EXIT.store },
  RedactError: { code: "KeyCorrupt", exit: EXIT.corrupt },
  SegmentError: { code: "ReadFailed", exit: EXIT.corrupt },
  StoreError: { code: "Locked", exit: EXIT.locked },
  WalError: { code: "NewerWriter", exit: EXIT.refused },
  ReaderError: { code: "NotFound", exit: EXIT.notFound },
};

type Module = Record<string, unknown>;
type ErrorClass = new (code: string, message: string, options?: { data?: object; cause?: unknown }) => Error & { code: string; data: object };
type Guard = (e: unknown, code?: string) => boolean;

interface Copy {
  /** Each error class name with its class and guard, from this install's copy of its package. */
  readonly classes: Map<string, { cls: ErrorClass; guard: Guard; pkg: string }>;
  readonly errors: { isLakeError: (e: unknown) => boolean; brandOf: (e: unknown) => string | undefined; LakeError: ErrorClass };
  readonly describeError: (e: unknown) => { message: string; code: number };
}

async function install(label: string): Promise<Copy> {
  const nodeModules = join(tempDir(label), "node_modules");
  const reader = installBuild(app, nodeModules);
  const installed: [string, string][] = [["lake-reader", reader]];
  for (const name of lakePackages) installed.push([name, installBuild(realpathSync(join(app, "node_modules", name)), nodeModules)]);
  const classes = new Map<string, { cls: ErrorClass; guard: Guard; pkg: string }>();
  for (const [pkg, dir] of installed) {
    const mod = await importFrom<Module>(dir, "dist/index.js");
    for (const [name, value] of Object.entries(mod)) {
      const m = /^is(\w+Error)$/.exec(name);
      if (m === null || typeof value !== "function" || typeof mod[m[1]!] !== "function") continue;
      classes.set(m[1]!, { cls: mod[m[1]!] as ErrorClass, guard: value as Guard, pkg });
    }
  }
  const errors = await importFrom<Copy["errors"]>(join(nodeModules, "@lake/errors"), "dist/index.js");
  const { describeError } = await importFrom<{ describeError: Copy["describeError"] }>(reader, "dist/internal/errors.js");
  return { classes, errors, describeError };
}

describe("error brands across two builds of every package", async () => {
  const a = await install("brands-a");
  const b = await install("brands-b");

  it("every package's one error class is found in both copies", () => {
    expect([...a.classes.keys()].sort()).toEqual(Object.keys(CASES).sort());
    expect([...b.classes.keys()].sort()).toEqual(Object.keys(CASES).sort());
    expect(a.errors.LakeError).not.toBe(b.errors.LakeError);
  });

  for (const [name, { code, exit }] of Object.entries(CASES)) {
    it(`${name}: copy B's guards and describeError know copy A's error`, () => {
      const ca = a.classes.get(name)!;
      const cb = b.classes.get(name)!;
      const cause = new Error("underneath");
      const e = new ca.cls(code, `${name}.bin: what went wrong`, { cause });
      // Two distinct copies, each built on its own install's @lake/errors.
      expect(ca.cls).not.toBe(cb.cls);
      expect(e).toBeInstanceOf(a.errors.LakeError);
      expect(e).not.toBeInstanceOf(cb.cls);
      expect(e).not.toBeInstanceOf(b.errors.LakeError);
      expect(e.name).toBe(name);
      expect(e.code).toBe(code);
      expect(e.cause).toBe(cause);
      expect(cb.guard(e)).toBe(true);
      expect(cb.guard(e, code)).toBe(true);
      expect(cb.guard(e, "NoSuchCode")).toBe(false);
      expect(b.errors.isLakeError(e)).toBe(true);
      expect(b.errors.brandOf(e)).toBe(`${ca.pkg}/${name}`);
      for (const [other, { guard }] of b.classes) if (other !== name) expect(guard(e), `${other} guard`).toBe(false);
      expect(b.describeError(e)).toEqual({ message: e.message, code: exit });
    });
  }

  it("an error that only looks like a lake error passes no guard", () => {
    const lookalike = Object.assign(new Error("x.bin: bad"), { name: "StoreError", code: "Locked", data: {} });
    for (const { guard } of b.classes.values()) expect(guard(lookalike)).toBe(false);
    expect(b.errors.isLakeError(lookalike)).toBe(false);
    expect(b.describeError(lookalike)).toEqual({ message: "internal error: x.bin: bad", code: EXIT.internal });
  });
});

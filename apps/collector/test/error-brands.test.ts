// lake-collector's error guard across two real builds: the built app (with every package it uses)
// is installed into two node_modules folders; an error made by copy A's CollectorError passes copy
// B's guard and gets copy B's exit code for its code, though `instanceof` across copies is false.
import { afterAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { EXIT } from "@lake/cli";
import { importFrom, installBuild } from "@lake/tooling/copies";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import type * as Errors from "../src/internal/errors.js";

afterAll(cleanupTempDirs);
const app = fileURLToPath(new URL("..", import.meta.url));
const copy = (label: string) => importFrom<typeof Errors>(installBuild(app, join(tempDir(label), "node_modules")), "dist/internal/errors.js");

describe("CollectorError across two builds", async () => {
  const a = await copy("collector-brands-a");
  const b = await copy("collector-brands-b");

  it("copy B's guard knows copy A's error and its exit code", () => {
    expect(a.CollectorError).not.toBe(b.CollectorError);
    const cause = new Error("EACCES");
    const e = new a.CollectorError("Locked", "/r/.lock: held by pid 7", { cause });
    expect(e).not.toBeInstanceOf(b.CollectorError);
    expect(b.isCollectorError(e)).toBe(true);
    expect(b.isCollectorError(e, "Locked")).toBe(true);
    expect(b.isCollectorError(e, "Io")).toBe(false);
    expect([e.name, e.code, e.message, e.cause]).toEqual(["CollectorError", "Locked", "/r/.lock: held by pid 7", cause]);
    expect(b.EXIT_CODES[e.code]).toBe(EXIT.locked);
    expect(b.describeError(e)).toEqual({ message: "/r/.lock: held by pid 7", code: EXIT.locked });
    expect(b.isCollectorError(Object.assign(new Error("x"), { name: "CollectorError", code: "Locked" }))).toBe(false);
  });
});

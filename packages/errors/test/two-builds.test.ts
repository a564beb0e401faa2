// The brand guard across two real builds: this package is copied into two node_modules folders and
// both copies are imported, so each has its own LakeError class; an error made with copy A's class
// must be recognised by copy B's guards, though `instanceof` across the copies is false.
import { afterAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { importFrom, installBuild } from "@lake/tooling/copies";
import type * as Errors from "../src/index.js";

const here = fileURLToPath(new URL("..", import.meta.url));
afterAll(cleanupTempDirs);

async function copy(label: string): Promise<typeof Errors> {
  return importFrom<typeof Errors>(installBuild(here, join(tempDir(label), "node_modules")), "dist/index.js");
}

describe("@lake/errors across two builds", async () => {
  const a = await copy("errors-a");
  const b = await copy("errors-b");
  // A package's error class, defined once on each copy's defineError, as every package defines its own.
  type Code = "NotFound" | "Corrupt";
  type Data = Errors.ErrorDataMap<Code, { file?: string }>;
  const classOn = (errors: typeof Errors) => class ThingError<C extends Code = Code> extends errors.defineError<Code, Data>("@example/thing/ThingError")<C> {};
  const ThingA = classOn(a);
  const ThingB = classOn(b);

  it("the copies are distinct modules: instanceof does not cross them", () => {
    expect(a.LakeError).not.toBe(b.LakeError);
    const e = new ThingA("Corrupt", "t.bin: bad digest");
    expect(e).toBeInstanceOf(a.LakeError);
    expect(e).not.toBeInstanceOf(b.LakeError);
    expect(e).not.toBeInstanceOf(ThingB);
  });

  it("copy B's guards recognise copy A's error, by brand and by code", () => {
    const e = new ThingA("Corrupt", "t.bin: bad digest", { data: { file: "t.bin" } });
    const isThingB = b.brandGuard<InstanceType<typeof ThingB>, Data>(ThingB.brand);
    expect(b.isLakeError(e)).toBe(true);
    expect(b.brandOf(e)).toBe("@example/thing/ThingError");
    expect(isThingB(e)).toBe(true);
    expect(isThingB(e, "Corrupt")).toBe(true);
    expect(isThingB(e, "NotFound")).toBe(false);
    expect(b.brandGuard("@example/other/OtherError")(e)).toBe(false);
  });

  it("the shape: name from the brand, code, typed data, ES2022 cause only when given", () => {
    const cause = new Error("EIO");
    const e = new ThingA("NotFound", "t.bin: no such file", { data: { file: "t.bin" }, cause });
    expect(e.name).toBe("ThingError");
    expect(ThingA.name).toBe("ThingError");
    expect(ThingA.brand).toBe("@example/thing/ThingError");
    expect(e.code).toBe("NotFound");
    expect(e.data).toEqual({ file: "t.bin" });
    expect(e.cause).toBe(cause);
    const bare = new ThingB("Corrupt", "t.bin: bad digest");
    expect(bare.data).toEqual({});
    expect("cause" in bare).toBe(false);
    expect(String(bare)).toBe("ThingError: t.bin: bad digest");
  });

  it("no other value passes a guard", () => {
    const stamped = Object.assign(new Error("x"), { code: "Corrupt" });
    for (const v of [stamped, null, undefined, "ThingError", { code: "Corrupt", name: "ThingError" }]) {
      expect(b.isLakeError(v)).toBe(false);
      expect(b.brandOf(v)).toBeUndefined();
      expect(b.brandGuard("@example/thing/ThingError")(v)).toBe(false);
    }
  });
});

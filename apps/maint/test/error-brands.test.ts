// lake-maint's error guard across two real builds: the built app (with every package it uses) is
// installed into two node_modules folders; an error made by copy A's MaintError passes copy B's
// guard and gets copy B's exit code for its code, though `instanceof` across copies is false.
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

describe("MaintError across two builds", async () => {
  const a = await copy("maint-brands-a");
  const b = await copy("maint-brands-b");

  it("copy B's guard and describeError know copy A's error", () => {
    expect(a.MaintError).not.toBe(b.MaintError);
    const cause = new Error("412");
    const e = new a.MaintError("Held", "lease maint/compact held by host-b", { data: { key: "_leases/maint/compact.json", store: "s3://b" }, cause });
    expect(e).not.toBeInstanceOf(b.MaintError);
    expect(b.isMaintError(e)).toBe(true);
    expect(b.isMaintError(e, "Held")).toBe(true);
    expect(b.isMaintError(e, "Corrupt")).toBe(false);
    expect([e.name, e.code, e.data.key, e.cause]).toEqual(["MaintError", "Held", "_leases/maint/compact.json", cause]);
    expect(b.describeError(e)).toEqual({ message: "lease maint/compact held by host-b", code: EXIT.locked });
    expect(b.isMaintError(Object.assign(new Error("x"), { name: "MaintError", code: "Held" }))).toBe(false);
  });
});

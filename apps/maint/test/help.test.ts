import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const bin = fileURLToPath(new URL("../bin/lake-maint.js", import.meta.url));

describe("lake-maint bin", () => {
  it("runs as node <bin> and answers --help", () => {
    const out = execFileSync(process.execPath, [bin, "--help"], { encoding: "utf8" });
    expect(out).toMatch(/^lake-maint/);
  });
});

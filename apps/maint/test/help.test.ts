import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { documentedStorePlaces } from "@lake/cli/testing";
import { describe, expect, it } from "vitest";

const bin = fileURLToPath(new URL("../bin/lake-maint.js", import.meta.url));

describe("lake-maint bin", () => {
  it("runs as node <bin> and answers --help", () => {
    const out = execFileSync(process.execPath, [bin, "--help"], { encoding: "utf8" });
    expect(out).toMatch(/^lake-maint/);
  });

  it("its help and README state the default fleet store @lake/layout resolves (and the old one it moved from)", () => {
    const { store: dflt, legacy } = documentedStorePlaces();
    expect(dflt).toBe("~/.local/share/lake/fleet");
    const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");
    expect(readme).toContain(dflt);
    expect(readme).toContain(legacy);
    for (const args of [["--help"]]) expect(execFileSync(process.execPath, [bin, ...args], { encoding: "utf8" })).toContain(dflt);
  });
});

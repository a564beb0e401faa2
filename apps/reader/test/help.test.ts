import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { documentedStorePlaces } from "@lake/cli/testing";
import { describe, expect, it } from "vitest";

const bin = fileURLToPath(new URL("../bin/lake-reader.js", import.meta.url));

describe("lake-reader bin", () => {
  it("runs as node <bin> and answers --help", () => {
    const out = execFileSync(process.execPath, [bin, "--help"], { encoding: "utf8" });
    expect(out).toMatch(/^lake-reader/);
  });

  it("its help and README state the default fleet store @lake/layout resolves (and the old one it moved from)", () => {
    const { store: dflt, legacy } = documentedStorePlaces();
    expect(dflt).toBe("~/.local/share/lake/fleet");
    const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");
    expect(readme).toContain(dflt);
    expect(readme).toContain(legacy);
    for (const args of [["--help"], ["sessions", "--help"]]) expect(execFileSync(process.execPath, [bin, ...args], { encoding: "utf8" })).toContain(dflt);
  });

  it("the README's bench table has as many runs as its text says", () => {
    const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");
    const words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
    const said = /medians of 3, (\w+) runs of the bench/.exec(readme)?.[1];
    const header = readme.split("\n").find((l) => l.startsWith("| | run 1 |"));
    expect(said).toBeDefined();
    expect(header).toBeDefined();
    expect(words.indexOf(said!)).toBe(header!.split("|").filter((c) => /^ run \d+ $/.test(c)).length);
  });
});

import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
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

  it("the README states the size of the built web UI (kB of 1000 bytes, rounded; gzip -9)", () => {
    const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");
    const said = /Bundle: \*\*(\d+) kB of JavaScript \((\d+) kB gzipped\) and (\d+) kB of CSS \((\d+) kB gzipped\)\*\*/.exec(readme);
    expect(said).not.toBeNull();
    const assets = fileURLToPath(new URL("../dist/web/assets/", import.meta.url));
    const sizes = (ext: string) => {
      const files = readdirSync(assets).filter((f) => f.endsWith(ext));
      expect(files.length).toBeGreaterThan(0);
      const bodies = files.map((f) => readFileSync(join(assets, f)));
      const kb = (n: number) => String(Math.round(n / 1000));
      return [kb(bodies.reduce((n, b) => n + b.length, 0)), kb(bodies.reduce((n, b) => n + gzipSync(b, { level: 9 }).length, 0))];
    };
    expect(said!.slice(1)).toEqual([...sizes(".js"), ...sizes(".css")]);
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

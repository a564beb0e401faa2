// Docs that must not drift from the code: the sample corpus's SOURCES.md against the files shipped,
// turbo's test inputs against what these tests read, and the default fleet store in help and README.
import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { documentedStorePlaces } from "@lake/cli/testing";
import { BIN, SAMPLES, walk } from "./helpers.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

describe("docs agree with the code", () => {
  it("samples/SOURCES.md lists exactly the files shipped, with their sizes", () => {
    const rows = readFileSync(join(SAMPLES, "SOURCES.md"), "utf8")
      .split("\n")
      .filter((l) => /^\| [^-| ][^|]* \| \d+ \|/.test(l))
      .map((l) => l.split("|").map((c) => c.trim()))
      .map((c) => [c[1]!, Number(c[2])] as const);
    const shipped = walk(SAMPLES)
      .map((f) => relative(SAMPLES, f))
      .filter((f) => f !== "SOURCES.md")
      .map((f) => [f, statSync(join(SAMPLES, f)).size] as const);
    expect(new Map(rows)).toEqual(new Map(shipped));
    expect(rows.length).toBe(shipped.length);
  });

  it("turbo's test inputs include samples/**, which these tests read", () => {
    const turbo = JSON.parse(readFileSync(join(REPO, "turbo.json"), "utf8")) as { tasks: { test: { inputs: string[] } } };
    expect(turbo.tasks.test.inputs).toContain("$TURBO_ROOT$/samples/**");
    expect(SAMPLES.startsWith(join(REPO, "samples"))).toBe(true);
  });

  it("push --help and the README state the default fleet store @lake/layout resolves, and the old place it moves from", () => {
    const { store: dflt, legacy } = documentedStorePlaces();
    expect(dflt).toBe("~/.local/share/lake/fleet");
    const help = execFileSync(process.execPath, [BIN, "push", "--help"], { encoding: "utf8" }).replace(/\s+/g, " ");
    expect(help).toContain(dflt);
    expect(help).toContain(legacy);
    const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");
    const row = readme.split("\n").find((l) => l.startsWith("| fleet store |"));
    expect(row).toContain(dflt);
    expect(readme).toContain(`mv ${legacy} ${dflt}`);
  });
});

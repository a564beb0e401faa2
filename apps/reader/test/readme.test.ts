// The root README's user-facing claims against the code: the environment variables it lists are the
// ones the apps and packages read, the config keys are the schema's, the default places are
// @lake/layout's, the service unit paths are the ones `service install` writes, and the two commands
// at the top are the ones run.sh takes. (install.test.ts runs its quick start from PATH.)
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { defaultLocalRoot, defaultReaderCache, defaultStoreUrl, isLayoutError, readConfig } from "@lake/layout/defaults";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";

afterAll(cleanupTempDirs);

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const README = readFileSync(join(REPO, "README.md"), "utf8");
const COLLECTOR = join(REPO, "apps", "collector", "bin", "lake-collector.js");

/** The rows of the README table under `heading` (first cell of each row). */
function firstCells(heading: string): string[] {
  const section = README.slice(README.indexOf(`## ${heading}\n`));
  const table = section.slice(0, section.indexOf("\n## ", 5)).split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("|---"));
  return table.slice(1).map((l) => l.split("|")[1]!.trim());
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith(".ts") ? [p] : [];
  });
}

describe("the root README agrees with the code", () => {
  it("lists every LAKE_* variable the apps and packages read, and each variable it lists is read somewhere", () => {
    const src = ["apps", "packages"].flatMap((d) => readdirSync(join(REPO, d)).map((n) => join(REPO, d, n, "src"))).flatMap((d) => {
      try {
        return sourceFiles(d);
      } catch {
        return [];
      }
    });
    const text = src.map((f) => readFileSync(f, "utf8")).join("\n");
    const read = new Set([...text.matchAll(/env(?:\.|\[")(LAKE_[A-Z_]+)/g)].map((m) => m[1]!).filter((v) => !/^LAKE_(TEST|MAINT_TEST)_/.test(v) && v !== "LAKE_MAINT_TEST_HOOK"));
    const listed = firstCells("Environment variables").flatMap((c) => [...c.matchAll(/`([A-Z_0-9]+)`/g)].map((m) => m[1]!));
    expect(new Set(listed.filter((v) => v.startsWith("LAKE_")))).toEqual(read);
    for (const v of listed) expect(text.includes(v) || v === "NO_COLOR" || v === "AWS_PROFILE", v).toBe(true);
  });

  it("names the config file's keys exactly as the schema allows them", () => {
    const keys = firstCells("Config file").map((c) => c.replaceAll("`", ""));
    const xdg = tempDir("readme-config");
    mkdirSync(join(xdg, "lake"));
    writeFileSync(join(xdg, "lake", "config.json"), JSON.stringify({ nope: 1 }));
    let message = "";
    try {
      readConfig({ XDG_CONFIG_HOME: xdg }, "/home/u");
    } catch (e) {
      expect(isLayoutError(e, "InvalidConfig")).toBe(true);
      message = (e as Error).message;
    }
    const allowed = /\(allowed: ([^)]+)\)/.exec(message)![1]!.split(", ");
    expect(keys).toEqual(allowed);
    // The example in the README is a valid file.
    const example = /## Config file[\s\S]*?```json\n([\s\S]*?)```/.exec(README)![1]!;
    const ok = tempDir("readme-config-ok");
    mkdirSync(join(ok, "lake"));
    writeFileSync(join(ok, "lake", "config.json"), example);
    expect(Object.keys(readConfig({ XDG_CONFIG_HOME: ok }, "/home/u")).sort()).toEqual([...allowed].sort());
  });

  it("states the default places @lake/layout resolves and the unit files service install writes", () => {
    const home = "/home/u";
    const tilde = (p: string) => p.replace(home, "~");
    const rows = README.slice(README.indexOf("## Where data lives")).split("\n");
    const row = (start: string) => rows.find((l) => l.startsWith(`| ${start}`)) ?? "";
    expect(row("local storage root")).toContain(`\`${tilde(defaultLocalRoot({}, home))}\``);
    expect(row("fleet store")).toContain(`\`${tilde(fileURLToPath(defaultStoreUrl({}, home)))}\``);
    expect(row("reader cache")).toContain(`\`${tilde(defaultReaderCache({}, home))}\``);
    for (const platform of ["linux", "darwin"]) {
      const r = spawnSync(process.execPath, [COLLECTOR, "service", "install", "--platform", platform, "--print", "--json"], { encoding: "utf8", env: { PATH: process.env.PATH, HOME: home } });
      expect(r.status, r.stderr).toBe(0);
      const file = tilde((JSON.parse(r.stdout) as { file: string }).file);
      expect(row("service unit")).toContain(`\`${file}\``);
    }
  });

  it("keeps run.sh demo and run.sh test as its first commands, and run.sh takes exactly those", () => {
    const first = /```sh\n([\s\S]*?)```/.exec(README)![1]!.trim().split("\n").map((l) => l.replace(/\s+#.*$/, ""));
    expect(first).toEqual(["bash tooling/scripts/run.sh demo", "bash tooling/scripts/run.sh test"]);
    expect(README.indexOf("run.sh demo")).toBeLessThan(README.indexOf("## Quick start on your machine"));
    const usage = spawnSync("bash", [join(REPO, "tooling", "scripts", "run.sh")], { encoding: "utf8" });
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain("run.sh demo|test");
  });
});

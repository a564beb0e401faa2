// The bin runs lake-collector from its bundle (dist/bin, rolldown with code splitting; README
// "Start-up"): a collect and a push load the collector and every @lake package it uses from a few
// bundle files instead of one module each; the third-party packages the bundle leaves out (DuckDB's
// and the AWS SDK's) load from node_modules as before.
import { afterAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { loadedModules, MODULES_IMPORT } from "@lake/tooling/modules";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { BIN, claudeSessions, runCliSync } from "./helpers.js";

afterAll(cleanupTempDirs);

const APP = pathToFileURL(fileURLToPath(new URL("..", import.meta.url))).href;
const BUNDLE = `${APP}dist/bin/`;
const CLI = fileURLToPath(new URL("../dist/cli.js", import.meta.url));

/** Run the bin (or, `unbundled`, tsc's dist/cli.js with the same arguments) with the module log. */
function run(args: readonly string[], home: string, unbundled = false): { files: string[]; modules: string[] } {
  const entry = unbundled ? ["--input-type=module", "-e", `const { main } = await import(${JSON.stringify(pathToFileURL(CLI).href)}); process.exitCode = await main(process.argv.slice(1));`] : [BIN];
  const r = spawnSync(process.execPath, ["--import", MODULES_IMPORT, ...entry, ...args], { env: { ...process.env, HOME: home }, encoding: "utf8" });
  const { files, modules, stderr } = loadedModules(r.stderr);
  expect(r.status, stderr).toBe(0);
  return { files, modules };
}

/** The workspace modules (tsc's output, not bundle files) among `modules`, as `<package>/dist/…`. */
const lakeModules = (modules: readonly string[]) => new Set(modules.filter((u) => /\/(packages|apps)\/[^/]+\/dist\/(?!bin\/)/.test(u)).map((u) => u.replace(/.*\/(packages|apps)\//, "")));

describe("lake-collector's bundle", () => {
  it("a collect and a push load the collector and the @lake packages from dist/bin only, holding the modules the unbundled build loads (less what tree-shaking drops)", () => {
    const dir = tempDir("collector-bundle");
    const { projects } = claudeSessions(join(dir, "vendor"), 3, 5, 40);
    const home = join(dir, "home");
    const steps = (k: string) => [
      ["collect", "--root", join(dir, `root-${k}`), "--sources-only", "--source", `claude-code=${projects}`],
      ["push", "--root", join(dir, `root-${k}`), "--store", pathToFileURL(join(dir, `fleet-${k}`)).href, "--agent", "a1"],
    ];
    const unbundled = steps("u").map((args) => run(args, home, true));
    steps("b").forEach((args, i) => {
      const { files, modules } = run(args, home);
      const ours = files.filter((u) => u.startsWith(APP));
      // Every file of the collector it loads is a bundle file: none of tsc's own output.
      expect(ours.length).toBeGreaterThan(0);
      expect(ours.filter((u) => !u.startsWith(BUNDLE) && !u.startsWith(`${APP}bin/`))).toEqual([]);
      // No workspace package loads its own files.
      expect(files.filter((u) => /\/packages\/[^/]+\/dist\//.test(u))).toEqual([]);
      // The bundle files hold modules the unbundled build loads for the same command (more of them than files), and no other.
      const held = lakeModules(modules);
      const plain = lakeModules(unbundled[i]!.modules);
      expect(held.has(`collector/dist/internal/commands/${args[0]}.js`)).toBe(true);
      expect([...held].filter((m) => !plain.has(m))).toEqual([]);
      expect(held.size).toBeGreaterThan(ours.length);
      expect(held.size).toBeGreaterThan(0.9 * plain.size);
    });
  });

  it("packages the bundle loads at run time through createRequire (DuckDB, the S3 client) resolve from the bundle's place; the config file needs none", () => {
    // A bundled module's createRequire(import.meta.url) resolves from dist/bin/, not from its own
    // package: lake-collector depends on what they require, or an installed bin fails there.
    // NODE_PATH cleared: pnpm's bin shims set it to the workspace's hidden hoist, where any
    // package resolves.
    const dir = tempDir("collector-bundle-config");
    const config = join(dir, "xdg");
    mkdirSync(join(config, "lake"), { recursive: true });
    writeFileSync(join(config, "lake", "config.json"), JSON.stringify({ root: join(dir, "root-from-config") }));
    const { projects } = claudeSessions(join(dir, "vendor"), 1, 2, 10);
    const r = runCliSync(["collect", "--sources-only", "--source", `claude-code=${projects}`], { HOME: join(dir, "home"), XDG_CONFIG_HOME: config, NODE_PATH: "" });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(dir, "root-from-config"))).toBe(true);
    // push writes its segment with DuckDB, required from the bundle's place too.
    const push = runCliSync(["push", "--store", pathToFileURL(join(dir, "fleet")).href, "--agent", "a1", "--json"], { HOME: join(dir, "home"), XDG_CONFIG_HOME: config, NODE_PATH: "" });
    expect(push.code, push.stderr).toBe(0);
    expect((JSON.parse(push.stdout) as { segments: number }).segments).toBeGreaterThan(0);
    writeFileSync(join(config, "lake", "config.json"), JSON.stringify({ root: 7 }));
    const bad = runCliSync(["collect", "--sources-only", "--source", `claude-code=${projects}`], { HOME: join(dir, "home"), XDG_CONFIG_HOME: config, NODE_PATH: "" });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain(`${join(config, "lake", "config.json")}: root:`);
    // At the versions the packages that require them pin: one copy of each installed, not two.
    const deps = (path: string) => (JSON.parse(readFileSync(fileURLToPath(new URL(path, import.meta.url)), "utf8")) as { dependencies: Record<string, string> }).dependencies;
    const ours = deps("../package.json");
    const owners = { layout: ["@aws-sdk/client-s3"], segments: ["@duckdb/node-api", "@duckdb/node-bindings"] };
    for (const [owner, names] of Object.entries(owners)) {
      const theirs = deps(`../../../packages/${owner}/package.json`);
      for (const name of names) expect(ours[name], name).toBe(theirs[name]);
    }
  });
});

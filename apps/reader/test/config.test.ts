// The optional config file ($XDG_CONFIG_HOME/lake/config.json) through the three real programs:
// flags > environment > config file > built-in defaults, and a bad file refused by each app with
// exit 2 and one line naming the file. (@lake/layout's test/config.test.ts covers the order unit
// by unit.)
import { afterAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { run } from "./support/run.js";

afterAll(cleanupTempDirs);

const COLLECTOR = fileURLToPath(new URL("../../collector/bin/lake-collector.js", import.meta.url));
const MAINT = fileURLToPath(new URL("../../maint/bin/lake-maint.js", import.meta.url));
const SAMPLES = fileURLToPath(new URL("../../../samples/claude/projects", import.meta.url));

function bin(file: string, args: string[], env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, [file, ...args], { encoding: "utf8", env: { PATH: process.env.PATH, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true", ...env } });
}

describe("config file through the apps", () => {
  const dir = tempDir("reader-config");
  const home = join(dir, "home");
  cpSync(SAMPLES, join(home, ".claude", "projects"), { recursive: true });
  const xdg = join(dir, "xdg");
  mkdirSync(join(xdg, "lake"), { recursive: true });
  const fileRoot = join(dir, "root-file");
  const fileStore = join(dir, "fleet-file");
  writeFileSync(join(xdg, "lake", "config.json"), JSON.stringify({ root: fileRoot, store: pathToFileURL(fileStore).href, reader_cache: join(dir, "cache-file"), agent: "from-file" }));
  const env = { HOME: home, XDG_CONFIG_HOME: xdg };

  it("collect, push and the reader follow the file; the environment beats it; a flag beats both", async () => {
    const c = bin(COLLECTOR, ["collect"], env);
    expect(c.status, c.stderr).toBe(0);
    expect(existsSync(join(fileRoot, "collector.state"))).toBe(true);
    const p = bin(COLLECTOR, ["push"], env);
    expect(p.status, p.stderr).toBe(0);
    expect(existsSync(join(fileStore, "fleet.json"))).toBe(true);
    const agents = readdirSync(join(fileStore, "sessions"), { recursive: true }).map(String).filter((k) => /(^|\/)agent=[^/]+$/.test(k));
    expect(new Set(agents.map((k) => k.split("agent=")[1]))).toEqual(new Set(["from-file"]));

    const viaFile = await run(["usage", "daily", "--json"], env);
    expect(viaFile.code, viaFile.err).toBe(0);
    expect(viaFile.out).toMatch(/"total_tokens":\s*[1-9]/);
    expect(existsSync(join(dir, "cache-file"))).toBe(true);
    const explicit = await run(["usage", "daily", "--json", "--store", pathToFileURL(fileStore).href, "--cache", join(dir, "cache-flag")], { HOME: home });
    expect(JSON.parse(explicit.out)).toEqual(JSON.parse(viaFile.out));

    // env > file: LAKE_STORE names another store; a flag names a third.
    const envStore = join(dir, "fleet-env");
    const flagStore = join(dir, "fleet-flag");
    const e = bin(COLLECTOR, ["push"], { ...env, LAKE_STORE: pathToFileURL(envStore).href });
    expect(e.status, e.stderr).toBe(0);
    expect(existsSync(join(envStore, "fleet.json"))).toBe(true);
    const f = bin(COLLECTOR, ["push", "--store", pathToFileURL(flagStore).href], { ...env, LAKE_STORE: pathToFileURL(envStore).href });
    expect(f.status, f.stderr).toBe(0);
    expect(existsSync(join(flagStore, "fleet.json"))).toBe(true);
    // LAKE_ROOT beats the file's root: a collect there starts a second root.
    const envRoot = join(dir, "root-env");
    const r = bin(COLLECTOR, ["collect"], { ...env, LAKE_ROOT: envRoot });
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(join(envRoot, "collector.state"))).toBe(true);
  });

  it("a bad file: each app exits 2 with one line naming the file and the key", async () => {
    const badXdg = join(dir, "bad");
    mkdirSync(join(badXdg, "lake"), { recursive: true });
    const file = join(badXdg, "lake", "config.json");
    writeFileSync(file, JSON.stringify({ root: "relative/dir" }));
    const badEnv = { HOME: home, XDG_CONFIG_HOME: badXdg };
    const results = [
      { app: "lake-collector", ...pick(bin(COLLECTOR, ["status"], badEnv)) },
      { app: "lake-maint", ...pick(bin(MAINT, ["gc"], badEnv)) },
      { app: "lake-reader", ...(await run(["usage", "daily"], badEnv)) },
    ];
    for (const r of results) {
      expect(r.code, `${r.app}: ${r.err}`).toBe(2);
      const lines = r.err.trimEnd().split("\n");
      expect(lines, r.app).toHaveLength(1);
      expect(lines[0], r.app).toMatch(new RegExp(`^${r.app}( \\w+)?: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: root: expected an absolute path or ~/…$`));
    }
  });
});

function pick(r: ReturnType<typeof spawnSync>): { code: number | null; err: string } {
  return { code: r.status, err: String(r.stderr) };
}

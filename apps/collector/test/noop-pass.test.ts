// A pass costs what changed: over many unchanged sessions, `collect` opens nothing of a session (each
// source's cursor is checked by a stat against the one its mark in pass.state took; no lock, no
// session.state, no index, no chain, no source file), and
// `push` opens nothing of a session (index/index.state is stat'ed against the stamp push.state took
// with its watermark), and asks the fleet store nothing; after appending to 10 sessions, only those sessions' directories, indexes
// and chains are touched, and only their segments are written. Opens are counted in the real
// collector process (a preload records every path node:fs opens, reads whole, writes or lists), not
// timed. A push with nothing to send still sweeps the scratch directories killed pushes left.
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadedModules, MODULES_IMPORT } from "@lake/tooling/modules";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { readIndex } from "@lake/store";
import { BIN, claudeSessions, runCli } from "./helpers.js";

afterAll(cleanupTempDirs);

const PRELOAD = fileURLToPath(new URL("./support/count-opens.mjs", import.meta.url));
const N = 200;

interface Open {
  how: string;
  path: string;
}

/**
 * Run the built collector with the open-counting preload and @lake/tooling/modules' import; the
 * paths it opened under `under`, and every module it loaded (ES modules and CommonJS requires).
 */
function countedCollect(args: readonly string[], env: NodeJS.ProcessEnv, out: string, under: string): { code: number | null; stdout: string; stderr: string; opens: Open[]; modules: string[] } {
  const r = spawnSync(process.execPath, ["--import", MODULES_IMPORT, "--import", PRELOAD, BIN, ...args], { env: { ...process.env, ...env, LAKE_TEST_OPENS_OUT: out }, encoding: "utf8" });
  const opens = (JSON.parse(readFileSync(out, "utf8")) as Open[]).filter((o) => o.path.startsWith(under + "/"));
  const { modules, stderr } = loadedModules(r.stderr);
  return { code: r.status, stdout: r.stdout, stderr, opens, modules };
}

/** Modules of the record schemas (zod, @lake/wal's root and its records) and of DuckDB among `modules`. */
const schemaModules = (modules: readonly string[]) => modules.filter((u) => /\/zod\/|\/wal\/dist\/index\.js$|\/wal\/dist\/internal\/records\.js$/.test(u));
const duckdbModules = (modules: readonly string[]) => modules.filter((u) => u.includes("/@duckdb/"));

describe("the module check", () => {
  it("sees @lake/segments load @duckdb/node-api through createRequire, and no DuckDB where it is not loaded", () => {
    // The built @lake/segments DuckDB loader, imported in a child; duckdb() called or not.
    const loader = fileURLToPath(new URL("../../../packages/segments/dist/internal/duckdb.js", import.meta.url));
    const run = (call: boolean) => {
      const r = spawnSync(process.execPath, ["--import", MODULES_IMPORT, "--input-type=module", "-e", `const m = await import(${JSON.stringify(loader)}); ${call ? "m.duckdb();" : ""}`], { encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      return loadedModules(r.stderr).modules;
    };
    const loaded = run(true);
    expect(loaded.some((u) => u.endsWith("/segments/dist/internal/duckdb.js"))).toBe(true);
    expect(duckdbModules(loaded).some((u) => u.endsWith("/@duckdb/node-api/lib/index.js"))).toBe(true);
    expect(duckdbModules(run(false))).toEqual([]);
  });
});

describe("a pass over unchanged sessions", { timeout: 240_000 }, () => {
  it("collect opens nothing of a session (its cursors stat'ed) and push nothing of one (its index.state stat'ed); after appending to 10 sessions, only those are opened further", async () => {
    const dir = tempDir("noop-pass");
    const { projects, files, ids } = claudeSessions(join(dir, "vendor"), N);
    const root = join(dir, "root");
    // The bin's code cache (README "Start-up") is read and written outside the directory whose opens are counted.
    const env = { HOME: join(dir, "home"), LAKE_COMPILE_CACHE: tempDir("noop-pass-compile-cache") };
    const args = ["collect", "--root", root, "--sources-only", "--source", `claude-code=${projects}`, "--json"];
    const first = await runCli(args, env);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ sessions: N, landed_files: N, rounds: N });
    const fleet = join(dir, "fleet");
    const pushArgs = ["push", "--root", root, "--store", `file://${fleet}`, "--agent", "host-n", "--json"];
    const pushed = await runCli(pushArgs, env);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(JSON.parse(pushed.stdout)).toMatchObject({ sessions: N, segments: N });

    // No-op: nothing of a session opened (its cursors stat'ed), the root's own small files, the vendor directories listed.
    const noop = countedCollect(args, env, join(dir, "opens-noop.json"), dir);
    expect(noop.code, noop.stderr).toBe(0);
    expect(JSON.parse(noop.stdout)).toMatchObject({ sessions: N, unchanged_sessions: N, landed_files: 0, records: 0, rounds: 0 });
    const inSessions = noop.opens.filter((o) => ids.some((id) => o.path.startsWith(join(root, id) + "/") || o.path === join(root, id)));
    expect(inSessions).toEqual([]);
    expect(noop.opens.filter((o) => o.path.includes("/_conversations/"))).toEqual([]);
    // Source files are looked at (stat), never opened; their directories are listed by discovery.
    expect(noop.opens.filter((o) => o.path.endsWith(".jsonl"))).toEqual([]);
    const rest = noop.opens.filter((o) => !inSessions.includes(o) && !o.path.startsWith(projects));
    // `_conversations` is listed once (which sessions have a round chain), not looked into.
    for (const o of rest) expect(o.path, JSON.stringify(o)).toMatch(new RegExp(`^${root}(/pass\\.state|/redact\\.key|/collector\\.state\\.tmp-\\d+-[0-9a-f]+|/_forget|/_hooks/spool|/_conversations)?$`));
    expect(noop.opens.filter((o) => o.path === join(root, "_conversations")).map((o) => o.how)).toEqual(["readdirSync"]);
    // A no-op pass rewrites no pass state.
    expect(noop.opens.filter((o) => o.path.includes("pass.state") && o.how !== "readFileSync")).toEqual([]);
    // It loads no record schema and no session pass (adapters, redactor, chain).
    expect(noop.modules.some((u) => u.endsWith("/packages/store/dist/pass.js"))).toBe(true);
    expect(schemaModules(noop.modules)).toEqual([]);
    expect(noop.modules.filter((u) => /\/collect-pass\.js$|\/packages\/(redact|chain)\//.test(u))).toEqual([]);
    // Nor node:crypto (nothing is hashed; random names from @lake/durable) or node:v8 (every chunk had
    // its code cache: no flags to compare). (node:fs/promises is this test's preload's.)
    expect(noop.modules.filter((u) => /^node:(crypto|v8)$/.test(u))).toEqual([]);

    // No-op push: push.state and pass.state; of a session nothing (its index.state stat'ed: no index,
    // no landed file, no cursor); nothing of the store (no fleet.json, no listing, no DuckDB: no segment written).
    const noopPush = countedCollect(pushArgs, env, join(dir, "opens-noop-push.json"), dir);
    expect(noopPush.code, noopPush.stderr).toBe(0);
    expect(JSON.parse(noopPush.stdout)).toMatchObject({ sessions: 0, segments: 0, refused: [], problems: [] });
    const pushInSessions = noopPush.opens.filter((o) => ids.some((id) => o.path.startsWith(join(root, id) + "/")));
    expect(pushInSessions).toEqual([]);
    expect(noopPush.opens.filter((o) => o.path.startsWith(fleet))).toEqual([]);
    expect(duckdbModules(noopPush.modules)).toEqual([]);
    expect(noopPush.modules.filter((u) => /\/push-send\.js$|\/packages\/segments\//.test(u))).toEqual([]);
    expect(noopPush.modules.filter((u) => /^node:(crypto|v8)$/.test(u))).toEqual([]);
    for (const o of noopPush.opens.filter((o) => !pushInSessions.includes(o))) expect(o.path, JSON.stringify(o)).toMatch(new RegExp(`^${root}(/push\\.state|/pass\\.state|/_export/\\.lock|/_forget)?$`));

    // Append a line to 10 sessions: those are taken under their locks, indexed and published; the rest stays at its cursor.
    const grown = [7, 20, 41, 63, 88, 104, 150, 171, 186, 199];
    for (const i of grown) {
      const last = JSON.parse(readFileSync(files[i]!, "utf8").trimEnd().split("\n").pop()!) as Record<string, unknown>;
      appendFileSync(files[i]!, JSON.stringify({ ...last, uuid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`, parentUuid: last.uuid, message: { role: "user", content: `appended to ${i}` }, type: "user" }) + "\n");
    }
    const inc = countedCollect(args, env, join(dir, "opens-inc.json"), dir);
    expect(inc.code, inc.stderr).toBe(0);
    expect(JSON.parse(inc.stdout)).toMatchObject({ sessions: N, unchanged_sessions: N - grown.length, landed_files: grown.length, records: grown.length, rounds: grown.length });
    const touched = new Set<string>();
    for (const o of inc.opens) {
      const m = /\/(?:_conversations\/)?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/(.*)$/.exec(o.path);
      if (!m || o.path.startsWith(projects)) continue;
      if (m[2] !== "streams/main/transcript.cursor" || o.how !== "readFileSync") touched.add(m[1]!);
    }
    expect([...touched].sort()).toEqual(grown.map((i) => ids[i]!).sort());
    // Claude Code lines are converted without the WAL decoder: no record schema (zod) is loaded.
    expect(inc.modules.some((u) => u.endsWith("/collect-pass.js"))).toBe(true);
    expect(schemaModules(inc.modules)).toEqual([]);
    for (const i of grown) expect(readIndex(root, ids[i]!)).toMatchObject({ indexedSeq: 2, derived: false });

    // The push after it: only the grown sessions' directories are read (their index.state stamps moved), and only their segments are written to the store.
    const incPush = countedCollect(pushArgs, env, join(dir, "opens-inc-push.json"), dir);
    expect(incPush.code, incPush.stderr).toBe(0);
    // It writes segments, so it loads DuckDB (the no-op push's check above can fail): the native
    // module the segment writer runs on (required directly, @lake/segments), and not node-api
    // (nothing it does reads rows back).
    expect(duckdbModules(incPush.modules).some((u) => u.endsWith("/duckdb.node"))).toBe(true);
    expect(duckdbModules(incPush.modules).some((u) => u.includes("/@duckdb/node-api/"))).toBe(false);
    expect(JSON.parse(incPush.stdout)).toMatchObject({ sessions: grown.length, segments: grown.length, rows: grown.length });
    const read = new Set<string>();
    for (const o of incPush.opens) {
      const m = /\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/(.*)$/.exec(o.path);
      if (m && o.path.startsWith(root + "/") && m[2] !== "index/index.state") read.add(m[1]!);
    }
    expect([...read].sort()).toEqual(grown.map((i) => ids[i]!).sort());
    // Under sessions/ only the grown sessions' directories are touched (each one's _SEALED asked, its new
    // segment installed there).
    const inStore = incPush.opens.filter((o) => o.path.startsWith(fleet + "/sessions/"));
    expect(new Set(inStore.map((o) => /session=([^/]+)/.exec(o.path)?.[1]))).toEqual(new Set(grown.map((i) => ids[i]!)));
    // And the pass after that is a no-op again.
    const again = await runCli(args, env);
    expect(JSON.parse(again.stdout)).toMatchObject({ unchanged_sessions: N, landed_files: 0 });
    const againPush = countedCollect(pushArgs, env, join(dir, "opens-again-push.json"), dir);
    expect(JSON.parse(againPush.stdout)).toMatchObject({ sessions: 0, segments: 0 });
    expect(againPush.opens.filter((o) => o.path.startsWith(fleet))).toEqual([]);
  });

  it("a cursor moved behind the pass state's back, a deleted index or chain, and a corrupt pass.state each send the session through a real pass", async () => {
    const dir = tempDir("noop-pass-2");
    const { projects, ids } = claudeSessions(join(dir, "vendor"), 4, 2);
    const root = join(dir, "root");
    // The bin's code cache (README "Start-up") is read and written outside the directory whose opens are counted.
    const env = { HOME: join(dir, "home"), LAKE_COMPILE_CACHE: tempDir("noop-pass-compile-cache") };
    const args = ["collect", "--root", root, "--sources-only", "--source", `claude-code=${projects}`, "--json"];
    expect((await runCli(args, env)).code).toBe(0);
    expect(JSON.parse((await runCli(args, env)).stdout)).toMatchObject({ unchanged_sessions: 4 });
    // clean deletes indexes and chains (derived): the next collect rebuilds them.
    const clean = await runCli(["clean", "--root", root, "--apply"], env);
    expect(clean.code, clean.stderr).toBe(0);
    const rebuilt = JSON.parse((await runCli(args, env)).stdout) as { unchanged_sessions: number; rounds: number };
    expect(rebuilt).toMatchObject({ unchanged_sessions: 0, rounds: 4 });
    for (const id of ids) expect(readIndex(root, id)).toMatchObject({ indexedSeq: 1, derived: false });
    // A corrupt pass.state is a cache miss: every session gets a pass, and the state is written anew.
    writeFileSync(join(root, "pass.state"), "{not json");
    expect(JSON.parse((await runCli(args, env)).stdout)).toMatchObject({ unchanged_sessions: 0, landed_files: 0 });
    expect(JSON.parse((await runCli(args, env)).stdout)).toMatchObject({ unchanged_sessions: 4 });
  });

  it("an older push.state without index.state stamps: the next push reads each index.state once and keeps its stamp; the one after opens nothing of a session", async () => {
    const dir = tempDir("noop-pass-3");
    const { projects, ids } = claudeSessions(join(dir, "vendor"), 4, 3);
    const root = join(dir, "root");
    const fleet = join(dir, "fleet");
    const env = { HOME: join(dir, "home") };
    expect((await runCli(["collect", "--root", root, "--sources-only", "--source", `claude-code=${projects}`, "--json"], env)).code).toBe(0);
    const pushArgs = ["push", "--root", root, "--store", `file://${fleet}`, "--agent", "host-n", "--json"];
    expect((await runCli(pushArgs, env)).code).toBe(0);
    // What a push before stamps wrote: the watermark without index_stamp.
    const statePath = join(root, "push.state");
    const state = JSON.parse(readFileSync(statePath, "utf8")) as { receivers: Record<string, { sessions: Record<string, Record<string, unknown>> }> };
    for (const r of Object.values(state.receivers)) for (const ss of Object.values(r.sessions)) delete ss.index_stamp;
    writeFileSync(statePath, JSON.stringify(state));
    const indexReads = (opens: Open[]) => opens.filter((o) => o.path.endsWith("/index/index.state")).map((o) => o.path.slice(root.length + 1, root.length + 37)).sort();
    const first = countedCollect(pushArgs, env, join(dir, "opens-1.json"), dir);
    expect(JSON.parse(first.stdout)).toMatchObject({ sessions: 0, segments: 0 });
    expect(indexReads(first.opens)).toEqual([...ids].sort());
    const after = JSON.parse(readFileSync(statePath, "utf8")) as typeof state;
    for (const r of Object.values(after.receivers)) for (const ss of Object.values(r.sessions)) expect(ss.index_stamp).toMatch(/^\d+:\d+:\d+:\d+$/);
    const second = countedCollect(pushArgs, env, join(dir, "opens-2.json"), dir);
    expect(JSON.parse(second.stdout)).toMatchObject({ sessions: 0, segments: 0 });
    expect(indexReads(second.opens)).toEqual([]);
  });

  it("a push with nothing to send still removes the scratch directory a killed push left (its owner proven dead), not a live one's", async () => {
    const dir = tempDir("noop-pass-4");
    const tmp = tempDir("noop-pass-4-tmp");
    const { projects } = claudeSessions(join(dir, "vendor"), 2, 4);
    const root = join(dir, "root");
    const env = { HOME: join(dir, "home"), TMPDIR: tmp };
    expect((await runCli(["collect", "--root", root, "--sources-only", "--source", `claude-code=${projects}`, "--json"], env)).code).toBe(0);
    const pushArgs = ["push", "--root", root, "--store", `file://${join(dir, "fleet")}`, "--agent", "host-n", "--json"];
    // A push killed at its first rollup upload leaves its scratch directory (segments written there).
    const killed = await runCli(pushArgs, { ...env, LAKE_TEST_KILL_AT: "push:rollup" });
    expect(killed.signal).toBe("SIGKILL");
    const left = readdirSync(tmp);
    expect(left).toEqual([expect.stringMatching(/^lake-push-/)]);
    // Its rerun sends the rest, and removes it.
    expect((await runCli(pushArgs, env)).code).toBe(0);
    expect(readdirSync(tmp)).toEqual([]);
    // One a push killed again leaves, and one a live process holds (the same prefix), before a push with nothing to send.
    const holder = (wait: boolean) =>
      spawn(process.execPath, ["--input-type=module", "-e", `import { scratchDir } from "@lake/durable"; const s = scratchDir("lake-push"); console.log(s.dir); ${wait ? "setInterval(() => {}, 1000);" : "process.kill(process.pid, 'SIGKILL');"}`], { cwd: fileURLToPath(new URL("..", import.meta.url)), env: { ...process.env, TMPDIR: tmp }, stdio: ["ignore", "pipe", "inherit"] });
    // (the live one first: taking one sweeps the dead ones)
    const live = holder(true);
    const liveDir = (await new Promise<string>((r) => live.stdout.once("data", (d: Buffer) => r(d.toString())))).trim();
    try {
      const dead = holder(false);
      await new Promise((r) => dead.on("close", r));
      expect(readdirSync(tmp)).toHaveLength(2);
      const noop = await runCli(pushArgs, env);
      expect(JSON.parse(noop.stdout)).toMatchObject({ sessions: 0, segments: 0 });
      expect(readdirSync(tmp).map((n) => join(tmp, n))).toEqual([liveDir]);
    } finally {
      live.kill("SIGKILL");
    }
  });
});

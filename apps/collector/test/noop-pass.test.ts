// A pass costs what changed: over many unchanged sessions, `collect` opens each source's cursor and
// nothing else of a session (no lock, no session.state, no index, no chain, no source file); after
// appending to a few sessions, only those sessions' directories, indexes and chains are touched.
// Opens are counted in the real collector process (a preload records every path node:fs opens,
// reads whole, writes or lists), not timed.
import { spawnSync } from "node:child_process";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
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

/** Run the built collector with the open-counting preload; the paths it opened under `under`. */
function countedCollect(args: readonly string[], env: NodeJS.ProcessEnv, out: string, under: string): { code: number | null; stdout: string; stderr: string; opens: Open[] } {
  const r = spawnSync(process.execPath, ["--import", PRELOAD, BIN, ...args], { env: { ...process.env, ...env, LAKE_TEST_OPENS_OUT: out }, encoding: "utf8" });
  const opens = (JSON.parse(readFileSync(out, "utf8")) as Open[]).filter((o) => o.path.startsWith(under + "/"));
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, opens };
}

describe("a pass over unchanged sessions", { timeout: 240_000 }, () => {
  it("opens nothing beyond the cursors; after appending to 3 sessions, only those are opened further", async () => {
    const dir = tempDir("noop-pass");
    const { projects, files, ids } = claudeSessions(join(dir, "vendor"), N);
    const root = join(dir, "root");
    const env = { HOME: join(dir, "home") };
    const args = ["collect", "--root", root, "--sources-only", "--source", `claude-code=${projects}`, "--json"];
    const first = await runCli(args, env);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ sessions: N, landed_files: N, rounds: N });

    // No-op: one cursor read per source, the root's own small files, the vendor directories listed.
    const noop = countedCollect(args, env, join(dir, "opens-noop.json"), dir);
    expect(noop.code, noop.stderr).toBe(0);
    expect(JSON.parse(noop.stdout)).toMatchObject({ sessions: N, unchanged_sessions: N, landed_files: 0, records: 0, rounds: 0 });
    const inSessions = noop.opens.filter((o) => ids.some((id) => o.path.startsWith(join(root, id) + "/") || o.path === join(root, id)));
    expect(inSessions).toHaveLength(N);
    expect(new Set(inSessions.map((o) => `${o.how} ${o.path.slice(root.length + 1 + 36)}`))).toEqual(new Set(["readFileSync /streams/main/transcript.cursor"]));
    expect(noop.opens.filter((o) => o.path.includes("/_conversations/"))).toEqual([]);
    // Source files are looked at (stat), never opened; their directories are listed by discovery.
    expect(noop.opens.filter((o) => o.path.endsWith(".jsonl"))).toEqual([]);
    const rest = noop.opens.filter((o) => !inSessions.includes(o) && !o.path.startsWith(projects));
    for (const o of rest) expect(o.path, JSON.stringify(o)).toMatch(new RegExp(`^${root}(/pass\\.state|/redact\\.key|/collector\\.state\\.tmp-\\d+|/_forget|/_hooks/spool)?$`));
    // A no-op pass rewrites no pass state.
    expect(noop.opens.filter((o) => o.path.includes("pass.state") && o.how !== "readFileSync")).toEqual([]);

    // Append a line to 3 sessions: those are taken under their locks, indexed and published; the rest stays at its cursor.
    const grown = [7, 150, 199];
    for (const i of grown) {
      const last = JSON.parse(readFileSync(files[i]!, "utf8").trimEnd().split("\n").pop()!) as Record<string, unknown>;
      appendFileSync(files[i]!, JSON.stringify({ ...last, uuid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`, parentUuid: last.uuid, message: { role: "user", content: `appended to ${i}` }, type: "user" }) + "\n");
    }
    const inc = countedCollect(args, env, join(dir, "opens-inc.json"), dir);
    expect(inc.code, inc.stderr).toBe(0);
    expect(JSON.parse(inc.stdout)).toMatchObject({ sessions: N, unchanged_sessions: N - 3, landed_files: 3, records: 3, rounds: 3 });
    const touched = new Set<string>();
    for (const o of inc.opens) {
      const m = /\/(?:_conversations\/)?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/(.*)$/.exec(o.path);
      if (!m || o.path.startsWith(projects)) continue;
      if (m[2] !== "streams/main/transcript.cursor" || o.how !== "readFileSync") touched.add(m[1]!);
    }
    expect([...touched].sort()).toEqual(grown.map((i) => ids[i]!).sort());
    for (const i of grown) expect(readIndex(root, ids[i]!)).toMatchObject({ indexedSeq: 2, derived: false });
    // And the pass after that is a no-op again.
    const again = await runCli(args, env);
    expect(JSON.parse(again.stdout)).toMatchObject({ unchanged_sessions: N, landed_files: 0 });
  });

  it("a cursor moved behind the pass state's back, a deleted index or chain, and a corrupt pass.state each send the session through a real pass", async () => {
    const dir = tempDir("noop-pass-2");
    const { projects, ids } = claudeSessions(join(dir, "vendor"), 4, 2);
    const root = join(dir, "root");
    const env = { HOME: join(dir, "home") };
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
});

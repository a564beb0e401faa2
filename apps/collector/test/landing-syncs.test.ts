// What landing costs in fsyncs and opens, counted in the real collector process (preloads record
// every fsync with the path its descriptor was opened with, and every path node:fs opens, reads
// whole or lists), not timed. A session that lands one file needs: the file (its data, then its
// directory: the barrier before the cursor), the cursor (its data; its directory once at the pass's
// end), the index (entries.bin, index.state and its directory), the round (its data and its
// directory). session.state and conversation.state are caches and are not synced.
import { spawnSync } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { readIndex, verify } from "@lake/store";
import { BIN, claudeSessions, userLine } from "./helpers.js";

afterAll(cleanupTempDirs);

const SYNCS = fileURLToPath(new URL("./support/count-syncs.mjs", import.meta.url));
const OPENS = fileURLToPath(new URL("./support/count-opens.mjs", import.meta.url));
const N = 30;
const GROWN = 10;

interface Seen {
  how: string;
  path: string;
}

/** Run the built collector with both counting preloads: its fsyncs and its opens under `root`. */
function counted(args: readonly string[], env: NodeJS.ProcessEnv, dir: string, name: string, root: string): { code: number | null; stdout: string; stderr: string; syncs: Seen[]; opens: Seen[] } {
  const syncsOut = join(dir, `${name}-syncs.json`);
  const opensOut = join(dir, `${name}-opens.json`);
  const r = spawnSync(process.execPath, ["--import", SYNCS, "--import", OPENS, BIN, ...args], { env: { ...process.env, ...env, LAKE_TEST_SYNCS_OUT: syncsOut, LAKE_TEST_OPENS_OUT: opensOut }, encoding: "utf8" });
  const under = (xs: Seen[]) => xs.filter((o) => o.path.startsWith(root + "/") || o.path === root);
  return {
    code: r.status, stdout: r.stdout, stderr: r.stderr,
    syncs: under(JSON.parse(readFileSync(syncsOut, "utf8")) as Seen[]).filter((o) => o.how === "fsync" || o.how === "fdatasync"),
    opens: under(JSON.parse(readFileSync(opensOut, "utf8")) as Seen[]),
  };
}

/** The session a path under the root belongs to (its directory or its chain), if any. */
function sessionOf(root: string, path: string): string | undefined {
  const m = new RegExp(`^${root}/(?:_conversations/)?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:/|$)`).exec(path);
  return m?.[1];
}

describe("landing's fsyncs and opens", { timeout: 240_000 }, () => {
  it("a first collect and a pass after appending to 10 sessions fsync at most 9 times and open at most 29 paths per landed session", () => {
    const dir = tempDir("landing-syncs");
    const { projects, files, ids } = claudeSessions(join(dir, "vendor"), N, 19);
    const root = join(dir, "root");
    const env = { HOME: join(dir, "home") };
    const args = ["collect", "--root", root, "--sources-only", "--source", `claude-code=${projects}`, "--json"];

    const first = counted(args, env, dir, "first", root);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ sessions: N, landed_files: N, rounds: N });
    const perSession = (xs: Seen[]) => {
      const m = new Map<string, Seen[]>();
      for (const o of xs) {
        const id = sessionOf(root, o.path);
        if (id !== undefined) m.set(id, [...(m.get(id) ?? []), o]);
      }
      return m;
    };
    // Every session: its file and directory, its cursor's data and directory, entries.bin and index.state with one
    // directory fsync for both, the round and its directory — and neither session.state nor conversation.state.
    const firstSyncs = perSession(first.syncs);
    expect(firstSyncs.size).toBe(N);
    for (const [id, xs] of firstSyncs) {
      const names = xs.map((o) =>
        o.path
          .slice(o.path.indexOf(id) + id.length + 1)
          .replace(/\.r\d{6}-[0-9a-f]{12}\.sf\.tmp-\d+-[0-9a-f]{12}$/, ".rN.sf.tmp")
          .replace(/-[0-9a-f]{12}$/, "")
          .replace(/\d{8}T\d{6}\.\d{9}Z-\d{6}/, "STAMP"),
      );
      expect(names.sort()).toEqual([
        "index", "index/.tmp-entries.bin", "index/.tmp-index.state", "rounds", "rounds/.rN.sf.tmp",
        "streams/main", "streams/main", "streams/main/.tmp-transcript-STAMP.sd", "streams/main/.tmp-transcript.cursor",
      ]);
      expect(names.some((n) => n.includes("session.state") || n.includes("conversation.state"))).toBe(false);
    }

    // Append one line to 10 sessions: only they land, each with at most 9 fsyncs (was 13) and 29 opens (was 31).
    const grown = Array.from({ length: GROWN }, (_, i) => i * 3);
    for (const i of grown) appendFileSync(files[i]!, userLine(ids[i]!, 1000 + i, `appended to ${i}`));
    const inc = counted(args, env, dir, "inc", root);
    expect(inc.code, inc.stderr).toBe(0);
    expect(JSON.parse(inc.stdout)).toMatchObject({ sessions: N, unchanged_sessions: N - GROWN, landed_files: GROWN, records: GROWN, rounds: GROWN });
    const incSyncs = perSession(inc.syncs);
    expect([...incSyncs.keys()].sort()).toEqual(grown.map((i) => ids[i]!).sort());
    for (const [id, xs] of incSyncs) expect(xs.length, `${id}: ${xs.map((o) => o.path).join(", ")}`).toBeLessThanOrEqual(9);
    // Beyond the sessions: collector.state (its data and the root) only.
    expect(inc.syncs.filter((o) => sessionOf(root, o.path) === undefined).length).toBeLessThanOrEqual(2);
    expect(inc.syncs.length).toBeLessThanOrEqual(GROWN * 9 + 2);
    // Opens in a grown session (its own directory and its chain), the source file aside.
    const incOpens = perSession(inc.opens);
    for (const i of grown) {
      const xs = incOpens.get(ids[i]!) ?? [];
      expect(xs.length, xs.map((o) => `${o.how} ${o.path}`).join("\n")).toBeLessThanOrEqual(29);
    }
    // What landed is all there and right.
    for (const i of grown) expect(readIndex(root, ids[i]!)).toMatchObject({ indexedSeq: 2, derived: false });
    expect(verify(root)).toMatchObject({ ok: true, files: N + GROWN });
  });
});

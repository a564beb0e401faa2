// Kill test: SIGKILL a real collector at 100+ durable steps of `collect` and `push`
// (LAKE_TEST_KILL_AT, src/internal/crash.ts), rerun, verify, and check the fleet it produced.
//
// Two workers run side by side, each on its own copy of the vendor tree (the bundled samples plus
// generated small Claude Code sessions), its own root and its own fleet directory. Each worker
// runs two rounds (the initial tree, then appends to existing sessions and new sessions). In a
// round, collect runs as a chain: a run is killed at a pseudo-random step, the next run is its
// rerun (and is killed again further on, so kills also land in recovery) until a run finishes by
// itself; then `verify` must exit 0. push runs the same way against the worker's fleet, and every
// seg-*.parquet is fingerprinted (SHA-256 + inode) after every run: a segment seen once must never
// change; a push that finishes leaves no scratch directory in its TMPDIR (the killed pushes' removed
// by it). At the end the fleet is read through DuckDB and compared with the adapters' own parse.
import { appendFileSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usageBySession } from "@lake/events";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { generateClaudeCorpus, rng } from "@lake/tooling/corpus";
import { addClaudeSessions, adapterRecords, adapterTotals, dedupeKey, fleetRecords, runCli, segmentFingerprints, vendorTree, walk } from "./helpers.js";

afterAll(cleanupTempDirs);

/** Small landed files, so a pass has many durable steps. */
const BUDGET = ["--max-delta-bytes", "65536"];
/**
 * Mean distance (in steps) between two kills of a collect chain, and of a push chain past the
 * work a push rerun redoes (see pushChain).
 */
const COLLECT_GAP = 100;
const PUSH_GAP = 15;
/** A session with nothing new still takes 3 steps (lock, chain lock, chain unlock). */
const NOOP_STEPS = 3;

interface Corpora {
  first: string;
  appendLines: string;
  later: string;
}
let corpora: Corpora;

beforeAll(async () => {
  const dir = tempDir("kill-corpus");
  corpora = { first: join(dir, "first"), appendLines: join(dir, "append"), later: join(dir, "later") };
  await generateClaudeCorpus({ dir: corpora.first, bytes: 720_000, sessionBytes: 2_000, seed: 11 });
  await generateClaudeCorpus({ dir: corpora.appendLines, bytes: 60_000, sessionBytes: 2_000, seed: 12 });
  await generateClaudeCorpus({ dir: corpora.later, bytes: 60_000, sessionBytes: 2_000, seed: 13 });
});

interface Worker {
  readonly name: string;
  readonly dir: string;
  readonly tree: ReturnType<typeof vendorTree>;
  readonly root: string;
  readonly fleet: string;
  readonly env: NodeJS.ProcessEnv;
  readonly next: () => number;
  /** Step name → kills there. */
  readonly killedAt: Map<string, number>;
  /** Every segment's fingerprint when first seen. */
  readonly segments: Map<string, { sha256: string; ino: number }>;
  collectKills: number;
  pushKills: number;
  runs: number;
  verifies: number;
}

function makeWorker(name: string, seed: number): Worker {
  const dir = tempDir(`kill-${name}`);
  const tree = vendorTree(join(dir, "vendor"));
  addClaudeSessions(corpora.first, tree.claude);
  return {
    name, dir, tree, root: join(dir, "root"), fleet: join(dir, "fleet"), env: { HOME: join(dir, "home"), TMPDIR: tempDir(`kill-${name}-tmp`) }, next: rng(seed),
    killedAt: new Map(), segments: new Map(), collectKills: 0, pushKills: 0, runs: 0, verifies: 0,
  };
}

function stepLines(file: string): string[] {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

function noteKill(w: Worker, steps: string[]): void {
  const last = steps[steps.length - 1] ?? "0 (none)";
  const name = last.slice(last.indexOf(" ") + 1);
  w.killedAt.set(name, (w.killedAt.get(name) ?? 0) + 1);
}

/** Every segment now present must be byte-identical (and the same inode) to when first seen. */
function checkSegments(w: Worker): void {
  for (const [path, fp] of segmentFingerprints(w.fleet)) {
    const first = w.segments.get(path);
    if (!first) w.segments.set(path, fp);
    else expect(fp, `${path} was rewritten`).toEqual(first);
  }
}

async function verifyClean(w: Worker): Promise<void> {
  const v = await runCli(["verify", "--root", w.root], w.env);
  expect(v.code, `${w.name}: verify after rerun\n${v.stdout}${v.stderr}`).toBe(0);
  w.verifies++;
}

/** collect, killed again and again until a run finishes by itself; then verify. */
async function collectChain(w: Worker): Promise<void> {
  let done = 0;
  for (let i = 0; ; i++) {
    expect(i, `${w.name}: collect chain makes no progress`).toBeLessThan(200);
    const steps = join(w.dir, `steps-${w.runs++}`);
    const killAt = NOOP_STEPS * done + 1 + Math.floor(w.next() * 2 * COLLECT_GAP);
    const r = await runCli(["collect", "--root", w.root, ...w.tree.flags, ...BUDGET, "--json"], { ...w.env, LAKE_TEST_KILL_AT: String(killAt), LAKE_TEST_STEPS: steps });
    const lines = stepLines(steps);
    // Sessions finished before the kill are no-ops (NOOP_STEPS each) for the rerun.
    done = lines.filter((l) => l.endsWith(" chain:unlocked")).length;
    if (r.signal === "SIGKILL") {
      w.collectKills++;
      noteKill(w, lines);
      continue;
    }
    expect(r.code, `${w.name}: collect rerun\n${r.stderr}`).toBe(0);
    break;
  }
  await verifyClean(w);
}

/**
 * push, killed again and again until a run finishes by itself; segments checked after every run.
 * A rerun first redoes what its killed run did after its last state save (push.state is saved
 * about once a second, so in a short run that is all it did; its uploaded segments are found under
 * their keys), so a quarter of the kills are drawn inside that redo (recovery) and the rest from 1
 * to 2 × PUSH_GAP steps past it: a run makes PUSH_GAP steps of progress on average whatever the
 * interleaving and however seldom the state is saved. Drawn from 1 to 2 × PUSH_GAP alone, a run
 * often died in its redo and a first push took some 200 runs; from 1 to 2 × (PUSH_GAP + redo), the
 * stride grew with the redo and a chain of runs that never saved ended after a few kills.
 */
async function pushChain(w: Worker): Promise<void> {
  let redo = 0;
  for (let i = 0; ; i++) {
    expect(i, `${w.name}: push chain makes no progress`).toBeLessThan(200);
    const steps = join(w.dir, `steps-${w.runs++}`);
    const killAt = redo > 0 && w.next() < 0.25 ? 1 + Math.floor(w.next() * redo) : redo + 1 + Math.floor(w.next() * 2 * PUSH_GAP);
    const r = await runCli(["push", "--root", w.root, "--store", `file://${w.fleet}`, "--agent", "host-k", "--seal-idle", "0", "--fleet-id", "fk", "--json"], {
      ...w.env,
      LAKE_TEST_KILL_AT: String(killAt),
      LAKE_TEST_STEPS: steps,
    });
    checkSegments(w);
    if (r.signal === "SIGKILL") {
      w.pushKills++;
      const lines = stepLines(steps);
      noteKill(w, lines);
      redo = lines.length - 1 - lines.findLastIndex((l) => l.endsWith(" push:state-saved"));
      continue;
    }
    expect(r.code, `${w.name}: push rerun\n${r.stderr}`).toBe(0);
    // The scratch directories of the pushes killed before it were removed by it (their owners
    // proven dead; by its sweep when it had nothing to send), and its own when it finished.
    expect(readdirSync(w.env.TMPDIR as string), `${w.name}: scratch left`).toEqual([]);
    break;
  }
  await verifyClean(w);
}

/** Round 2's new data: lines appended to existing generated sessions, and new sessions. */
function grow(w: Worker): void {
  const existing = walk(w.tree.claude).filter((f) => /\/-home-dev-project-\d\/[0-9a-f-]{36}\.jsonl$/.test(f)).sort();
  const extra = walk(join(corpora.appendLines, "projects")).sort();
  extra.forEach((src, i) => {
    const target = existing[(i * 3) % existing.length]!;
    const sid = target.slice(target.lastIndexOf("/") + 1, -".jsonl".length);
    const lines = readFileSync(src, "utf8").split("\n").filter(Boolean).map((l) => JSON.stringify({ ...JSON.parse(l), sessionId: sid }));
    appendFileSync(target, lines.join("\n") + "\n");
  });
  addClaudeSessions(corpora.later, w.tree.claude);
}

async function runWorker(w: Worker): Promise<void> {
  await collectChain(w);
  await pushChain(w);
  grow(w);
  await collectChain(w);
  await pushChain(w);
  // A further push sends nothing.
  const again = await runCli(["push", "--root", w.root, "--store", `file://${w.fleet}`, "--agent", "host-k", "--seal-idle", "0", "--json"], w.env);
  expect(again.code, again.stderr).toBe(0);
  expect(JSON.parse(again.stdout)).toMatchObject({ segments: 0, rows: 0 });
  checkSegments(w);
}

describe("kill test", () => {
  it("SIGKILL at 100+ steps of collect and push: reruns verify clean, the fleet has every record once after dedupe, no segment rewritten", { timeout: 20 * 60_000 }, async () => {
    const t0 = Date.now();
    const workers = [makeWorker("a", 101), makeWorker("b", 202)];
    await Promise.all(workers.map(runWorker));
    const elapsed = (Date.now() - t0) / 1000;

    let rawDuplicates = 0;
    for (const w of workers) {
      const rows = await fleetRecords(w.fleet);
      // The read model's dedupe: unique on (session_id, stream, record_id).
      const groups = new Map<string, typeof rows>();
      for (const r of rows) {
        const k = dedupeKey(r);
        const g = groups.get(k);
        if (g) g.push(r);
        else groups.set(k, [r]);
      }
      rawDuplicates += rows.length - groups.size;
      // A duplicate the dedupe folds away must be the same record, not two records sharing a key.
      for (const [k, g] of groups) {
        if (g.length < 2) continue;
        for (const r of g) expect({ k, hash: r.content_hash, line: r.source_line, path: r.source_path }).toEqual({ k, hash: g[0]!.content_hash, line: g[0]!.source_line, path: g[0]!.source_path });
      }
      const deduped = [...groups.values()].map((g) => g[0]!);

      const roots = { "claude-code": w.tree.claude, codex: w.tree.codex, gemini: w.tree.gemini };
      const expected = await adapterRecords(roots);
      // Every record the adapters read from the final vendor tree is in the fleet, and nothing else.
      expect(new Set(groups.keys())).toEqual(new Set(expected.map(dedupeKey)));
      expect(deduped.length).toBe(new Set(expected.map(dedupeKey)).size);
      // Every source line that yields a record landed at least once.
      const lineKey = (r: { source_path?: string | undefined; source_line?: number | undefined; source_offset?: number | undefined }) => `${r.source_path}#${r.source_line ?? r.source_offset}`;
      const fleetLines = new Set(deduped.map(lineKey));
      const missing = [...new Set(expected.map(lineKey))].filter((k) => !fleetLines.has(k));
      expect(missing).toEqual([]);
      // Usage after dedupe equals the adapters' totals.
      expect(new Map([...usageBySession(deduped)].map(([k, t]) => [k, t.usage]))).toEqual(await adapterTotals(roots));
      // Segments: every one seen is still there, unchanged.
      const now = segmentFingerprints(w.fleet);
      for (const [p, fp] of w.segments) expect(now.get(p), p).toEqual(fp);
      expect(readdirSync(join(w.fleet, "sessions")).length).toBeGreaterThan(0);

      console.log(
        `kill test worker ${w.name}: ${w.collectKills} collect kills, ${w.pushKills} push kills, ${w.runs} runs, ${w.verifies} clean verifies, ` +
          `${rows.length} fleet rows, ${rows.length - groups.size} raw duplicates before dedupe, ${deduped.length} after, ${w.segments.size} segments never rewritten`,
      );
    }
    const killed = new Map<string, number>();
    for (const w of workers) for (const [k, n] of w.killedAt) killed.set(k, (killed.get(k) ?? 0) + n);
    const collectKills = workers.reduce((a, w) => a + w.collectKills, 0);
    const pushKills = workers.reduce((a, w) => a + w.pushKills, 0);
    console.log(`kill test: ${collectKills + pushKills} kills (${collectKills} collect, ${pushKills} push), ${rawDuplicates} raw duplicates before dedupe, ${elapsed.toFixed(1)} s`);
    console.log(`kill test: killed at ${[...killed].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, n]) => `${k}×${n}`).join(", ")}`);
    expect(collectKills).toBeGreaterThanOrEqual(40);
    expect(pushKills).toBeGreaterThanOrEqual(35);
    expect(collectKills + pushKills).toBeGreaterThanOrEqual(100);
    // Kills landed at many kinds of step, push steps among them.
    expect([...killed.keys()].filter((k) => k.startsWith("push:")).length).toBeGreaterThanOrEqual(3);
    expect([...killed.keys()].filter((k) => k.startsWith("store:")).length).toBeGreaterThanOrEqual(8);
  });
});

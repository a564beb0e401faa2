// Crash test: a child collecting a generated multi-session source tree is SIGKILLed at many
// points (at its N-th durable step, and by timers); after each kill an in-process rerun completes
// and verify passes. Over all runs every source line lands at least once, and extra copies are
// only marked re-lands. fsync is off here: a SIGKILL stops the process, not the machine, so
// the page cache keeps every write and only the order of operations decides what a rerun sees.
// Size: LAKE_STORE_CRASH_RUNS child runs (default 240, in 6 epochs of 40, three epochs at a time):
// 7 sessions, 22 sources, ~300 durable steps per run; kills at steps 1..241, each step index once,
// and every 12th run by a timer. Each child is started ahead of its run (READY=1): it loads its
// modules while the test reruns and verifies the previous run, then waits for its start.
import { afterAll, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { rng } from "@lake/tooling/corpus";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { openSession, readIndex, readLanded, verify, formatProblem, type SourceRef } from "../src/index.js";
import { convert } from "./helpers.js";

afterAll(cleanupTempDirs);

const CHILD = fileURLToPath(new URL("./fixtures/collect-child.mjs", import.meta.url));
const RUNS = Number(process.env.LAKE_STORE_CRASH_RUNS ?? 240);
const MAX_DELTA = 4096;

/**
 * A child started ahead of its run: it loads its modules while the test checks the previous run,
 * then waits for `start` (the kill step, or a timer from the start) before it reads the sources.
 */
interface ReadyChild {
  start(crashAt: number | undefined, killAfterMs?: number): Promise<{ code: number | null; signal: string | null; stderr: string }>;
  /** Let a child that will not be started exit. */
  dismiss(): void;
}

function readyChild(root: string, srcRoot: string): ReadyChild {
  const child = spawn(process.execPath, [CHILD, root, srcRoot], { env: { ...process.env, MAX_DELTA: String(MAX_DELTA), FSYNC: "0", READY: "1" }, stdio: ["pipe", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin.on("error", () => {}); // a child that died before its start: its exit says so
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  return {
    async start(crashAt, killAfterMs) {
      child.stdin.end(crashAt === undefined ? "go\n" : `go ${crashAt}\n`);
      const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), killAfterMs);
      const r = await exited;
      if (timer) clearTimeout(timer);
      return { ...r, stderr };
    },
    dismiss() {
      child.stdin.end("stop\n");
    },
  };
}

function sourcesOf(srcRoot: string, session: string): Array<SourceRef & { mode: "append" | "snapshot" }> {
  const dir = join(srcRoot, session);
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const base = { path: join(dir, name), source: `${session}/${name}`, runtime: "test", adapter: "test-adapter", adapterVersion: "1" };
      const mode: "append" | "snapshot" = name.endsWith(".jsonl") ? "append" : "snapshot";
      if (name.endsWith(".jsonl")) return [{ ...base, mode, stream: name.slice(0, -6), kind: "transcript" }];
      if (name.endsWith(".meta.json")) return [{ ...base, mode, stream: name.slice(0, -10), kind: "meta" }];
      return [];
    });
}

async function rerun(root: string, srcRoot: string): Promise<number> {
  let steps = 0;
  const onStep = () => void steps++;
  for (const session of readdirSync(srcRoot).sort()) {
    const s = await openSession(root, session, { waitMs: 10_000, maxDeltaBytes: MAX_DELTA, fsync: false, logger: () => {}, onStep });
    try {
      const p = s.beginPass();
      for (const src of sourcesOf(srcRoot, session)) {
        if (src.mode === "append") await p.collectAppend(src, convert);
        else await p.collectSnapshot(src, convert);
      }
      p.pruneUnseen((source) => join(srcRoot, source));
      const sum = p.finish();
      expect(sum.conflicts, `conflicts in ${session}`).toBe(0);
    } finally {
      s.close();
    }
  }
  return steps;
}

const EPOCH_STRIDE = 1000;

it(`survives SIGKILL at ${RUNS} points: reruns complete, verify passes, every line lands, extra copies are marked re-lands`, { timeout: 1_200_000 }, async () => {
  const killPoints = new Set<string>();
  let killed = 0;
  let timedKills = 0;
  const time = { child: 0, rerun: 0, verify: 0 };
  const EPOCH = 40; // a fresh root and source tree every EPOCH runs keeps verify's cost per run bounded
  const epochs: number[] = [];
  for (let epoch = 0; epoch * EPOCH < RUNS; epoch++) epochs.push(epoch);
  // Epochs run three at a time (separate roots): a child's start-up is mostly waiting, not CPU.
  const results = [];
  for (let k = 0; k < epochs.length; k += 3) {
    results.push(...(await Promise.all(epochs.slice(k, k + 3).map((epoch) => epochRun(epoch, Math.min(EPOCH, RUNS - epoch * EPOCH))))));
  }
  for (const r of results) {
    killed += r.killed;
    timedKills += r.timedKills;
    for (const k of r.killPoints) killPoints.add(k);
    time.child += r.time.child;
    time.rerun += r.time.rerun;
    time.verify += r.time.verify;
  }
  console.log(`crash test: ${RUNS} runs, ${killed} killed (${timedKills} by timer), ${killPoints.size} distinct kill points; child ${(time.child / 1000).toFixed(1)} s, rerun ${(time.rerun / 1000).toFixed(1)} s, verify ${(time.verify / 1000).toFixed(1)} s`);
  expect(killed).toBeGreaterThanOrEqual(200);
  expect(killPoints.size).toBeGreaterThanOrEqual(200);
});

async function epochRun(epoch: number, runs: number) {
  const base = tempDir("store-crash");
  const root = join(base, "root");
  const srcRoot = join(base, "src");
  const r = rng(42 + epoch);
  const sessions = ["sess-a", "sess-b", "sess-c", "sess-d", "sess-e", "sess-f", "sess-g"];
  const streams = ["main", "agent-1", "agent-2"];
  const withId = new Set<string>();
  const noId = new Set<string>(); // marker texts of id-less lines
  const notJson = new Set<string>();
  const partial = new Map<string, string>(); // path → the rest of an unterminated line
  const hidden = new Map<string, string>(); // path → where a deleted source waits to be restored
  const metaVersions = new Map<string, string>(); // snapshot path → last content
  let n = 0;
  for (const s of sessions) mkdirSync(join(srcRoot, s), { recursive: true });
  const mutate = () => {
    for (const s of sessions) {
      for (const st of streams.slice(0, s === "sess-a" ? 3 : 2)) {
        const p = join(srcRoot, s, `${st}.jsonl`);
        if (hidden.has(p)) {
          if (r() < 0.5) {
            renameSync(hidden.get(p)!, p);
            hidden.delete(p);
          }
          continue;
        }
        if (r() < 0.05) continue;
        let out = "";
        const rest = partial.get(p);
        if (rest !== undefined) {
          out += rest;
          partial.delete(p);
        }
        const k = 1 + Math.floor(r() * 4);
        for (let i = 0; i < k; i++) {
          const x = r();
          const id = `${s}/${st}/${n++}`;
          if (x < 0.08) {
            out += `not json ${id}\n`;
            notJson.add(`not json ${id}`);
          } else if (x < 0.16) {
            out += JSON.stringify({ type: "user", text: `noid ${id}` }) + "\n";
            noId.add(`noid ${id}`);
          } else {
            const size = r() < 0.05 ? 6000 : Math.floor(r() * 600);
            out += JSON.stringify({ type: r() < 0.5 ? "user" : "assistant", uuid: id, text: "w".repeat(size) }) + "\n";
            withId.add(id);
          }
        }
        if (r() < 0.15) {
          const id = `${s}/${st}/${n++}`;
          const line = JSON.stringify({ type: "user", uuid: id, text: "partial" }) + "\n";
          const cut = 1 + Math.floor(r() * (line.length - 2));
          out += line.slice(0, cut);
          partial.set(p, line.slice(cut));
          withId.add(id);
        }
        appendFileSync(p, out);
        if (r() < 0.03 && !partial.has(p)) {
          const h = join(base, `hidden-${n++}`);
          renameSync(p, h);
          hidden.set(p, h);
        }
      }
      if (r() < 0.3) {
        const mp = join(srcRoot, s, "agent-1.meta.json");
        const content = JSON.stringify({ type: "meta", uuid: `meta-${s}-${n++}`, text: `version ${n}` }, null, 2) + "\n\n";
        writeFileSync(mp, content);
        metaVersions.set(mp, `meta-${s}-${n - 1}`);
      }
    }
  };

  const killPoints = new Set<string>();
  let killed = 0;
  let timedKills = 0;
  const time = { child: 0, rerun: 0, verify: 0 };
  let next: ReadyChild | undefined = readyChild(root, srcRoot);
  try {
    for (let j = 0; j < runs; j++) {
      const i = epoch * EPOCH_STRIDE + j;
      mutate();
      let t = performance.now();
      const timed = j % 12 === 11;
      // Kill points 1..241 in a permuted order, distinct over all runs of all epochs (a run takes ~300 steps).
      const crashAt = 1 + (((j * 6 + epoch) * 37) % 241);

      const res = await next!.start(timed ? undefined : crashAt, timed ? 5 + Math.floor(r() * 120) : undefined);
      // The next child loads its modules while this run is checked.
      next = j + 1 < runs ? readyChild(root, srcRoot) : undefined;
      time.child += performance.now() - t;
      if (res.signal === "SIGKILL") {
        killed++;
        const m = /KILL (\d+) (\S+)/.exec(res.stderr);
        if (m) killPoints.add(`${m[1]}:${m[2]}`);
        else {
          timedKills++;
          killPoints.add(`timer:${i}`);
        }
      } else {
        expect(res.stderr, `child ${i} failed`).not.toMatch(/Error/);
      }
      t = performance.now();
      const rerunSteps = await rerun(root, srcRoot);
      void rerunSteps;
      time.rerun += performance.now() - t;
      t = performance.now();
      const v = verify(root);
      time.verify += performance.now() - t;
      expect(v.problems.map(formatProblem), `verify after run ${i}`).toEqual([]);
    }
  } finally {
    next?.dismiss();
  }
  // Finish: restore hidden sources and complete partial lines, then collect once more.
  for (const [p, h] of hidden) renameSync(h, p);
  for (const [p, rest] of partial) appendFileSync(p, rest);
  await rerun(root, srcRoot);
  const v = verify(root);
  expect(v.ok).toBe(true);

  // Every line landed at least once; extra copies only as marked re-lands.
  const firstCopies = new Map<string, number>();
  let dupCopies = 0;
  const texts = new Map<string, number>();
  for (const s of sessions) {
    const idx = readIndex(root, s);
    expect(idx.derived).toBe(false);
    for (const e of idx.entries) {
      if (e.record_id === undefined) continue;
      if (e.duplicate) {
        dupCopies++;
        expect(firstCopies.has(e.record_id), `duplicate of ${e.record_id} follows a first copy`).toBe(true);
      } else {
        expect(firstCopies.has(e.record_id), `${e.record_id} has one first copy`).toBe(false);
        firstCopies.set(e.record_id, e.seq);
      }
    }
    for (const f of idx.files) {
      for (const row of readLanded(root, s, f.seq).rows) {
        const rec = JSON.parse(row) as { text?: string; raw?: string };
        const t = rec.raw ?? rec.text;
        if (t !== undefined && (noId.has(t) || notJson.has(t))) texts.set(t, (texts.get(t) ?? 0) + 1);
      }
    }
  }
  for (const id of withId) expect(firstCopies.has(id), `line ${id} landed`).toBe(true);
  for (const mv of metaVersions.values()) expect(firstCopies.has(mv), `last snapshot version ${mv} landed`).toBe(true);
  for (const t of [...noId, ...notJson]) expect(texts.get(t) ?? 0, `id-less line ${t} landed`).toBeGreaterThanOrEqual(1);
  const idlessExtra = [...texts.values()].reduce((a, b) => a + b - 1, 0);
  expect(idlessExtra + dupCopies).toBeLessThanOrEqual(v.relanded);
  console.log(`epoch ${epoch}: ${runs} runs, ${killed} killed, ${withId.size + noId.size + notJson.size} lines, ${dupCopies} marked duplicate copies, ${idlessExtra} id-less re-land copies, verify relanded ${v.relanded}`);
  expect(existsSync(join(root, "sess-a", ".lock"))).toBe(false);
  return { killed, timedKills, killPoints, time };
}

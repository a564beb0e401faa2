// `lake-collector watch` at scale, a real process each time: over 1,000 collected sessions with one
// growing by a line a second, every line lands within 5 s and the daemon uses at most 5 % of a
// core (utime + stime from /proc/<pid>/stat); a burst of 10,000 appends across 500 files lands
// every line exactly once, and the status shows the event-queue overflow and the full pass that
// recovered from it. inotify's own queue (16,384 events) does not overflow on such a burst, and
// Node does not report it when it does: the test lowers the watcher's queue limit
// (LAKE_WATCH_QUEUE_LIMIT=100 changed files) to make the overflow happen. The trees live on
// /dev/shm where there is one: landing 1,000 sessions first waits on fsync for minutes on a shared
// disk, and that is not what is measured (the daemon's CPU and the latency of each line are).
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { decodeCursor, readIndex, type AppendCursor } from "@lake/store";
import { clockTicks, cpuTicks } from "@lake/tooling/bench";
import { BIN, claudeSessions, runCli, userLine } from "./helpers.js";

afterAll(cleanupTempDirs);

function startWatch(args: readonly string[], env: NodeJS.ProcessEnv): { proc: ChildProcess; out: () => string; exit: Promise<number | null> } {
  const proc = spawn(process.execPath, [BIN, "watch", ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  return { proc, out: () => out, exit: new Promise((res) => proc.on("exit", (code) => res(code))) };
}

function watchStatus(root: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(join(root, "watch.status"), "utf8")) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function offset(root: string, sid: string): number {
  const p = join(root, sid, "streams", "main", "transcript.cursor");
  try {
    return (decodeCursor(readFileSync(p, "utf8"), p) as AppendCursor).offset;
  } catch {
    return -1;
  }
}

async function until<T>(what: string, fn: () => T | undefined | false, timeoutMs: number, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

describe("watch at scale", { timeout: 180_000 }, () => {
  it("1,000 sessions, one growing by a line a second for 20 s: each line lands within 5 s, CPU at most 5 % of a core", async () => {
    const dir = tempDir("watch-scale", { memory: true });
    const { projects, files, ids } = claudeSessions(join(dir, "vendor"), 1000, 3, 6);
    const root = join(dir, "root");
    const env = { HOME: join(dir, "home") };
    const flags = ["--root", root, "--sources-only", "--source", `claude-code=${projects}`];
    const first = await runCli(["collect", ...flags, "--json"], env);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ sessions: 1000 });
    const w = startWatch([...flags, "--json"], env);
    try {
      await until("the first full pass", () => (watchStatus(root)?.last_pass as { kind?: string } | undefined)?.kind === "full", 60_000);
      const target = 417;
      const file = files[target]!;
      const sid = ids[target]!;
      const ticks0 = cpuTicks(w.proc.pid!);
      const t0 = Date.now();
      const latencies: number[] = [];
      for (let i = 0; i < 20; i++) {
        const due = t0 + i * 1000;
        await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
        appendFileSync(file, userLine(sid, 1000 + i, `line ${i} while watching`));
        const end = statSync(file).size;
        const wrote = Date.now();
        // Wait for it in the background of the next writes: checked before the next line (or at the end).
        const landed = until(`line ${i}`, () => offset(root, sid) >= end, 5_000, 20).then(() => latencies.push(Date.now() - wrote));
        if (i === 19) await landed;
        else void landed.catch(() => latencies.push(Infinity));
      }
      await until("every line's latency", () => latencies.length === 20, 10_000);
      const elapsed = (Date.now() - t0) / 1000;
      const cpu = (cpuTicks(w.proc.pid!) - ticks0) / clockTicks();
      const share = cpu / elapsed;
      console.log(`watch over 1000 sessions: line latency max ${Math.max(...latencies)} ms, median ${[...latencies].sort((a, b) => a - b)[10]} ms; CPU ${cpu.toFixed(2)} s in ${elapsed.toFixed(1)} s = ${(share * 100).toFixed(1)} % of a core`);
      expect(Math.max(...latencies)).toBeLessThanOrEqual(5_000);
      expect(share).toBeLessThanOrEqual(0.05);
      // Every line landed once, and the passes read only that session.
      const idx = readIndex(root, sid);
      expect(idx.entries.filter((e) => !e.duplicate && (e.record_id ?? "").startsWith("00000000-0000-4000-8000-"))).toHaveLength(20);
      const st = watchStatus(root)!;
      expect(st).toMatchObject({ state: "running", overflows: 0 });
      expect(st.last_pass).toMatchObject({ kind: "events", sessions: 1 });
    } finally {
      w.proc.kill("SIGTERM");
    }
    expect(await w.exit).toBe(0);
  });

  it("10,000 appends across 500 files in a burst: every line lands once; status shows the overflow and the full pass that recovered", async () => {
    const dir = tempDir("watch-burst", { memory: true });
    const { projects, files, ids } = claudeSessions(join(dir, "vendor"), 500, 4, 6);
    const root = join(dir, "root");
    const env = { HOME: join(dir, "home"), LAKE_WATCH_QUEUE_LIMIT: "100" };
    const flags = ["--root", root, "--sources-only", "--source", `claude-code=${projects}`];
    const w = startWatch([...flags, "--json"], env);
    try {
      await until("the first full pass", () => (watchStatus(root)?.last_pass as { kind?: string } | undefined)?.kind === "full", 90_000);
      expect(watchStatus(root)).toMatchObject({ overflows: 0 });
      for (let round = 0; round < 20; round++) {
        files.forEach((f, i) => appendFileSync(f, userLine(ids[i]!, 10_000 + round, `burst ${round}`)));
      }
      const sizes = files.map((f) => statSync(f).size);
      await until("every appended line landed", () => ids.every((sid, i) => offset(root, sid) === sizes[i]), 120_000, 200);
      for (const sid of ids) {
        const mine = readIndex(root, sid).entries.filter((e) => (e.record_id ?? "").startsWith("00000000-0000-4000-8000-"));
        expect(mine.filter((e) => !e.duplicate)).toHaveLength(20);
        expect(mine.filter((e) => e.duplicate)).toHaveLength(0);
      }
      // The full pass after the last overflow has run (events may overflow the queue more than once).
      const recovered = (w: Record<string, unknown>) => {
        const o = w.last_overflow as { at: string } | undefined;
        const f = w.last_full_pass as { at: string } | undefined;
        return o !== undefined && f !== undefined && Date.parse(f.at) >= Date.parse(o.at) && w.queued === 0;
      };
      await until("the full pass after the last overflow", () => recovered(watchStatus(root) ?? {}), 60_000, 100);
      const st = JSON.parse((await runCli(["status", ...flags, "--json"], env)).stdout) as { watch: Record<string, unknown>; pending: number };
      expect(st.pending).toBe(0);
      expect(st.watch.overflows as number).toBeGreaterThanOrEqual(1);
      expect(st.watch.last_overflow).toMatchObject({ queued: 101 });
      expect(recovered(st.watch)).toBe(true);
      expect((st.watch.last_full_pass as { reason: string }).reason).toBe("event queue overflow");
      expect(st.watch.state).toBe("running");
    } finally {
      w.proc.kill("SIGTERM");
    }
    expect(await w.exit).toBe(0);
  });
});

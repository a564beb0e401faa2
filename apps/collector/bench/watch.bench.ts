// lake-collector bench: `watch` over 1,000 collected Claude Code sessions (real sample lines, fresh
// ids). (1) One session grows by a line a second for 20 s: the latency from write to landed cursor
// per line, and the daemon's CPU (utime + stime from /proc/<pid>/stat) as a share of one core,
// against a bare `fs.watch` (recursive) process on the same tree receiving the same events in the
// same run. (2) Steady growth — five sessions a line a second each — for LAKE_BENCH_WATCH_SECONDS
// (default 30; 600 for the ten-minute run): RSS at the start, each minute and the end, the live heap
// after each of V8's full collections, and CPU over it.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { appendFileSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { clockTicks, cpuTicks, line, rssBytes } from "@lake/tooling/bench";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { decodeCursor, type AppendCursor } from "@lake/store";
import { BIN, claudeSessions, userLine } from "../test/helpers.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function offset(root: string, sid: string): number {
  const p = join(root, sid, "streams", "main", "transcript.cursor");
  try {
    return (decodeCursor(readFileSync(p, "utf8"), p) as AppendCursor).offset;
  } catch {
    return -1;
  }
}

async function landed(root: string, sid: string, end: number, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  while (offset(root, sid) < end) {
    if (Date.now() - t0 > timeoutMs) return Infinity;
    await sleep(10);
  }
  return Date.now() - t0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;

let watch: ChildProcess | undefined;
let bare: ChildProcess | undefined;
try {
  const dir = tempDir("watch-bench", { memory: true });
  const { projects, files, ids } = claudeSessions(join(dir, "vendor"), 1000, 21, 6);
  const root = join(dir, "root");
  const env = { ...process.env, HOME: join(dir, "home") };
  const flags = ["--root", root, "--sources-only", "--source", `claude-code=${projects}`];
  const c = spawnSync(process.execPath, [BIN, "collect", ...flags], { env, encoding: "utf8" });
  if (c.status !== 0) throw new Error(`collect exited ${c.status}: ${c.stderr}`);
  // --trace-gc: after each full collection V8 prints the live heap, which tells a leak from a heap that grows
  // its committed size lazily (RSS follows the latter).
  watch = spawn(process.execPath, ["--trace-gc", BIN, "watch", ...flags], { env, stdio: ["ignore", "pipe", "inherit"] });
  const fullGcs: number[] = [];
  let gcTail = "";
  watch.stdout!.on("data", (d: Buffer) => {
    const lines = (gcTail + d.toString()).split("\n");
    gcTail = lines.pop()!;
    for (const l of lines) {
      const m = /Mark-Compact[^>]*-> ([\d.]+)/.exec(l);
      if (m) fullGcs.push(Number(m[1]));
    }
  });
  bare = spawn(process.execPath, ["-e", `require("fs").watch(${JSON.stringify(projects)}, { recursive: true }, () => {}); setInterval(() => {}, 1 << 30);`], { stdio: "ignore" });
  const status = () => {
    try {
      return JSON.parse(readFileSync(join(root, "watch.status"), "utf8")) as { last_pass?: { kind: string } };
    } catch {
      return {};
    }
  };
  for (let t = Date.now(); status().last_pass?.kind !== "full"; await sleep(50)) if (Date.now() - t > 120_000) throw new Error("watch did not finish its first pass");
  await sleep(1000);
  const tick = clockTicks();

  // (1) One session, a line a second for 20 s.
  const lat: number[] = [];
  const w0 = cpuTicks(watch.pid!);
  const b0 = cpuTicks(bare.pid!);
  const t0 = Date.now();
  const waits: Promise<void>[] = [];
  for (let i = 0; i < 20; i++) {
    await sleep(Math.max(0, t0 + i * 1000 - Date.now()));
    appendFileSync(files[500]!, userLine(ids[500]!, 5000 + i, `line ${i}`));
    const end = statSync(files[500]!).size;
    waits.push(landed(root, ids[500]!, end, 10_000).then((ms) => void lat.push(ms)));
  }
  await Promise.all(waits);
  const secs = (Date.now() - t0) / 1000;
  const wCpu = (cpuTicks(watch.pid!) - w0) / tick;
  const bCpu = (cpuTicks(bare.pid!) - b0) / tick;
  console.log("\n## watch: 1,000 sessions, one growing by a line a second for 20 s");
  line("line latency (write → cursor)", `median ${median(lat)} ms, max ${Math.max(...lat)} ms (goal ≤ 5000 ms)`);
  line("lake-collector watch CPU", `${wCpu.toFixed(2)} s in ${secs.toFixed(1)} s = ${((wCpu / secs) * 100).toFixed(1)} % of a core (goal ≤ 5 %)`);
  line("bare fs.watch CPU (baseline)", `${bCpu.toFixed(2)} s = ${((bCpu / secs) * 100).toFixed(1)} % of a core; ratio ${(bCpu > 0 ? wCpu / bCpu : Infinity).toFixed(1)}x`);

  // (2) Steady growth for LAKE_BENCH_WATCH_SECONDS: RSS at the start and the end.
  const dur = Math.max(5, Number(process.env.LAKE_BENCH_WATCH_SECONDS ?? 30));
  const growing = [100, 300, 500, 700, 900];
  const rss0 = rssBytes(watch.pid!);
  const s0 = cpuTicks(watch.pid!);
  const g0 = Date.now();
  const lat2: number[] = [];
  // RSS once a minute (and at the start): a daemon's heap settles over its first minutes, a leak keeps growing.
  const series: number[] = [rss0];
  const gc0 = fullGcs.length;
  for (let i = 0; (Date.now() - g0) / 1000 < dur; i++) {
    await sleep(Math.max(0, g0 + i * 1000 - Date.now()));
    for (const k of growing) appendFileSync(files[k]!, userLine(ids[k]!, 100_000 + i, `steady ${i}`));
    if (i > 0 && i % 60 === 0) series.push(rssBytes(watch.pid!));
  }
  for (const k of growing) lat2.push(await landed(root, ids[k]!, statSync(files[k]!).size, 10_000));
  const gSecs = (Date.now() - g0) / 1000;
  const rss1 = rssBytes(watch.pid!);
  const sCpu = (cpuTicks(watch.pid!) - s0) / tick;
  console.log(`\n## watch: steady growth, 5 sessions a line a second each, ${dur} s (LAKE_BENCH_WATCH_SECONDS)`);
  line("RSS", `start ${mb(rss0)}, end ${mb(rss1)} (${rss1 >= rss0 ? "+" : ""}${mb(rss1 - rss0)})`);
  line("RSS each minute", series.map((b) => (b / 1e6).toFixed(1)).join(" → ") + " MB");
  const gcs = fullGcs.slice(gc0);
  line("live heap after each full GC", gcs.length === 0 ? "no full GC in the run" : `${gcs.join(" → ")} MB`);
  line("CPU", `${sCpu.toFixed(2)} s in ${gSecs.toFixed(0)} s = ${((sCpu / gSecs) * 100).toFixed(1)} % of a core`);
  line("last lines landed after", `${Math.max(...lat2)} ms`);
} finally {
  watch?.kill("SIGTERM");
  bare?.kill("SIGTERM");
  await sleep(500);
  cleanupTempDirs();
}

// lake-collector bench: the first collect of a generated Claude Code corpus (1 GB × LAKE_BENCH_SCALE),
// with the convert pool (the default) and on the main thread alone (--jobs 1), against reading,
// parsing and hashing the same bytes in-process, in turns (LAKE_BENCH_RUNS rounds, default 3; each
// collect on a fresh root); an incremental pass after 1 % new data against a pass with nothing new
// (hook latency: bench/hook.bench.ts). Each collect's peak RSS is printed too.
// Every subject runs the built bin as a child process (`pnpm turbo run build --filter=lake-collector...`).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { MAXRSS_IMPORT, line, maxRss, measure, measureRounds, report, scale, type Sample } from "@lake/tooling/bench";
import { generateClaudeCorpus } from "@lake/tooling/corpus";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { BIN, userLine, walk } from "../test/helpers.js";



/**
 * Run the built collector; its stdout, its peak RSS (bytes, worker threads included) and whether a
 * source was left pending (`collect` past a pass's 65 windows: exit 3 with `pending` and no problem,
 * accepted only when `pendingOk`).
 */
function collector(args: string[], input?: string, pendingOk = false): { stdout: string; rss: number; pending: boolean } {
  const r = spawnSync(process.execPath, ["--import", MAXRSS_IMPORT, BIN, ...args], { encoding: "utf8", input: input ?? "", maxBuffer: 64 * 1024 * 1024 });
  const left = pendingOk && r.status === 3 ? (JSON.parse(r.stdout) as { pending: number; problems: unknown[] }) : undefined;
  const pending = left !== undefined && left.pending > 0 && left.problems.length === 0;
  if (r.status !== 0 && !pending) throw new Error(`lake-collector ${args[0]} exited ${r.status}: ${r.stderr}`);
  return { stdout: r.stdout, rss: maxRss(r.stderr) ?? 0, pending };
}

/** `collect --json` run again while a source is pending, as a user would, until it is all landed; the passes and the largest peak RSS. */
function collectAll(args: string[]): { passes: number; rss: number } {
  let rss = 0;
  for (let passes = 1; ; passes++) {
    const r = collector(args, undefined, true);
    rss = Math.max(rss, r.rss);
    if (!r.pending) return { passes, rss };
  }
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
const middle = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** The baseline: read every file, JSON.parse every line, SHA-256 every file. */
function readParseHash(list: readonly string[]): number {
  let lines = 0;
  for (const f of list) {
    const buf = readFileSync(f);
    createHash("sha256").update(buf).digest();
    const text = buf.toString("utf8");
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl < 0) break;
      if (nl > start) {
        JSON.parse(text.slice(start, nl));
        lines++;
      }
      start = nl + 1;
    }
  }
  return lines;
}

/**
 * The CPU the goal allows this machine: 0.8× the baseline's speed with every core busy is at most
 * cores × the baseline's time / 0.8 of CPU time; the pooled collect's CPU (user + system of the
 * whole process, its convert workers included) against that and against the baseline's own.
 */
function cpuBudget(baseline: Sample, pooled: Sample): string[] {
  if (baseline.cpuMs === undefined || pooled.cpuMs === undefined) return [];
  const cores = availableParallelism();
  const allowed = (cores * baseline.medianMs) / 0.8;
  return [
    `CPU: the convert pool ${(pooled.cpuMs / 1000).toFixed(2)} s, ${(pooled.cpuMs / baseline.cpuMs).toFixed(1)}x the baseline's ${(baseline.cpuMs / 1000).toFixed(2)} s; 0.8x of the baseline on ${cores} cores allows at most ${(allowed / 1000).toFixed(2)} s (${(allowed / baseline.cpuMs).toFixed(1)}x), all of them busy`,
  ];
}

try {
  const dir = tempDir("collector-bench");
  const bytes = Math.round(1e9 * scale());
  const corpus = await generateClaudeCorpus({ dir: join(dir, "vendor"), bytes, seed: 1 });
  const projects = join(dir, "vendor", "projects");
  const list = walk(projects).sort();
  const sources = ["--sources-only", "--source", `claude-code=${projects}`];
  line("corpus", `${(corpus.bytes / 1e6).toFixed(0)} MB, ${corpus.files.length} sessions, ${corpus.lines} lines (scale ${scale()})`);

  // First collect: each run on a fresh root (a second run would find nothing new).
  let fresh = 0;
  let root = "";
  const roots = () => {
    if (root) rmSync(root, { recursive: true, force: true });
    root = join(dir, `root-${fresh++}`);
  };
  let summary: { records: number; landed_files: number; rounds: number; convert_workers: number } = { records: 0, landed_files: 0, rounds: 0, convert_workers: 0 };
  const rss: Record<string, number[]> = {};
  const firstCollect = (jobs: string[]) => () => {
    const r = collector(["collect", "--root", root, ...sources, ...jobs, "--json"]);
    summary = JSON.parse(r.stdout);
    (rss[jobs.join(" ")] ??= []).push(r.rss);
  };
  const runs = Number(process.env.LAKE_BENCH_RUNS ?? "3");
  const samples = await measureRounds(
    [
      { name: "read + JSON.parse + SHA-256", fn: () => readParseHash(list) },
      { name: "lake-collector collect --jobs 1 (first pass)", fn: firstCollect(["--jobs", "1"]), before: roots },
      { name: "lake-collector collect (first pass, convert pool)", fn: firstCollect([]), before: roots },
    ],
    { runs: Number.isInteger(runs) && runs > 0 ? runs : 3, warmup: 0 },
  );
  const [baseline, one, pooled] = samples.map((x) => ({ ...x, bytes: corpus.bytes }));
  report("first collect", baseline!, [one!, pooled!], [
    `${summary.records} records in ${summary.landed_files} landed files, ${summary.rounds} rounds published; ${summary.convert_workers} convert workers`,
    `convert pool vs --jobs 1: ${(one!.medianMs / pooled!.medianMs).toFixed(2)}x; goal: the pool at >= 0.8x of the baseline`,
    `peak RSS (median): --jobs 1 ${mb(middle(rss["--jobs 1"] ?? []))}, convert pool ${mb(middle(rss[""] ?? []))}`,
    ...cpuBudget(baseline!, pooled!),
  ]);

  // Memory on one large session file (700 MB × LAKE_BENCH_SCALE), pooled and on one thread.
  {
    const big = await generateClaudeCorpus({ dir: join(dir, "big"), bytes: Math.round(7e8 * scale()), sessionBytes: Math.round(7e8 * scale()), seed: 3 });
    const bigSources = ["--sources-only", "--source", `claude-code=${join(dir, "big", "projects")}`];
    let passes = 0;
    const bigRoot = (jobs: string[]) => join(dir, `big-root-${jobs.length}`);
    const peak = (jobs: string[]) => {
      const out = collectAll(["collect", "--root", bigRoot(jobs), ...bigSources, ...jobs, "--json"]);
      passes = out.passes;
      return out.rss;
    };
    const one = peak(["--jobs", "1"]);
    rmSync(bigRoot(["--jobs", "1"]), { recursive: true, force: true });
    line("one session file", `${(big.bytes / 1e6).toFixed(0)} MB: peak RSS --jobs 1 ${mb(one)}, convert pool ${mb(peak([]))} over ${passes} passes (65 windows each) (goal: <= 256 MB at 700 MB)`);

    // The long session collected, a line appended to it: the pass costs what the line costs, not what
    // the session holds (its index's ids, its chain's fold), against a pass of the same root that finds nothing.
    const file = big.files[0]!;
    const sid = file.slice(file.lastIndexOf("/") + 1, -".jsonl".length);
    const again = () => collector(["collect", "--root", bigRoot([]), ...bigSources, "--json"]);
    let appendedLines = 0;
    const [bigNoop, bigLine] = await measureRounds(
      [
        { name: "collect, nothing new (the long session's root)", fn: again },
        { name: "collect after appending one line to the long session", before: () => appendFileSync(file, userLine(sid, ++appendedLines, `line ${appendedLines} appended`)), fn: again },
      ],
      { runs: 3, warmup: 0 },
    );
    report("one line in a long session", bigNoop!, [bigLine!], [
      `${(big.bytes / 1e6).toFixed(0)} MB session; the line's pass costs ${(bigLine!.medianMs - bigNoop!.medianMs).toFixed(0)} ms more than a pass that finds nothing`,
    ]);
    rmSync(bigRoot([]), { recursive: true, force: true });
    rmSync(join(dir, "big"), { recursive: true, force: true });
  }

  // Incremental: 1 % new bytes appended to every tenth session (lines of a second corpus, re-keyed to the session).
  const extra = await generateClaudeCorpus({ dir: join(dir, "extra"), bytes: Math.round(corpus.bytes / 100), sessionBytes: 256 * 1024, seed: 2 });
  const targets = list.filter((_, i) => i % 10 === 0);
  const newLines = extra.files.flatMap((f) => readFileSync(f, "utf8").split("\n").filter(Boolean));
  let appended = 0;
  const per = Math.ceil(newLines.length / targets.length);
  targets.forEach((t, i) => {
    const sid = t.slice(t.lastIndexOf("/") + 1, -".jsonl".length);
    const chunk = newLines.slice(i * per, (i + 1) * per).map((l) => JSON.stringify({ ...JSON.parse(l), sessionId: sid }));
    if (chunk.length === 0) return;
    const text = chunk.join("\n") + "\n";
    appendFileSync(t, text);
    appended += Buffer.byteLength(text);
  });
  let inc: { records: number; landed_files: number } = { records: 0, landed_files: 0 };
  const incremental = await measure(
    "collect after 1 % new data",
    () => {
      inc = JSON.parse(collector(["collect", "--root", root, ...sources, "--json"]).stdout);
    },
    { runs: 1, warmup: 0, bytes: appended },
  );
  const noop = await measure("collect with nothing new", () => collector(["collect", "--root", root, ...sources, "--json"]), { runs: 3, warmup: 0 });
  report("incremental pass", noop, [incremental], [
    `${(appended / 1e6).toFixed(1)} MB appended to ${targets.length} of ${list.length} sessions: ${inc.records} records in ${inc.landed_files} landed files`,
    "ratio < 1: the incremental pass costs that much more than a pass that finds nothing",
  ]);

} finally {
  cleanupTempDirs();
}

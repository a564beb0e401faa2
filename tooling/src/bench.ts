// Bench harness: every benchmark measures its subject and a baseline over the same bytes in the
// same run, and prints medians and the ratio. Benchmarks never fail on a time.
import { performance } from "node:perf_hooks";

export interface Sample {
  readonly name: string;
  /** Median wall time of one run, milliseconds. */
  readonly medianMs: number;
  readonly runs: number;
  /** Bytes processed by one run, when the subject has a byte size. */
  readonly bytes?: number;
}

/**
 * The environment for a bench that times whole Node processes against `node -e 0` (this process's,
 * or `env`), without NODE_EXTRA_CA_CERTS. Node reads that file of certificates as it starts: with
 * it set (as on the machine these benches were first run on), `node -e 0` took 60–70 ms instead
 * of 27, while a command with work to do took about as long either way — the ratio flattered the
 * command. Without it, a direct run measures what `pnpm bench` does (turbo passes the variable on
 * to no task) and what a machine without it sees.
 */
export function startupEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const { NODE_EXTRA_CA_CERTS: _certs, ...rest } = env;
  return rest;
}

/** Run `fn` `warmup` times unmeasured, then `runs` times, and return the median. */
export async function measure(
  name: string,
  fn: () => unknown | Promise<unknown>,
  options: { runs?: number; warmup?: number; bytes?: number } = {},
): Promise<Sample> {
  const runs = options.runs ?? 5;
  for (let i = 0; i < (options.warmup ?? 1); i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  const medianMs = median(times);
  return options.bytes === undefined ? { name, medianMs, runs } : { name, medianMs, runs, bytes: options.bytes };
}

function median(times: number[]): number {
  times.sort((a, b) => a - b);
  const mid = Math.floor(times.length / 2);
  return times.length % 2 ? times[mid]! : (times[mid - 1]! + times[mid]!) / 2;
}

/**
 * Measure several subjects in turns (one run of each, then the next round), so a machine whose
 * load changes during the bench slows every subject alike and their ratios hold; `warmup` rounds
 * unmeasured, then `runs` rounds. A subject's `before` runs ahead of each of its runs, untimed.
 */
export async function measureRounds(
  subjects: readonly { name: string; fn: () => unknown | Promise<unknown>; before?: () => unknown }[],
  options: { runs?: number; warmup?: number } = {},
): Promise<Sample[]> {
  const runs = options.runs ?? 5;
  const times = subjects.map((): number[] => []);
  for (let round = 0; round < (options.warmup ?? 1) + runs; round++) {
    for (let i = 0; i < subjects.length; i++) {
      const s = subjects[i]!;
      s.before?.();
      const t0 = performance.now();
      await s.fn();
      if (round >= (options.warmup ?? 1)) times[i]!.push(performance.now() - t0);
    }
  }
  return subjects.map((s, i) => ({ name: s.name, medianMs: median(times[i]!), runs }));
}

/** MB/s of a sample with a byte size. */
export function throughput(s: Sample): number | undefined {
  return s.bytes === undefined ? undefined : s.bytes / 1e6 / (s.medianMs / 1000);
}

/**
 * Print one benchmark's table: each subject's median, throughput, and its speed as a ratio to
 * the baseline (baseline time / subject time: 1.0 = as fast as the baseline, 0.5 = half as fast).
 */
export function report(title: string, baseline: Sample, subjects: readonly Sample[], notes: readonly string[] = []): void {
  const rows = [baseline, ...subjects];
  const fmt = (n: number | undefined, d = 1) => (n === undefined ? "-" : n.toFixed(d));
  const lines = rows.map((s) => {
    const mbps = throughput(s);
    const ratio = baseline.medianMs / s.medianMs;
    return [s === baseline ? `${s.name} (baseline)` : s.name, `${fmt(s.medianMs)} ms`, mbps === undefined ? "-" : `${fmt(mbps)} MB/s`, `${ratio.toFixed(2)}x`, `n=${s.runs}`];
  });
  const widths = [0, 1, 2, 3, 4].map((i) => Math.max(...lines.map((l) => l[i]!.length)));
  console.log(`\n## ${title}`);
  for (const l of lines) console.log("  " + l.map((c, i) => c.padEnd(widths[i]!)).join("  "));
  for (const n of notes) console.log(`  ${n}`);
}

/** Print a single labelled value (counts, latencies, shares) in the same style. */
export function line(label: string, value: string): void {
  console.log(`  ${label}: ${value}`);
}

/** Bench size multiplier: LAKE_BENCH_SCALE=0.1 runs a tenth of the data (for a quick look). */
export function scale(): number {
  const s = Number(process.env.LAKE_BENCH_SCALE ?? "1");
  return Number.isFinite(s) && s > 0 ? s : 1;
}

/**
 * A `node --import` argument that has a child print its peak RSS on stderr as it exits
 * (`maxrss_kb=N`: process.resourceUsage().maxRSS, its worker threads included); read it back with
 * {@link maxRss}.
 */
export const MAXRSS_IMPORT = "data:text/javascript," + encodeURIComponent('process.on("exit", () => process.stderr.write(`\\nmaxrss_kb=${process.resourceUsage().maxRSS}\\n`));');

/** The peak RSS in bytes a child started with {@link MAXRSS_IMPORT} printed on `stderr`, or undefined. */
export function maxRss(stderr: string): number | undefined {
  const m = /maxrss_kb=(\d+)/.exec(stderr);
  return m ? Number(m[1]) * 1024 : undefined;
}

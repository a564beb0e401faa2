// Bench harness: every benchmark measures its subject and a baseline over the same bytes in the
// same run, and prints medians and the ratio. Benchmarks never fail on a time.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

export interface Sample {
  readonly name: string;
  /** Median wall time of one run, milliseconds. */
  readonly medianMs: number;
  readonly runs: number;
  /** Bytes processed by one run, when the subject has a byte size. */
  readonly bytes?: number;
  /**
   * Median CPU time (user + system) of one run, milliseconds: this process's and that of the
   * children it waited for during the run (a command run with spawnSync, its threads included).
   * Undefined where /proc is not there.
   */
  readonly cpuMs?: number;
}

/** CPU ticks (utime + stime, clock ticks) a process has used, from /proc/<pid>/stat. */
export function cpuTicks(pid: number): number {
  const f = statFields(pid);
  return Number(f[11]) + Number(f[12]);
}

/** The fields of /proc/<pid>/stat after the command name (the state is the first). */
function statFields(pid: number | "self"): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

let ticksPerSecond: number | undefined;
/** Clock ticks per second (`getconf CLK_TCK`). */
export function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    const r = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" });
    const n = Number(r.stdout?.trim());
    ticksPerSecond = Number.isInteger(n) && n > 0 ? n : 100;
  }
  return ticksPerSecond;
}

/** RSS of a process in bytes, from /proc/<pid>/status. */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * CPU time used so far, milliseconds: this process's (process.cpuUsage, microseconds) and its
 * waited-for children's (cutime + cstime of /proc/self/stat, in clock ticks: 10 ms each on Linux,
 * so a run's figure is good to about 20 ms). Undefined without /proc.
 */
export function cpuMs(): number | undefined {
  let children: number;
  try {
    const hz = clockTicks(); // first, so its getconf child is not counted in a run
    const f = statFields("self");
    children = ((Number(f[13]) + Number(f[14])) * 1000) / hz;
  } catch {
    return undefined;
  }
  const own = process.cpuUsage();
  return (own.user + own.system) / 1000 + children;
}

/** Time one call of `fn`: wall and CPU milliseconds. */
async function timed(fn: () => unknown | Promise<unknown>): Promise<{ ms: number; cpu: number | undefined }> {
  const c0 = cpuMs();
  const t0 = performance.now();
  await fn();
  const ms = performance.now() - t0;
  const c1 = cpuMs();
  return { ms, cpu: c0 === undefined || c1 === undefined ? undefined : c1 - c0 };
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
  const cpus: number[] = [];
  for (let i = 0; i < runs; i++) {
    const { ms, cpu } = await timed(fn);
    times.push(ms);
    if (cpu !== undefined) cpus.push(cpu);
  }
  return sample(name, times, cpus, options.bytes);
}

function sample(name: string, times: number[], cpus: number[], bytes?: number): Sample {
  const s: { -readonly [K in keyof Sample]: Sample[K] } = { name, medianMs: median(times), runs: times.length };
  if (bytes !== undefined) s.bytes = bytes;
  if (cpus.length === times.length && cpus.length > 0) s.cpuMs = median(cpus);
  return s;
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
  const cpus = subjects.map((): number[] => []);
  for (let round = 0; round < (options.warmup ?? 1) + runs; round++) {
    for (let i = 0; i < subjects.length; i++) {
      const s = subjects[i]!;
      s.before?.();
      const { ms, cpu } = await timed(s.fn);
      if (round < (options.warmup ?? 1)) continue;
      times[i]!.push(ms);
      if (cpu !== undefined) cpus[i]!.push(cpu);
    }
  }
  return subjects.map((s, i) => sample(s.name, times[i]!, cpus[i]!));
}

/** MB/s of a sample with a byte size. */
export function throughput(s: Sample): number | undefined {
  return s.bytes === undefined ? undefined : s.bytes / 1e6 / (s.medianMs / 1000);
}

/**
 * A sample's CPU as text: its median CPU time and how many cores that kept busy on average
 * (CPU time / wall time), e.g. `cpu 9.51 s, 1.62 cores`; `-` without it.
 */
export function cpuText(s: Sample): string {
  return s.cpuMs === undefined ? "-" : `cpu ${(s.cpuMs / 1000).toFixed(2)} s, ${(s.cpuMs / s.medianMs).toFixed(2)} cores`;
}

/**
 * Print one benchmark's table: each subject's median, throughput, its CPU (time, cores kept busy),
 * and its speed as a ratio to the baseline (baseline time / subject time: 1.0 = as fast as the
 * baseline, 0.5 = half as fast).
 */
export function report(title: string, baseline: Sample, subjects: readonly Sample[], notes: readonly string[] = []): void {
  const rows = [baseline, ...subjects];
  const fmt = (n: number | undefined, d = 1) => (n === undefined ? "-" : n.toFixed(d));
  const lines = rows.map((s) => {
    const mbps = throughput(s);
    const ratio = baseline.medianMs / s.medianMs;
    return [s === baseline ? `${s.name} (baseline)` : s.name, `${fmt(s.medianMs)} ms`, mbps === undefined ? "-" : `${fmt(mbps)} MB/s`, cpuText(s), `${ratio.toFixed(2)}x`, `n=${s.runs}`];
  });
  const widths = [0, 1, 2, 3, 4, 5].map((i) => Math.max(...lines.map((l) => l[i]!.length)));
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

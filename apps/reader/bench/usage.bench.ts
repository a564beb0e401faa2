// `lake-reader usage daily --json` from a fleet store against ccusage 20.0.24 `daily --json --offline`
// over the same generated Claude Code corpus (128 MiB at scale 1; LAKE_BENCH_SCALE=4.3 is the
// issue's 552 MB). The fleet is made the way a user's is: the real `lake-collector collect` and
// `push` (which writes beside each segment its usage rollup), then — after the bronze runs — the
// real `lake-maint compact` (a rollup per generation). Building and compacting are not timed
// below (their times are printed). The reader is timed over the fleet right after push (bronze,
// not compacted: the state maint has not reached yet) and over the compacted fleet; each side as
// whole command runs (a new process each: start-up, imports and all), one after the other in the
// same run on the same machine (ccusage and the reader right after push in turns), with each command's peak RSS (/usr/bin/time). Goals: bronze ≥ 2×
// as fast as ccusage and ≤ 256 MB RSS; compacted ≥ 10×; equal totals. Needs the built bins
// (turbo's bench task builds first).
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { generateClaudeCorpus } from "@lake/tooling/corpus";
import { line, measure, measureRounds, report, scale } from "@lake/tooling/bench";
import { tempDir } from "@lake/tooling/tmp";

const bytes = Math.round(128 * 1024 * 1024 * scale());
const dir = tempDir("reader-bench");
const config = join(dir, "claude");
const fleet = join(dir, "fleet");
const root = join(dir, "root");
const ccusage = fileURLToPath(new URL("../node_modules/.bin/ccusage", import.meta.url));
const bin = fileURLToPath(new URL("../bin/lake-reader.js", import.meta.url));
const maint = fileURLToPath(new URL("../../maint/bin/lake-maint.js", import.meta.url));
const collector = fileURLToPath(new URL("../../collector/bin/lake-collector.js", import.meta.url));
const TIME = "/usr/bin/time";

/** Run a command; its stdout and, where /usr/bin/time is there, its peak RSS in bytes. */
function run(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv): { out: string; rss: number | undefined } {
  const timed = existsSync(TIME);
  const r = spawnSync(timed ? TIME : cmd, timed ? ["-f", "maxrss_kb=%M", cmd, ...args] : args, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, env: { PATH: process.env.PATH, HOME: dir, TZ: "UTC", ...env } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  const m = /maxrss_kb=(\d+)\s*$/.exec(r.stderr);
  return { out: r.stdout, rss: m ? Number(m[1]) * 1024 : undefined };
}
const node = (script: string, args: readonly string[], env: NodeJS.ProcessEnv = {}) => run(process.execPath, [script, ...args], env);
const mb = (n: number | undefined) => (n === undefined ? "-" : `${(n / 1e6).toFixed(0)} MB`);

try {
  const corpus = await generateClaudeCorpus({ dir: config, bytes, seed: 7 });
  line("corpus", `${corpus.bytes} bytes (${(corpus.bytes / 1e6).toFixed(0)} MB), ${corpus.files.length} files, ${corpus.lines} lines`);
  const store = pathToFileURL(fleet).href;
  let t0 = performance.now();
  node(collector, ["collect", "--root", root, "--sources-only", "--source", `claude-code=${join(config, "projects")}`, "--json"]);
  const collectMs = performance.now() - t0;
  t0 = performance.now();
  const pushed = JSON.parse(node(collector, ["push", "--root", root, "--store", store, "--agent", "bench", "--seal-idle", "0", "--fleet-id", "f1", "--json"]).out) as { sessions: number; rows: number; segments: number; bytes: number };
  const pushMs = performance.now() - t0;
  line("lake-collector collect", `${(collectMs / 1000).toFixed(1)} s, ${(corpus.bytes / 1e6 / (collectMs / 1000)).toFixed(1)} MB/s (not timed below)`);
  line("lake-collector push", `${pushed.sessions} sessions, ${pushed.segments} segments, ${pushed.rows} rows, ${(pushMs / 1000).toFixed(1)} s (not timed below)`);
  const runs = { runs: 5, warmup: 1 };
  const readerEnv = { LAKE_READER_CACHE: join(dir, "cache") };
  const reader = () => node(bin, ["usage", "daily", "--json", "--timezone", "UTC", "--store", store], readerEnv);

  let ccOut = "";
  let ccRss = 0;
  let bronzeOut = "";
  let bronzeRss = 0;
  // In turns (ccusage, lake-reader, ccusage, …): the machine's load moves both alike.
  const [cc0, bronze0] = await measureRounds(
    [
      {
        name: "ccusage daily --json --offline",
        fn: () => {
          const r = run(ccusage, ["daily", "--json", "--offline", "--timezone", "UTC"], { CLAUDE_CONFIG_DIR: config });
          ccOut = r.out;
          ccRss = Math.max(ccRss, r.rss ?? 0);
        },
      },
      {
        name: "lake-reader usage daily --json (right after push: segment rollups)",
        fn: () => {
          const r = reader();
          bronzeOut = r.out;
          bronzeRss = Math.max(bronzeRss, r.rss ?? 0);
        },
      },
    ],
    runs,
  );
  const cc = { ...cc0!, bytes: corpus.bytes };
  const bronze = { ...bronze0!, bytes: corpus.bytes };

  t0 = performance.now();
  const compacted = JSON.parse(node(maint, ["compact", "--json", "--store", store]).out) as { partitions: { status: string; rows?: number }[] };
  const compactMs = performance.now() - t0;
  line("lake-maint compact", `${compacted.partitions.length} partitions, ${compacted.partitions.reduce((n, p) => n + (p.rows ?? 0), 0)} rows, ${(compactMs / 1000).toFixed(1)} s (not timed below)`);
  let lakeOut = "";
  let lakeRss = 0;
  const lake = await measure(
    "lake-reader usage daily --json (compacted: generation rollups)",
    () => {
      const r = reader();
      lakeOut = r.out;
      lakeRss = Math.max(lakeRss, r.rss ?? 0);
    },
    { ...runs, bytes: corpus.bytes },
  );
  const ours = JSON.parse(lakeOut) as { totals: { total_tokens: number | null } };
  const ours0 = JSON.parse(bronzeOut) as { totals: { total_tokens: number | null } };
  if (JSON.stringify(JSON.parse(lakeOut)) !== JSON.stringify(JSON.parse(bronzeOut))) throw new Error("usage daily differs between the bronze and the compacted fleet");
  const theirs = JSON.parse(ccOut) as { totals: { totalTokens: number } };
  const equal = ours.totals.total_tokens === theirs.totals.totalTokens && ours0.totals.total_tokens === theirs.totals.totalTokens;
  line("ccusage median", `${cc.medianMs.toFixed(0)} ms, peak RSS ${mb(ccRss)}`);
  line("lake-reader median (right after push)", `${bronze.medianMs.toFixed(0)} ms, peak RSS ${mb(bronzeRss)}`);
  line("lake-reader median (compacted)", `${lake.medianMs.toFixed(0)} ms, peak RSS ${mb(lakeRss)}`);
  report("usage daily: lake-reader (fleet) vs ccusage (raw JSONL), whole command runs", cc, [bronze, lake], [
    `total tokens: lake ${ours.totals.total_tokens} (right after push ${ours0.totals.total_tokens}), ccusage ${theirs.totals.totalTokens}: ${equal ? "equal" : "DIFFERENT"}`,
    `ratio (right after push, not compacted): lake-reader is ${(cc.medianMs / bronze.medianMs).toFixed(2)}x as fast as ccusage (goal >= 2x); peak RSS ${mb(bronzeRss)} = ${(bronzeRss / ccRss).toFixed(2)}x ccusage's (goal <= 256 MB)`,
    `ratio (compacted fleet): lake-reader is ${(cc.medianMs / lake.medianMs).toFixed(2)}x as fast as ccusage (goal >= 10x at 5 GB); peak RSS ${mb(lakeRss)}`,
  ]);
} finally {
  if (!process.env.LAKE_KEEP_TMP) rmSync(dir, { recursive: true, force: true });
}

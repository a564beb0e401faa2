// lake-collector bench: the first push of a collected root (a generated Claude Code corpus, 64 MiB ×
// LAKE_BENCH_SCALE; the table is at 552 MB: LAKE_BENCH_SCALE=8.6) to a fresh local fleet
// store, in MB/s of landed bytes (the root's .sd files), against reading, SHA-256-hashing and
// JSON.parse-ing every line of those same landed files in one thread, measured in the same run
// (goal: ≥ 100 MB/s). Each run pushes to a store of its own (a first push for it; the root's
// push.state keeps one receiver per store).
// The built bin runs as a child process (`pnpm turbo run build --filter=lake-collector...`).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { availableParallelism } from "node:os";
import { line, measure, measureRounds, report, scale } from "@lake/tooling/bench";
import { generateClaudeCorpus } from "@lake/tooling/corpus";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { BIN, walk } from "../test/helpers.js";

function collector(args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`lake-collector ${args[0]} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/**
 * What the goal allows this machine: 100 MB/s on its cores (all busy) is at most bytes / 100 MB/s ×
 * cores of CPU time; the push's CPU against it (user + system of the whole process, its DuckDB and
 * thread-pool threads included).
 */
function cpuBudget(cpuMs: number | undefined, bytes: number): string[] {
  if (cpuMs === undefined) return [];
  const cores = availableParallelism();
  const allowed = (bytes / 100e6) * cores;
  return [`CPU: the push ${(cpuMs / 1000).toFixed(2)} s (${((cpuMs * 1e6) / bytes).toFixed(1)} ns a landed byte); 100 MB/s on ${cores} cores allows at most ${allowed.toFixed(2)} s, all of them busy`];
}

try {
  const dir = tempDir("push-bench");
  const corpus = await generateClaudeCorpus({ dir: join(dir, "vendor"), bytes: Math.round(64 * 1024 * 1024 * scale()), seed: 3 });
  const root = join(dir, "root");
  collector(["collect", "--root", root, "--sources-only", "--source", `claude-code=${join(dir, "vendor", "projects")}`, "--json"]);
  const landed = walk(root).filter((f) => f.endsWith(".sd"));
  const bytes = landed.reduce((n, f) => n + statSync(f).size, 0);
  line("corpus", `${(corpus.bytes / 1e6).toFixed(0)} MB, ${corpus.files.length} sessions; landed: ${landed.length} files, ${(bytes / 1e6).toFixed(0)} MB (scale ${scale()})`);

  const baseline = await measure(
    "read + SHA-256 + JSON.parse of every line of the landed files",
    () => {
      for (const f of landed) {
        const buf = readFileSync(f);
        createHash("sha256").update(buf).digest();
        for (const line of buf.toString("utf8").split("\n")) if (line !== "") JSON.parse(line);
      }
    },
    { runs: 3, warmup: 1, bytes },
  );
  let out: { sessions: number; segments: number; rows: number; bytes: number } = { sessions: 0, segments: 0, rows: 0, bytes: 0 };
  let n = 0;
  const fleet = () => join(dir, `fleet-${n}`);
  const [p0] = await measureRounds(
    [
      {
        name: "lake-collector push (first push, fresh store)",
        // A store of its own each run, the last one removed (not timed).
        before: () => {
          rmSync(fleet(), { recursive: true, force: true });
          n++;
        },
        fn: () => {
          out = JSON.parse(collector(["push", "--root", root, "--store", pathToFileURL(fleet()).href, "--agent", "bench", "--seal-idle", "0", "--fleet-id", "f1", "--json"]));
        },
      },
    ],
    { runs: 3, warmup: 0 },
  );
  const push = { ...p0!, bytes };
  report("first push: MB/s of landed bytes (ratio: baseline time / push time)", baseline, [push], [
    `${out.sessions} sessions, ${out.segments} segments, ${out.rows} rows, ${(out.bytes / 1e6).toFixed(1)} MB of Parquet`,
    `push: ${(bytes / 1e6 / (push.medianMs / 1000)).toFixed(1)} MB/s of landed bytes (goal >= 100 MB/s)`,
    ...cpuBudget(push.cpuMs, bytes),
  ]);
} finally {
  cleanupTempDirs();
}

// Compaction memory: peak RSS and time of `lake-maint compact` (the real bin, a child process, its
// default --memory-limit and --threads) on one partition of ≥ 1M rows, against a plain DuckDB COPY
// of the same segments into one Parquet file (DuckDB's defaults) in the same run. Goal: ≤ 1 GiB
// peak RSS at any partition size. Rows are real (the long fixture session), copied under fresh
// session ids (test/big-partition.ts). LAKE_BENCH_SCALE=0.1 builds 100k rows.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PREFIXES, initFleet, openStore } from "@lake/layout";
import { line, measure, report, scale } from "@lake/tooling/bench";
import { bigPartition } from "../test/big-partition.js";

const BIN = fileURLToPath(new URL("../bin/lake-maint.js", import.meta.url));
const RSS = fileURLToPath(new URL("./maxrss.mjs", import.meta.url));
const COPY = fileURLToPath(new URL("./copy-child.mjs", import.meta.url));

/** Run a node child with the maxRSS preload; its peak RSS (bytes) and exit code. */
function child(args: string[]): Promise<{ code: number | null; rss: number; out: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--import", pathToFileURL(RSS).href, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.on("data", (d: Buffer) => (out += d.toString()));
    p.stderr.on("data", (d: Buffer) => (err += d.toString()));
    p.on("error", reject);
    p.on("close", (code) => {
      const m = /maxrss_kb=(\d+)/.exec(err);
      if (code !== 0 || !m) reject(new Error(`${args.join(" ")}: exit ${code}: ${err.trim().slice(0, 400)}`));
      else resolve({ code, rss: Number(m[1]) * 1024, out });
    });
  });
}

const root = mkdtempSync(join(tmpdir(), "lake-maint-mem-"));
try {
  const url = pathToFileURL(join(root, "store")).href;
  const store = openStore(url);
  await initFleet(store, "bench");
  const target = Math.round(1_000_000 * scale());
  const big = await bigPartition(store, join(root, "segs"), { rows: target, dt: "2026-01-15", fleet: "bench" });
  const list = join(root, "segments.json");
  writeFileSync(list, JSON.stringify(big.paths));
  let subjectRss = 0;
  let baselineRss = 0;
  let compacted = "";
  const subject = await measure(
    "lake-maint compact (defaults: --memory-limit 384, --threads ≤ 2)",
    async () => {
      for await (const o of store.listAll(PREFIXES.compacted)) await store.delete(o.key);
      const r = await child([BIN, "compact", "--store", url]);
      subjectRss = Math.max(subjectRss, r.rss);
      compacted = r.out.trim();
    },
    { runs: 1, warmup: 0 },
  );
  const baseline = await measure(
    "DuckDB COPY of the same segments, DuckDB defaults (baseline)",
    async () => {
      const out = join(root, "baseline.parquet");
      rmSync(out, { force: true });
      const r = await child([COPY, list, out]);
      baselineRss = Math.max(baselineRss, r.rss);
    },
    { runs: 1, warmup: 0 },
  );
  const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
  report(`compact one partition: ${big.rows} rows, ${big.sessions} sessions, ${big.segments} segments`, baseline, [subject]);
  line("peak RSS, lake-maint compact", `${mib(subjectRss)} (goal ≤ 1024 MiB; ${(subjectRss / baselineRss).toFixed(2)}x the baseline's)`);
  line("peak RSS, DuckDB COPY (baseline)", mib(baselineRss));
  line("compact said", compacted);
  store.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}

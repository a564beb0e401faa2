// Compaction: rows/s, and compacted Parquet bytes as a share of the source JSONL bytes (goal ≤ 15%).
// Baseline, on the same bronze segments in the same run: a plain DuckDB COPY of all their rows into
// one zstd Parquet file (no dedupe, no store I/O, no marker).
import { readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { DuckDBInstance } from "@duckdb/node-api";
import { PREFIXES, initFleet, openStore, sealedKey, segmentKey } from "@lake/layout";
import { sqlString, writeSegment } from "@lake/segments";
import { line, measure, report, scale } from "@lake/tooling/bench";
import { generateClaudeCorpus } from "@lake/tooling/corpus";
import { makeContext } from "../src/internal/context.js";
import { runCompact } from "../src/internal/compact.js";
import { claudeRecords } from "../test/convert.js";

const root = mkdtempSync(join(tmpdir(), "lake-maint-bench-"));
try {
  const bytes = Math.round(64 * 1024 * 1024 * scale());
  const corpus = await generateClaudeCorpus({ dir: join(root, "corpus"), bytes, sessionBytes: 4 * 1024 * 1024, seed: 7 });
  const store = openStore(pathToFileURL(join(root, "store")).href);
  await initFleet(store, "bench");
  // A second store with the first two sessions only, for the slow high-zstd-level comparison.
  const small = openStore(pathToFileURL(join(root, "small")).href);
  await initFleet(small, "bench");
  let smallBytes = 0;
  const segDir = join(root, "segs");
  const segPaths: string[] = [];
  let rows = 0;
  for (const file of corpus.files) {
    const session = basename(file, ".jsonl");
    const recs = await claudeRecords(file, session);
    const part = { dt: "2026-01-15", fleet: "bench", runtime: "claude-code", agent: "host-a", session };
    const half = Math.ceil(recs.length / 2);
    const segs = [recs.slice(0, half), recs.slice(half)].filter((x) => x.length > 0);
    for (let i = 0; i < segs.length; i++) {
      const p = join(segDir, `${session}-${i}.parquet`);
      await import("node:fs").then((fs) => fs.mkdirSync(segDir, { recursive: true }));
      await writeSegment(p, segs[i]!.map((r) => ({ ...r, agent: "host-a" })), "bronze");
      await store.upload(segmentKey(part, i), { path: p });
      if (corpus.files.indexOf(file) < 2) await small.upload(segmentKey(part, i), { path: p });
      segPaths.push(p);
    }
    const sealed = Buffer.from(JSON.stringify({ sealed_at: "2026-01-16T00:00:00Z", segments: segs.length, rows: recs.length }));
    await store.putIfAbsent(sealedKey(part), sealed);
    if (corpus.files.indexOf(file) < 2) {
      await small.putIfAbsent(sealedKey(part), sealed);
      smallBytes += statSync(file).size;
    }
    rows += recs.length;
  }
  const ctx = makeContext(store);
  let compactedBytes = 0;
  let outRows = 0;
  const subject = await measure(
    "lake-maint compact (dedupe, parts, marker)",
    async () => {
      // Each run starts from no marker, so it really compacts.
      for await (const o of store.listAll(PREFIXES.compacted)) await store.delete(o.key);
      const r = await runCompact(ctx);
      outRows = r.reduce((n, p) => n + (p.rows ?? 0), 0);
      compactedBytes = 0;
      for await (const o of store.listAll(PREFIXES.compacted)) if (o.key.endsWith(".parquet")) compactedBytes += o.size;
    },
    { runs: 3, warmup: 1, bytes: corpus.bytes },
  );
  let baselineBytes = 0;
  const baseline = await measure(
    "DuckDB COPY of the same rows (baseline)",
    async () => {
      const out = join(root, "baseline.parquet");
      rmSync(out, { force: true });
      const db = await DuckDBInstance.create(":memory:");
      const conn = await db.connect();
      await conn.run(`COPY (SELECT * FROM read_parquet([${segPaths.map(sqlString).join(", ")}])) TO ${sqlString(out)} (FORMAT parquet, COMPRESSION zstd)`);
      conn.closeSync();
      db.closeSync();
      baselineBytes = statSync(out).size;
    },
    { runs: 3, warmup: 1, bytes: corpus.bytes },
  );
  report(`compact ${corpus.files.length} sessions, ${rows} rows from ${(corpus.bytes / 1e6).toFixed(1)} MB of Claude Code JSONL`, baseline, [subject]);
  line("compact rows/s", `${Math.round(rows / (subject.medianMs / 1000))} (baseline ${Math.round(rows / (baseline.medianMs / 1000))})`);
  line("rows after dedupe", `${outRows} of ${rows}`);
  line("compacted Parquet / source JSONL", `${((100 * compactedBytes) / corpus.bytes).toFixed(1)}% (goal ≤ 15%; baseline COPY ${((100 * baselineBytes) / corpus.bytes).toFixed(1)}%)`);
  const bronze = readdirSync(segDir).reduce((n, f) => n + statSync(join(segDir, f)).size, 0);
  line("bronze segments / source JSONL", `${((100 * bronze) / corpus.bytes).toFixed(1)}%`);
  // The goal's other side: the same partition at zstd level 17 (one run; it is much slower).
  const partBytes = async (s: typeof store) => {
    let n = 0;
    for await (const o of s.listAll(PREFIXES.compacted)) if (o.key.endsWith(".parquet")) n += o.size;
    return n;
  };
  const sctx = makeContext(small);
  const lvl3 = await measure("compact, 2 sessions, zstd level 3", async () => {
    for await (const o of small.listAll(PREFIXES.compacted)) await small.delete(o.key);
    await runCompact(sctx);
  }, { runs: 1, warmup: 0, bytes: smallBytes });
  const b3 = await partBytes(small);
  const lvl17 = await measure("compact, 2 sessions, zstd level 17", async () => {
    for await (const o of small.listAll(PREFIXES.compacted)) await small.delete(o.key);
    await runCompact(sctx, { zstdLevel: 17 });
  }, { runs: 1, warmup: 0, bytes: smallBytes });
  const b17 = await partBytes(small);
  report(`compaction level (${(smallBytes / 1e6).toFixed(1)} MB of JSONL)`, lvl3, [lvl17]);
  line("compacted Parquet / source JSONL at zstd 3 vs 17", `${((100 * b3) / smallBytes).toFixed(1)}% vs ${((100 * b17) / smallBytes).toFixed(1)}%`);
  small.close();
  store.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}

// parse + canonicalize throughput on a generated Claude Code corpus (500 MB × scale), as a ratio to
// a raw read + JSON.parse of the same bytes in the same run; then peak memory while streaming one
// 700 MB (× scale) file, which must stay bounded (the file is never read whole).
import { rmSync } from "node:fs";
import { canonicalize } from "@lake/events";
import { line, measure, report, scale } from "@lake/tooling/bench";
import { generateClaudeCorpus } from "@lake/tooling/corpus";
import { tempDir } from "@lake/tooling/tmp";
import { parseFile, readLines } from "../src/index.js";

const MB = 1e6;
const s = scale();
const dir = tempDir("adapters-bench");
try {
  const corpus = await generateClaudeCorpus({ dir, bytes: Math.round(500 * MB * s), seed: 7 });
  line("corpus", `${corpus.files.length} files, ${(corpus.bytes / MB).toFixed(0)} MB, ${corpus.lines} lines`);
  let sink = 0;
  const baseline = await measure(
    "read + JSON.parse",
    async () => {
      for (const f of corpus.files) for await (const l of readLines(f)) sink += (JSON.parse((l.bytes as Buffer).toString("utf8")) as { type?: string }).type?.length ?? 0;
    },
    { runs: 3, warmup: 0, bytes: corpus.bytes },
  );
  let records = 0;
  const subject = await measure(
    "parseFile + canonicalize",
    async () => {
      records = 0;
      for (const f of corpus.files)
        for await (const r of parseFile(f, { runtime: "claude-code" })) {
          sink += canonicalize(r).content_hash.length;
          records++;
        }
    },
    { runs: 3, warmup: 0, bytes: corpus.bytes },
  );
  report("Claude Code parse + canonicalize vs read + JSON.parse (same bytes, same run)", baseline, [subject], [`${records} records from ${corpus.lines} lines (sink ${sink % 10})`]);
  rmSync(dir, { recursive: true, force: true });

  // Peak memory on one big file.
  const bigDir = tempDir("adapters-bench-big");
  const bigBytes = Math.round(700 * MB * s);
  const big = await generateClaudeCorpus({ dir: bigDir, bytes: bigBytes, sessionBytes: bigBytes, seed: 11 });
  (globalThis as { gc?: () => void }).gc?.();
  const start = process.memoryUsage();
  let peakRss = start.rss;
  let peakHeap = start.heapUsed;
  let n = 0;
  const t0 = performance.now();
  for await (const r of parseFile(big.files[0]!, { runtime: "claude-code" })) {
    canonicalize(r);
    if (++n % 2000 === 0) {
      const m = process.memoryUsage();
      if (m.rss > peakRss) peakRss = m.rss;
      if (m.heapUsed > peakHeap) peakHeap = m.heapUsed;
    }
  }
  const secs = (performance.now() - t0) / 1000;
  console.log(`\n## Peak memory streaming one ${(big.bytes / MB).toFixed(0)} MB file (${big.files.length} file, ${n} records, ${(big.bytes / MB / secs).toFixed(1)} MB/s)`);
  line("RSS at start", `${(start.rss / MB).toFixed(0)} MB`);
  line("RSS high-water", `${(peakRss / MB).toFixed(0)} MB (+${((peakRss - start.rss) / MB).toFixed(0)} MB)`);
  line("heap high-water", `${(peakHeap / MB).toFixed(0)} MB (+${((peakHeap - start.heapUsed) / MB).toFixed(0)} MB)`);
  line("RSS growth / file size", `${((peakRss - start.rss) / big.bytes).toFixed(3)}`);
  rmSync(bigDir, { recursive: true, force: true });
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// `lake-reader usage daily --json` from a fleet store against `ccusage daily --json` over the same
// generated Claude Code corpus (1 GB at scale 1). The fleet is built once from the corpus through
// @lake/adapters (discover → parseFile → canonicalize → sealed bronze segments), then compacted by
// the real `lake-maint compact` (which writes each partition's usage rollup); building and
// compacting are not timed (compaction's time is printed). The reader is timed twice: over the
// bronze fleet before compaction (every row read with DuckDB) and over the compacted fleet (the
// state maintenance keeps a fleet in: rollups added, no row read). Every side is timed as whole
// command runs (a new process each: start-up, imports and all), one after the other in the same
// run on the same machine. Goal: ≥ 10× faster. Needs the built bins (turbo's bench task builds first).
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { canonicalize, type CanonicalRecord } from "@lake/events";
import { claudeCodeAdapter, parseFile } from "@lake/adapters";
import { generateClaudeCorpus } from "@lake/tooling/corpus";
import { line, measure, report, scale } from "@lake/tooling/bench";
import { tempDir } from "@lake/tooling/tmp";
import { pushBronze } from "../test/support/fleet.js";

const bytes = Math.round(1024 * 1024 * 1024 * scale());
const dir = tempDir("reader-bench");
const config = join(dir, "claude");
const fleet = join(dir, "fleet");
const ccusage = fileURLToPath(new URL("../node_modules/.bin/ccusage", import.meta.url));
const bin = fileURLToPath(new URL("../bin/lake-reader.js", import.meta.url));
const maint = fileURLToPath(new URL("../../maint/bin/lake-maint.js", import.meta.url));

try {
  const corpus = await generateClaudeCorpus({ dir: config, bytes, seed: 7 });
  line("corpus", `${corpus.bytes} bytes (${(corpus.bytes / 1e6).toFixed(0)} MB), ${corpus.files.length} files, ${corpus.lines} lines`);
  const found = await claudeCodeAdapter.discover({ roots: [join(config, "projects")] });
  let rows = 0;
  for (const s of found.sources) {
    const recs: CanonicalRecord[] = [];
    for await (const r of parseFile(s.path, { source: s })) recs.push(canonicalize(r));
    rows += recs.length;
    await pushBronze(fleet, recs);
  }
  line("fleet", `${rows} rows in ${found.sources.length} sessions (bronze segments)`);
  const store = pathToFileURL(fleet).href;
  const runs = { runs: 3, warmup: 1, bytes: corpus.bytes };
  const reader = () =>
    execFileSync(process.execPath, [bin, "usage", "daily", "--json", "--store", store], {
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
      env: { PATH: process.env.PATH, LAKE_READER_CACHE: join(dir, "cache"), HOME: dir },
    });
  let bronzeOut = "";
  const bronze = await measure("lake-reader usage daily --json (bronze: rows)", () => void (bronzeOut = reader()), runs);
  const maintRun = (args: string[]) => execFileSync(process.execPath, [maint, ...args, "--store", store], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH, HOME: dir } });
  maintRun(["init", "--fleet-id", "f1"]);
  const t0 = performance.now();
  const compacted = JSON.parse(maintRun(["compact", "--json"])) as { partitions: { status: string; rows?: number }[] };
  const compactMs = performance.now() - t0;
  line("lake-maint compact", `${compacted.partitions.length} partitions, ${compacted.partitions.reduce((n, p) => n + (p.rows ?? 0), 0)} rows, ${(compactMs / 1000).toFixed(1)} s (not timed below)`);
  let lakeOut = "";
  const lake = await measure("lake-reader usage daily --json (compacted: rollups)", () => void (lakeOut = reader()), runs);
  let ccOut = "";
  const cc = await measure(
    "ccusage daily --json",
    () => {
      ccOut = execFileSync(ccusage, ["daily", "--json", "--offline", "--timezone", "UTC"], {
        encoding: "utf8",
        maxBuffer: 256 * 1024 * 1024,
        env: { PATH: process.env.PATH, HOME: dir, CLAUDE_CONFIG_DIR: config, TZ: "UTC" },
      });
    },
    runs,
  );
  const ours = JSON.parse(lakeOut) as { totals: { total_tokens: number | null } };
  const ours0 = JSON.parse(bronzeOut) as { totals: { total_tokens: number | null } };
  if (JSON.stringify(JSON.parse(lakeOut)) !== JSON.stringify(JSON.parse(bronzeOut))) throw new Error("usage daily differs between the bronze and the compacted fleet");
  const theirs = JSON.parse(ccOut) as { totals: { totalTokens: number } };
  line("corpus bytes", String(corpus.bytes));
  line("fleet rows", String(rows));
  line("ccusage median", `${cc.medianMs.toFixed(0)} ms`);
  line("lake-reader median (bronze)", `${bronze.medianMs.toFixed(0)} ms`);
  line("lake-reader median (compacted)", `${lake.medianMs.toFixed(0)} ms`);
  report("usage daily: lake-reader (fleet) vs ccusage (raw JSONL), whole command runs", cc, [bronze, lake], [
    `total tokens: lake ${ours.totals.total_tokens} (bronze ${ours0.totals.total_tokens}), ccusage ${theirs.totals.totalTokens}`,
    `ratio (compacted fleet): lake-reader is ${(cc.medianMs / lake.medianMs).toFixed(2)}x as fast as ccusage (goal >= 10x)`,
    `ratio (bronze only, before maint): ${(cc.medianMs / bronze.medianMs).toFixed(2)}x`,
  ]);
} finally {
  if (!process.env.LAKE_KEEP_TMP) rmSync(dir, { recursive: true, force: true });
}

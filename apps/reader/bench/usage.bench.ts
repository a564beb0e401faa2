// `lake-reader usage daily --json` from a fleet store against `ccusage daily --json` over the same
// generated Claude Code corpus (1 GB at scale 1). The fleet is built once from the corpus
// (test-only converter → bronze segments); building it is not timed. Goal: ≥ 10× faster.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { generateClaudeCorpus } from "@lake/tooling/corpus";
import { line, measure, report, scale } from "@lake/tooling/bench";
import { tempDir } from "@lake/tooling/tmp";
import { main } from "../src/cli.js";
import { convertClaudeFile } from "../test/support/claude-convert.js";
import { pushBronze } from "../test/support/fleet.js";

const bytes = Math.round(1024 * 1024 * 1024 * scale());
const dir = tempDir("reader-bench");
const config = join(dir, "claude");
const fleet = join(dir, "fleet");
const ccusage = fileURLToPath(new URL("../node_modules/.bin/ccusage", import.meta.url));

try {
  const corpus = await generateClaudeCorpus({ dir: config, bytes, seed: 7 });
  line("corpus", `${corpus.files.length} files, ${(corpus.bytes / 1e6).toFixed(0)} MB, ${corpus.lines} lines`);
  let rows = 0;
  for (const f of corpus.files) {
    const recs = convertClaudeFile(f, relative(join(config, "projects"), f));
    rows += recs.length;
    await pushBronze(fleet, recs);
  }
  line("fleet", `${rows} rows in ${corpus.files.length} sessions`);
  const store = pathToFileURL(fleet).href;
  const env = { PATH: process.env.PATH, LAKE_READER_CACHE: join(dir, "cache") };
  let lakeOut = "";
  const lake = await measure(
    "lake-reader usage daily --json",
    async () => {
      lakeOut = "";
      const code = await main(["usage", "daily", "--json", "--store", store], { out: (s) => (lakeOut += s), err: (s) => process.stderr.write(s), env });
      if (code !== 0) throw new Error(`lake-reader exited ${code}`);
    },
    { runs: 3, warmup: 1, bytes: corpus.bytes },
  );
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
    { runs: 3, warmup: 1, bytes: corpus.bytes },
  );
  const ours = JSON.parse(lakeOut) as { totals: { total_tokens: number | null } };
  const theirs = JSON.parse(ccOut) as { totals: { totalTokens: number } };
  report("usage daily: lake-reader (fleet) vs ccusage (raw JSONL)", cc, [lake], [
    `total tokens: lake ${ours.totals.total_tokens}, ccusage ${theirs.totals.totalTokens}`,
    `lake-reader is ${(cc.medianMs / lake.medianMs).toFixed(1)}x faster (goal >= 10x)`,
  ]);
} finally {
  if (!process.env.LAKE_KEEP_TMP) rmSync(dir, { recursive: true, force: true });
}

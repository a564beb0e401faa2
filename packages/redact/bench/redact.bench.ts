// @lake/redact benchmark.
// 1. Precision and recall per rule and overall on the labelled corpus (test/corpus.ts), and per
//    kind and per location on the format corpus (test/formats.ts: formats from the public rule
//    sets, planted in prose, commands, tool output and file content of real record lines).
// 2. Throughput on 500 MB (× LAKE_BENCH_SCALE) of transcript-like text: Claude Code JSONL from
//    @lake/tooling/corpus with labelled corpus texts planted as tool results every ~200 lines.
//    Baseline: a plain scan of the same bytes (a JS byte loop counting newlines), measured in
//    the same run; also Buffer.indexOf over the same bytes for reference.
// 3. The keyword prefilter alone, and whole redaction, on text with no secret (the same JSONL
//    without planted texts), against a JS loop over the same strings' code units.
import { readFileSync } from "node:fs";
import { generateClaudeCorpus } from "@lake/tooling/corpus";
import { line, measure, report, scale } from "@lake/tooling/bench";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { createRedactor, memoryKey } from "../src/index.js";
import { generateLabelledCorpus } from "../test/corpus.js";
import { precision, recall, score } from "../test/score.js";
import { KINDS, LOCATIONS, formatPrecision, formatRecall, generateFormatCorpus, scoreFormats } from "../test/formats.js";
import { KeywordMatcher } from "../src/internal/keywords.js";
import { defaultRules } from "../src/index.js";

const redactor = createRedactor({ key: memoryKey(), quarantineRules: [] });

// ---- 1. precision / recall ----
const items = generateLabelledCorpus(1, 5);
const s = score(redactor, items);
console.log(`\n## precision / recall on the labelled corpus (${items.length} texts, ${s.overall.labels} planted secrets, seed 1, 5 variants)`);
for (const [rule, c] of s.perRule) {
  line(rule.padEnd(24), `precision ${precision(c).toFixed(3)}  recall ${recall(c).toFixed(3)}  (tp ${c.tp}, fp ${c.fp}, found ${c.found}/${c.labels})`);
}
line("overall".padEnd(24), `precision ${precision(s.overall).toFixed(3)}  recall ${recall(s.overall).toFixed(3)}  (goal ≥ 0.95 / ≥ 0.95)`);
for (const e of s.errors.slice(0, 10)) line(`  ${e.kind}`, `${e.rule} in ${e.id}`);

// ---- 1b. the format corpus ----
{
  const fitems = generateFormatCorpus(1, 5);
  const fs = scoreFormats((t) => redactor.redactString(t).findings, fitems);
  console.log(`\n## precision / recall on the format corpus (${KINDS.length} documented formats, ${fs.overall.labels} planted secrets in real record lines, ${fitems.filter((i) => i.kind.startsWith("bait:")).length} bait lines, seed 1, 5 variants)`);
  for (const l of LOCATIONS) {
    const c = fs.byLocation.get(l)!;
    line(l.padEnd(24), `precision ${formatPrecision(c).toFixed(3)}  recall ${formatRecall(c).toFixed(3)}  (found ${c.found}/${c.labels}, false positives ${c.falsePositives})`);
  }
  line("overall".padEnd(24), `precision ${formatPrecision(fs.overall).toFixed(3)}  recall ${formatRecall(fs.overall).toFixed(3)}  (goal precision ≥ 0.99, recall ≥ 0.97, prose ≥ 0.95)`);
  const bait = [...fs.byKind].filter(([k]) => k.startsWith("bait:")).reduce((a, [, c]) => a + c.findings, 0);
  line("masks on bait".padEnd(24), String(bait));
  console.log("  per kind (precision / recall):");
  const kinds = [...fs.byKind].filter(([k]) => !k.startsWith("bait:"));
  for (let i = 0; i < kinds.length; i += 3) {
    console.log("    " + kinds.slice(i, i + 3).map(([k, c]) => `${k.padEnd(30)} ${formatPrecision(c).toFixed(2)} / ${formatRecall(c).toFixed(2)}`).join("   "));
  }
  for (const m of fs.misses.slice(0, 10)) line("  miss", m.id);
  for (const f of fs.falsePositives.slice(0, 10)) line("  false positive", `${f.rule} in ${f.id}`);
}

// ---- 2. throughput ----
const target = Math.round(500e6 * scale());
const dir = tempDir("redact-bench");
const unique = Math.min(target, 64e6);
await generateClaudeCorpus({ dir, bytes: unique, seed: 5 });
const plant = items.filter((i) => i.labels.length > 0).map((i) => i.text);
const chunks: Buffer[] = [];
{
  // Re-read the generated tree and plant labelled texts as tool results.
  const walkFs = await import("node:fs");
  const { readdirSync, statSync } = walkFs;
  const walk = (d: string): string[] => readdirSync(d).flatMap((f) => (statSync(`${d}/${f}`).isDirectory() ? walk(`${d}/${f}`) : f.endsWith(".jsonl") ? [`${d}/${f}`] : []));
  let p = 0;
  for (const f of walk(dir)) {
    const lines = readFileSync(f, "utf8").split("\n");
    const out: string[] = [];
    lines.forEach((l, i) => {
      out.push(l);
      if (l && i % 200 === 199) out.push(JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "tool_result", content: plant[p++ % plant.length] }] } }));
    });
    chunks.push(Buffer.from(out.join("\n")));
  }
}
const uniqueBytes = chunks.reduce((a, b) => a + b.length, 0);
const data: Buffer[] = [];
let total = 0;
while (total < target) {
  for (const c of chunks) {
    if (total >= target) break;
    data.push(c);
    total += c.length;
  }
}
console.log(`\n## throughput: ${(total / 1e6).toFixed(0)} MB of transcript-like JSONL (${(uniqueBytes / 1e6).toFixed(0)} MB unique, repeated; ${plant.length} planted texts cycled every 200 lines)`);

let sink = 0;
const baseline = await measure(
  "plain scan (JS byte loop)",
  () => {
    let n = 0;
    for (const b of data) for (let i = 0; i < b.length; i++) if (b[i] === 10) n++;
    sink += n;
  },
  { runs: 5, warmup: 1, bytes: total },
);
const indexOf = await measure(
  "Buffer.indexOf scan",
  () => {
    for (const b of data) sink += b.indexOf("\u0001never-present\u0001");
  },
  { runs: 5, warmup: 1, bytes: total },
);
let found = 0;
for (const b of chunks) for (const l of b.toString("utf8").split("\n")) found += redactor.redactString(l).findings.length;
const findingsUnique = found;
const lines = await measure(
  "redactString per line (decode + split + redact)",
  () => {
    for (const b of data) for (const l of b.toString("utf8").split("\n")) found += redactor.redactString(l).findings.length;
  },
  { runs: 3, warmup: 1, bytes: total },
);
const decodeOnly = await measure(
  "decode + split + JSON.parse (no redaction)",
  () => {
    for (const b of data) for (const l of b.toString("utf8").split("\n")) if (l) sink += JSON.parse(l) === null ? 1 : 0;
  },
  { runs: 3, warmup: 1, bytes: total },
);
const values = await measure(
  "redactValue per record (decode + split + JSON.parse + redact)",
  () => {
    for (const b of data) for (const l of b.toString("utf8").split("\n")) if (l) found += redactor.redactValue(JSON.parse(l)).findings.length;
  },
  { runs: 3, warmup: 1, bytes: total },
);
report("redaction throughput vs a plain scan of the same bytes", baseline, [indexOf, lines, decodeOnly, values], [
  `ratio = baseline time / subject time (1.00x = as fast as the plain byte loop)`,
  `findings in the unique bytes: ${findingsUnique} (sink ${sink % 7})`,
]);
// ---- 3. prefilter on text with no secret ----
{
  const clean: string[] = [];
  const walkFs = await import("node:fs");
  const walk = (d: string): string[] => walkFs.readdirSync(d).flatMap((f) => (walkFs.statSync(`${d}/${f}`).isDirectory() ? walk(`${d}/${f}`) : f.endsWith(".jsonl") ? [`${d}/${f}`] : []));
  let cleanBytes = 0;
  for (const f of walk(dir)) {
    for (const l of readFileSync(f, "utf8").split("\n")) {
      if (!l) continue;
      clean.push(l);
      cleanBytes += Buffer.byteLength(l) + 1;
    }
  }
  const secretsInClean = clean.reduce((a, l) => a + redactor.redactString(l).findings.length, 0);
  const matcher = new KeywordMatcher(defaultRules.map((r) => r.keywords));
  const hits = new Uint8Array(defaultRules.length);
  let marked = 0;
  const loop = await measure(
    "JS loop over the code units",
    () => {
      let n = 0;
      for (const l of clean) for (let i = 0; i < l.length; i++) if (l.charCodeAt(i) === 10) n++;
      sink += n;
    },
    { runs: 5, warmup: 1, bytes: cleanBytes },
  );
  const pre = await measure(
    "keyword prefilter (Aho–Corasick DFA)",
    () => {
      for (const l of clean) {
        hits.fill(0);
        marked += matcher.scan(l, hits);
      }
    },
    { runs: 5, warmup: 1, bytes: cleanBytes },
  );
  const whole = await measure(
    "redactString (prefilter + the regexes it selects)",
    () => {
      for (const l of clean) sink += redactor.redactString(l).findings.length;
    },
    { runs: 3, warmup: 1, bytes: cleanBytes },
  );
  report("text with no secret: prefilter and redaction vs a plain loop over the same strings", loop, [pre, whole], [
    `${(cleanBytes / 1e6).toFixed(0)} MB of generated Claude Code JSONL, ${clean.length} lines, ${defaultRules.length} rules, ${secretsInClean} findings (goal: prefilter ≥ 200 MB/s)`,
    `rules selected per line on average: ${(marked / clean.length / (pre.runs + 1)).toFixed(2)}`,
  ]);
}
cleanupTempDirs();

import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { fixture } from "@lake/testdata";
import { createRedactor, defaultRules, memoryKey } from "../src/index.js";
import { PLANTS, UNPLANTED, generateLabelledCorpus } from "./corpus.js";
import { precision, recall, score } from "./score.js";

const red = createRedactor({ key: memoryKey(), quarantineRules: [] });
const items = generateLabelledCorpus(1, 3);

describe("labelled corpus", () => {
  it("is deterministic and covers every rule in every context", () => {
    expect(generateLabelledCorpus(1, 3)).toEqual(items);
    expect(generateLabelledCorpus(2, 3)).not.toEqual(items);
    expect([...PLANTS.map((p) => p.rule), ...UNPLANTED].sort()).toEqual(defaultRules.map((r) => r.id).sort());
    const contexts = new Set(items.map((i) => i.context));
    for (const c of ["raw", "json", "json2", "code", "python", "curl", "env", "split", "json-split"]) expect(contexts).toContain(c);
    for (const k of ["uuid", "git-sha", "checksum", "integrity", "base64-image", "placeholder", "doc-example"]) expect(contexts).toContain(`negative:${k}`);
    for (const it of items) for (const l of it.labels) expect(it.text.slice(l.start, l.end)).toBe(l.raw);
  });

  it("reaches precision ≥ 0.95 and recall ≥ 0.95 per rule and overall", () => {
    const s = score(red, items);
    const table = [...s.perRule].map(([rule, c]) => ({ rule, p: precision(c), r: recall(c), labels: c.labels }));
    for (const row of table) {
      if (UNPLANTED.includes(row.rule)) continue;
      expect(row.labels, row.rule).toBeGreaterThan(0);
      expect(row.p, `${row.rule} precision`).toBeGreaterThanOrEqual(0.95);
      expect(row.r, `${row.rule} recall`).toBeGreaterThanOrEqual(0.95);
    }
    expect(precision(s.overall)).toBeGreaterThanOrEqual(0.95);
    expect(recall(s.overall)).toBeGreaterThanOrEqual(0.95);
  });

  it("finds nothing in the hard negatives", () => {
    const hits = items.filter((i) => i.context.startsWith("negative:")).flatMap((i) => red.redactString(i.text).findings.map((f) => `${i.id} ${f.rule}`));
    expect(hits).toEqual([]);
  });

  it("finds nothing in a real (sanitized) Claude Code transcript", () => {
    const text = readFileSync(fixture("claude-code/marot-spotter/tool_heavy.jsonl"), "utf8");
    const lines = text.split("\n").filter(Boolean);
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) {
      expect(red.redactString(line).findings).toEqual([]);
      expect(red.redactValue(JSON.parse(line)).findings).toEqual([]);
    }
  });
});

// The format corpus (test/formats.ts): formats from the public rule sets, planted in real record
// lines in four locations, scored against lake's default rules; and no mask at all on the bait
// set or on the repository's real transcripts.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { fixtureFiles } from "@lake/testdata";
import { createRedactor, memoryKey, type JsonValue } from "../src/index.js";
import { KINDS, LOCATIONS, formatPrecision, formatRecall, generateFormatCorpus, scoreFormats } from "./formats.js";

const red = createRedactor({ key: memoryKey(), quarantineRules: [] });
const findingsOf = (t: string) => red.redactString(t).findings;

describe("format corpus", () => {
  const items = generateFormatCorpus(7, 3);

  it("covers at least 131 documented formats in all four locations, with exact labels", () => {
    expect(KINDS.length).toBeGreaterThanOrEqual(131);
    expect(new Set(KINDS.map((k) => k.kind)).size).toBe(KINDS.length);
    expect(generateFormatCorpus(7, 3)).toEqual(items);
    for (const l of LOCATIONS) expect(items.filter((i) => i.location === l && i.labels.length > 0).length).toBeGreaterThanOrEqual(KINDS.length * 3);
    for (const i of items) for (const l of i.labels) expect(l.end - l.start).toBeGreaterThan(5);
    // Lines are real JSON records.
    for (const i of items) expect(() => JSON.parse(i.text)).not.toThrow();
  });

  it("recall ≥ 0.97 overall and ≥ 0.95 in prose, precision ≥ 0.99 (two seeds)", () => {
    for (const seed of [7, 8]) {
      const s = scoreFormats(findingsOf, seed === 7 ? items : generateFormatCorpus(seed, 3));
      expect(formatRecall(s.overall), JSON.stringify(s.misses.slice(0, 5))).toBeGreaterThanOrEqual(0.97);
      expect(formatRecall(s.byLocation.get("prose")!)).toBeGreaterThanOrEqual(0.95);
      for (const l of LOCATIONS) expect(formatRecall(s.byLocation.get(l)!), l).toBeGreaterThanOrEqual(0.95);
      expect(formatPrecision(s.overall), JSON.stringify(s.falsePositives.slice(0, 5))).toBeGreaterThanOrEqual(0.99);
      // Scoring is not vacuous: a redactor with no rules finds nothing and scores recall 0.
      expect(s.overall.labels).toBeGreaterThan(1500);
    }
    const none = scoreFormats(() => [], items);
    expect(formatRecall(none.overall)).toBe(0);
  });

  it("masks nothing in the bait set (git SHAs, integrity hashes, digests, PNGs, SSH keys, AWS doc keys, placeholders, UUIDs)", () => {
    const bait = items.filter((i) => i.kind.startsWith("bait:"));
    expect(new Set(bait.map((b) => b.kind)).size).toBeGreaterThanOrEqual(10);
    const hits = bait.flatMap((b) => [...findingsOf(b.text), ...red.redactValue(JSON.parse(b.text) as JsonValue).findings].map((f) => `${b.id} ${f.rule}`));
    expect(hits).toEqual([]);
  });

  it("masks nothing in the repository's real transcripts (@lake/testdata: Claude Code, Codex, Gemini CLI)", () => {
    const files = ["claude-code", "codex", "gemini"].flatMap((r) => fixtureFiles(r).map((f) => f.path));
    let lines = 0;
    const hits: string[] = [];
    for (const f of files) {
      if (!/\.(?:jsonl|json|ndjson)$/.test(f)) continue;
      for (const line of readFileSync(f, "utf8").split("\n")) {
        if (!line) continue;
        lines++;
        for (const x of findingsOf(line)) hits.push(`${f}: ${x.rule}`);
        let v: JsonValue | undefined;
        try {
          v = JSON.parse(line) as JsonValue;
        } catch {
          v = undefined;
        }
        if (v !== undefined) for (const x of red.redactValue(v).findings) hits.push(`${f}: ${x.rule} at ${x.path.join(".")}`);
      }
    }
    expect(lines).toBeGreaterThan(1000);
    expect(hits).toEqual([]);
  });
});

// The keyword prefilter against the plain definition: a rule is marked exactly when one of its
// keywords occurs in the text, ASCII case ignored — over random keyword tables and texts built from
// a small alphabet (so keywords overlap, nest and share prefixes and suffixes), and the default rules.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { defaultRules } from "../src/index.js";
import { KeywordMatcher } from "../src/internal/keywords.js";

function naive(keywordsByRule: readonly (readonly string[])[], text: string): number[] {
  const lower = text.replace(/[A-Z]/g, (c) => c.toLowerCase());
  return keywordsByRule.flatMap((kws, rule) => (kws.some((k) => lower.includes(k.toLowerCase())) ? [rule] : []));
}

function marked(m: KeywordMatcher, text: string): { rules: number[]; count: number } {
  const hits = new Uint8Array(m.ruleCount);
  const count = m.scan(text, hits);
  return { rules: [...hits].flatMap((h, i) => (h ? [i] : [])), count };
}

describe("KeywordMatcher", () => {
  it("marks exactly the rules with a keyword in the text (random tables over a small alphabet)", () => {
    const word = fc.string({ unit: fc.constantFrom("a", "b", "A", "c", "_"), minLength: 1, maxLength: 5 });
    const text = fc.string({ unit: fc.constantFrom("a", "b", "B", "c", "_", "é", "x"), maxLength: 40 });
    fc.assert(
      fc.property(fc.array(fc.array(word, { maxLength: 4 }), { minLength: 1, maxLength: 8 }), fc.array(text, { minLength: 1, maxLength: 6 }), (table, texts) => {
        const m = new KeywordMatcher(table);
        for (const t of texts) {
          const { rules, count } = marked(m, t);
          expect(rules, JSON.stringify({ table, t })).toEqual(naive(table, t));
          expect(count).toBe(rules.length);
        }
      }),
      { numRuns: 400, seed: 20261201 },
    );
  });

  it("the default rules: each keyword, in any case, inside other text marks its rules and only rules holding it", () => {
    const table = defaultRules.map((r) => r.keywords);
    const m = new KeywordMatcher(table);
    for (const kw of new Set(table.flat())) {
      for (const t of [`..${kw.toUpperCase()}..`, `x${kw}y`, kw]) expect(marked(m, t).rules, t).toEqual(naive(table, t));
    }
    expect(marked(m, "nothing secret in this sentence at all").rules).toEqual(naive(table, "nothing secret in this sentence at all"));
  });
});

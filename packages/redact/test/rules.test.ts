import { describe, expect, it } from "vitest";
import { createRedactor, defaultRules, memoryKey } from "../src/index.js";

const key = memoryKey("00".repeat(32));

describe("rule table", () => {
  const all = createRedactor({ key });
  for (const rule of defaultRules) {
    describe(rule.id, () => {
      const only = createRedactor({ key, rules: [rule], quarantineRules: [], secretKeyNames: false });
      it("has keywords, examples and negatives", () => {
        expect(rule.keywords.length).toBeGreaterThan(0);
        expect(rule.examples.length).toBeGreaterThan(0);
        expect(rule.negatives.length).toBeGreaterThan(0);
        expect(rule.description.length).toBeGreaterThan(10);
      });
      rule.examples.forEach((ex, i) => {
        it(`example ${i} matches (alone and in the full table)`, () => {
          expect(only.redactString(ex).rules).toEqual([rule.id]);
          expect(all.redactString(ex).rules).toContain(rule.id);
        });
      });
      rule.negatives.forEach((neg, i) => {
        it(`negative ${i} does not match`, () => {
          expect(only.redactString(neg).findings).toEqual([]);
        });
      });
    });
  }
  it("no pattern matches the empty string (the engine skips that check for the default table's own patterns)", () => {
    // Copies of the patterns are not the table's: the engine checks each of them as it would a caller's rule.
    const copies = defaultRules.map((r) => ({ ...r, pattern: new RegExp(r.pattern.source, r.pattern.flags) }));
    expect(() => createRedactor({ key, rules: copies })).not.toThrow();
    expect(() => createRedactor({ key, rules: [{ ...defaultRules[0]!, pattern: new RegExp(`(?:${defaultRules[0]!.pattern.source})?`) }] })).toThrow(/matches the empty string/);
  });
  it("the table is in priority order with unique ids", () => {
    const ids = defaultRules.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.slice(-2)).toEqual(["generic-secret", "prose-secret"]);
    expect(ids.indexOf("anthropic-api-key")).toBeLessThan(ids.indexOf("openai-api-key"));
  });
});

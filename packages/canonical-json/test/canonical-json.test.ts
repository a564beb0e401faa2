import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { canonicalJson } from "../src/index.js";

// Golden vectors: the text each input gives, byte for byte (the chain's round files, the layout's
// fleet objects and the redactor's record hashes are digests over these bytes).
const VECTORS: [unknown, string][] = [
  [null, "null"],
  [true, "true"],
  [0, "0"],
  [-0, "0"],
  [1.5, "1.5"],
  [1e21, "1e+21"],
  [Number.NaN, "null"],
  ["é\u2028\"\\\n\u0001", '"é\u2028\\"\\\\\\n\\u0001"'],
  [{ b: 1, a: [2, { d: null, c: "x" }], é: true, Z: false, z: undefined }, '{"Z":false,"a":[2,{"c":"x","d":null}],"b":1,"é":true}'],
  [{ "\ud83d\ude00": 1, "\uffff": 2 }, '{"\ud83d\ude00":1,"\uffff":2}'],
  [[], "[]"],
  [{}, "{}"],
];

describe("canonicalJson", () => {
  it("writes each golden vector's bytes", () => {
    for (const [v, text] of VECTORS) expect(canonicalJson(v)).toBe(text);
  });

  it("for any JSON value: parses back to the value, and a value with its keys in another order gives the same text", () => {
    const reversed = (v: unknown): unknown =>
      Array.isArray(v) ? v.map(reversed) : v !== null && typeof v === "object" ? Object.fromEntries(Object.keys(v).reverse().map((k) => [k, reversed((v as Record<string, unknown>)[k])])) : v;
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = canonicalJson(v);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(v)));
        expect(canonicalJson(reversed(v))).toBe(text);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
    );
  });

  it("for any value, the text is the one joining each piece as a string gives (the writer before the UTF-8 buffer)", () => {
    // An independent writer: strings and keys through JSON.stringify, keys through sort(), pieces joined as strings.
    const reference = (v: unknown): string => {
      if (v === null) return "null";
      if (typeof v === "boolean") return v ? "true" : "false";
      if (typeof v === "number") return Number.isFinite(v) ? String(v) : "null";
      if (typeof v === "string") return JSON.stringify(v);
      if (Array.isArray(v)) return `[${v.map(reference).join(",")}]`;
      const o = v as Record<string, unknown>;
      return `{${Object.keys(o)
        .sort()
        .filter((k) => o[k] !== undefined)
        .map((k) => `${JSON.stringify(k)}:${reference(o[k])}`)
        .join(",")}}`;
    };
    // Strings of every kind (long and short, lone surrogates, escapes, astral), objects of many keys in any order.
    const str = fc.oneof(fc.string(), fc.string({ unit: "binary", maxLength: 80 }), fc.string({ unit: fc.constantFrom("a", "Z", '"', "\\", "\u007f", "\u0000", "\ud800", "é"), maxLength: 60 }));
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: "small" }, fc.constant(null), fc.boolean(), fc.integer(), fc.double(), str, fc.array(tie("value")), fc.dictionary(fc.oneof(str, fc.nat().map(String)), tie("value"), { maxKeys: 40 })),
    }));
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalJson(v)).toBe(reference(v));
      }),
      { numRuns: 500 },
    );
  });

  it("numbers: safe-integer refuses every other number with the caller's error", () => {
    class Refused extends Error {}
    const opts = { numbers: "safe-integer", refuse: (r: string) => new Refused(r) } as const;
    expect(canonicalJson({ n: [Number.MAX_SAFE_INTEGER, -3] }, opts)).toBe(`{"n":[${Number.MAX_SAFE_INTEGER},-3]}`);
    for (const n of [1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN, Infinity]) {
      expect(() => canonicalJson({ a: [n] }, opts)).toThrow(new Refused(`canonical JSON holds safe integers only, got ${n}`));
    }
  });

  it("refuses what JSON cannot hold; undefined object members are dropped", () => {
    expect(() => canonicalJson([1, undefined])).toThrow(new TypeError("canonical JSON cannot hold a undefined"));
    expect(() => canonicalJson({ f: () => 1 })).toThrow(new TypeError("canonical JSON cannot hold a function"));
    expect(() => canonicalJson({ b: 1n })).toThrow(new TypeError("canonical JSON cannot hold a bigint"));
    expect(canonicalJson({ a: undefined, b: 2 })).toBe('{"b":2}');
  });

  it("maxDepth writes what nests deeper than the cap as \"[depth]\"", () => {
    const v = { a: { b: [1, { c: 2 }] }, d: 3 };
    expect(canonicalJson(v, { maxDepth: 0 })).toBe('{"a":"[depth]","d":"[depth]"}');
    expect(canonicalJson(v, { maxDepth: 2 })).toBe('{"a":{"b":["[depth]","[depth]"]},"d":3}');
    expect(canonicalJson(v, { maxDepth: 4 })).toBe('{"a":{"b":[1,{"c":2}]},"d":3}');
  });
});

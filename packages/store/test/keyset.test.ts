// The index's dedupe key set (ByteSet) against a JS Set of the same keys: ids of every length from 0
// to past the short-key path, each added twice and looked up, through many table growths.
import { describe, expect, it } from "vitest";
import { ByteSet } from "../src/internal/keyset.js";

describe("ByteSet", () => {
  it("holds exactly the keys a Set holds: add is false for a key held, has is true only for one", () => {
    let seed = 7;
    const rand = () => ((seed = Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0) / 2 ** 32;
    const set = new ByteSet();
    const want = new Set<string>();
    const keys: string[] = [];
    for (let i = 0; i < 60_000; i++) {
      const len = Math.floor(rand() * 90);
      let k = "";
      for (let j = 0; j < len; j++) k += String.fromCharCode(97 + Math.floor(rand() * 3));
      keys.push(k);
    }
    for (const k of keys) {
      // Each key inside a wider buffer: the set reads [start, end) only.
      const buf = Buffer.from(`<${k}>`);
      expect(set.add(buf, 1, buf.length - 1)).toBe(!want.has(k));
      want.add(k);
    }
    expect(set.size).toBe(want.size);
    for (const k of keys) expect(set.has(Buffer.from(k))).toBe(true);
    for (let i = 0; i < 5_000; i++) {
      const k = `z${i}`;
      expect(set.has(Buffer.from(k))).toBe(want.has(k));
    }
  });
});

import { describe, expect, it } from "vitest";
import { isLayoutError, isUlid, seededUlid, ulidTime } from "../src/index.js";

describe("seededUlid", () => {
  it("gives the same ULID for the same time and entropy, a different one for other entropy", () => {
    const e = Buffer.from("0123456789abcdef", "utf8");
    const a = seededUlid(1767225600000, e);
    expect(isUlid(a)).toBe(true);
    expect(ulidTime(a)).toBe(1767225600000);
    expect(seededUlid(1767225600000, Buffer.from(e))).toBe(a);
    expect(seededUlid(1767225600000, Buffer.from("1123456789abcdef"))).not.toBe(a);
    // 80 bits of 0xff are sixteen Z's.
    expect(seededUlid(0, Buffer.alloc(10, 0xff))).toBe("0000000000" + "Z".repeat(16));
  });
  it("refuses entropy shorter than 10 bytes and a time out of range", () => {
    expect(() => seededUlid(1, Buffer.alloc(9))).toThrow(/10 bytes/);
    try {
      seededUlid(-1, Buffer.alloc(10));
      expect.unreachable();
    } catch (e) {
      expect(isLayoutError(e)).toBe(true);
    }
  });
});

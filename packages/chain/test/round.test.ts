import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildRound, canonicalJson, decodeRound, encodeRound, isChainError, parseRoundFileName, roundFileName } from "@lake/chain";
import { indexOf, sampleFiles } from "./support/landed.js";

const vectors = new URL("./vectors/", import.meta.url);
const meta = JSON.parse(readFileSync(new URL("vectors.json", vectors), "utf8")) as { rounds: { file: string; commit: string; bytes: number }[] };

/** An independent digest: sorted-key JSON via JSON.stringify's replacer, without the commit field. */
function independentCommit(text: string): string {
  const v = JSON.parse(text) as Record<string, unknown>;
  delete v.commit;
  const sortKeys = (x: unknown): unknown =>
    Array.isArray(x) ? x.map(sortKeys) : x && typeof x === "object" ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sortKeys((x as Record<string, unknown>)[k])])) : x;
  return createHash("sha256").update(JSON.stringify(sortKeys(v))).digest("hex");
}

describe("round format", () => {
  it("golden vectors: the same index and versions give the stored bytes and commit digest", () => {
    const [v1, v2] = meta.rounds;
    if (!v1 || !v2) throw new Error("vectors.json lists two rounds");
    const b1 = buildRound("s1", [], indexOf(sampleFiles().slice(0, 2)));
    const e1 = encodeRound(b1 as NonNullable<typeof b1>);
    const e2 = encodeRound(buildRound("s1", [e1.round], indexOf(sampleFiles())) as NonNullable<typeof b1>);
    for (const [v, e] of [[v1, e1], [v2, e2]] as const) {
      const stored = readFileSync(new URL(v.file, vectors));
      expect(e.fileName).toBe(v.file);
      expect(e.commit).toBe(v.commit);
      expect(Buffer.compare(e.bytes, stored)).toBe(0);
      expect(stored.length).toBe(v.bytes);
      expect(independentCommit(stored.toString("utf8"))).toBe(v.commit);
      expect(decodeRound(stored, v.file).commit).toBe(v.commit);
      expect(v.file).toBe(roundFileName(e.round.round, v.commit));
    }
    expect(e2.round.prev).toBe(v1.commit);
  });

  it("every single-byte change of a round is detected", () => {
    const v = meta.rounds[1];
    if (!v) throw new Error("no vector");
    const stored = readFileSync(new URL(v.file, vectors));
    let detected = 0;
    for (let i = 0; i < stored.length; i++) {
      for (const mask of [0x01, 0x20]) {
        const bad = Buffer.from(stored);
        bad[i] = (bad[i] as number) ^ mask;
        try {
          decodeRound(bad, v.file);
        } catch (e) {
          if (isChainError(e) && e.code === "Corrupt" && e.message.startsWith(`${v.file}: `)) detected++;
        }
      }
    }
    expect(detected).toBe(stored.length * 2);
  });

  it("canonical JSON sorts keys, drops undefined, refuses floats", () => {
    expect(canonicalJson({ b: 1, a: [true, null, "é\n"], c: { z: 0, y: -3 } })).toBe('{"a":[true,null,"é\\n"],"b":1,"c":{"y":-3,"z":0}}');
    expect(() => canonicalJson({ x: 1.5 })).toThrow(/safe integers/);
  });

  it("round file names: r<6 digits>-<12 hex>.sf", () => {
    expect(roundFileName(7, "ab".repeat(32))).toBe("r000007-abababababab.sf");
    expect(parseRoundFileName("r000007-abababababab.sf")).toEqual({ round: 7, digest12: "abababababab" });
    expect(parseRoundFileName("r1234567-abababababab.sf")).toEqual({ round: 1234567, digest12: "abababababab" });
    for (const bad of ["r00007-abababababab.sf", "r000007-ABABABABABAB.sf", "r000000-abababababab.sf", ".r000001-abababababab.sf.tmp-1-2", "r0000007-abababababab.sf"]) {
      expect(parseRoundFileName(bad)).toBeNull();
    }
  });

  it("decode names the file and the reason for a round of the wrong shape", () => {
    const v = meta.rounds[0];
    if (!v) throw new Error("no vector");
    const obj = JSON.parse(readFileSync(new URL(v.file, vectors), "utf8")) as Record<string, unknown>;
    obj.version = 2;
    expect(() => decodeRound(Buffer.from(`${JSON.stringify(obj)}\n`), "x.sf")).toThrow(/^x\.sf: version: unsupported round version 2$/);
  });
});

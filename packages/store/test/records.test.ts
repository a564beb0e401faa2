// The records encoder (@lake/store/records): a window cut into pieces at line ends and encoded piece
// by piece gives what encoding it whole gives (lines, facts, line numbers, the last record id), for
// any mix of records, empty lines, lines that are not JSON and torn lines; and a pass whose source
// encodes its windows that way (a caller's worker pool; the next window read and sent while one
// lands) lands the same bytes as one that does not.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { encodeWindow, joinEncoded, windowPieces, type EncodedWindow } from "../src/records.js";
import { isStoreError, openSession, readIndex, type ConvertContext, type SourceRef } from "../src/index.js";
import { lineCount } from "../src/internal/window.js";
import { convert, jline, src } from "./helpers.js";

afterAll(cleanupTempDirs);

const ctx = (path: string): ConvertContext => ({ sessionId: "s1", source: src(path) });
const mask = (text: string) => ({ text: text.replace(/secret/g, "[masked]"), rules: text.includes("secret") ? ["test.secret"] : [] });

/** Everything an encoded window says, with its body as one string. */
function flat(w: EncodedWindow): unknown {
  return { body: Buffer.concat(w.body).toString("utf8"), records: w.records, facts: w.facts, lastId: w.lastId, sourceLines: w.sourceLines };
}

async function inPieces(text: Buffer, at: { offset: number; ord: number }, target: number, c: ConvertContext): Promise<EncodedWindow> {
  const parts = [];
  for (const p of windowPieces(text, at, target)) parts.push(await encodeWindow(text.subarray(p.start, p.end), { offset: p.offset, ord: p.ord }, c, convert, mask));
  return joinEncoded(parts);
}

const line = fc.oneof(
  fc.uuid().map((u) => jline(u, "hello")),
  fc.uuid().map((u) => jline(u, "a secret", { type: "assistant" })),
  fc.constant(""),
  fc.constant("not json, a secret"),
  fc.constant("{\"torn\": "),
  fc.uuid().map((u) => `{"torn": ${jline(u)}`),
  fc.constant("[1,2]"),
);

describe("encoding a window in pieces", () => {
  it("pieces cut at line ends, encoded one by one and joined, equal the whole window encoded", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 30 }), fc.integer({ min: 1, max: 400 }), fc.nat(1000), async (lines, target, ord) => {
        const text = Buffer.from(lines.join("\n"));
        const at = { offset: 1000 + ord * 7, ord };
        const c = ctx("/src/a.jsonl");
        const whole = await encodeWindow(text, at, c, convert, mask);
        expect(flat(await inPieces(text, at, target, c))).toEqual(flat(whole));
        // What a pass reading ahead counts without splitting.
        expect(lineCount(text)).toBe(whole.sourceLines);
      }),
      { numRuns: 300 },
    );
  });

  it("a piece never ends in an empty line and covers the window's bytes but the newlines cut", () => {
    const text = Buffer.from(["a", "", "", "b", "c", ""].join("\n") + "\n");
    const pieces = windowPieces(text, { offset: 10, ord: 3 }, 1);
    expect(pieces.map((p) => text.subarray(p.start, p.end).toString())).toEqual(["a", "\n\nb", "c", "\n"]);
    expect(pieces.map((p) => [p.offset, p.ord])).toEqual([[10, 3], [12, 4], [16, 7], [18, 8]]);
  });
});

describe("a pass whose source encodes its windows", () => {
  async function collect(root: string, path: string, encode?: SourceRef["encode"]) {
    const s = await openSession(root, "s1", { maxDeltaBytes: 256, maskUnknown: mask });
    try {
      const p = s.beginPass();
      const out = await p.collectAppend(src(path, encode ? { encode } : {}), convert);
      p.finish();
      return out;
    } finally {
      s.close();
    }
  }

  it("lands byte for byte what the pass lands converting itself, and indexes the same entries", async () => {
    const dir = tempDir("store-records");
    const path = join(dir, "a.jsonl");
    const lines = [];
    for (let i = 0; i < 6; i++) lines.push(jline(`u${i}a`), "", "not json", jline(`u${i}b`, "a secret", { type: "assistant" }), `{"torn": ${jline(`u${i}c`)}`, jline(`u${i}d`), "", "", jline(`u${i}e`));
    writeFileSync(path, lines.join("\n") + "\n");
    let asked = 0;
    let declined = 0;
    const encode: SourceRef["encode"] = async (text, at, c) => {
      // Every third window is declined (the pass converts it itself), another one fails (likewise).
      if (asked === 4) {
        asked++;
        throw new Error("a worker died");
      }
      if (asked++ % 3 === 1) {
        declined++;
        return undefined;
      }
      return inPieces(text, at, 40, c);
    };
    const a = await collect(join(dir, "a"), path);
    const b = await collect(join(dir, "b"), path, encode);
    expect(a.status).toBe("landed");
    const stamp = /\d{8}T\d{6}\.\d{9}Z/g;
    const files = (r: string, out: typeof a) => out.landed.map((f) => [f.rel.replace(stamp, "STAMP"), readFileSync(join(r, "s1", f.rel), "utf8").replace(stamp, "STAMP")]);
    expect(files(join(dir, "b"), b)).toEqual(files(join(dir, "a"), a));
    expect(a.landed.length).toBeGreaterThan(2);
    expect(declined).toBeGreaterThan(0);
    const entries = (r: string) => readIndex(r, "s1").entries;
    expect(entries(join(dir, "b"))).toEqual(entries(join(dir, "a")));
    expect(entries(join(dir, "a")).some((e) => e.kind === "unknown")).toBe(true);
  });

  /** The landed files under a root (none when a pass refused its source). */
  const landedFiles = (root: string) => readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".sd"));

  it("refuses an encoded window whose records, facts and body lines disagree, and lands nothing", async () => {
    const dir = tempDir("store-records-bad");
    const path = join(dir, "a.jsonl");
    writeFileSync(path, jline("u1") + jline("u2") + jline("u3"));
    const bad: Array<(w: EncodedWindow) => EncodedWindow> = [
      (w) => ({ ...w, records: w.records + 1 }),
      (w) => ({ ...w, facts: w.facts.slice(1) }),
      (w) => ({ ...w, body: [Buffer.concat(w.body).subarray(0, -1)] }),
      (w) => ({ ...w, body: [...w.body, Buffer.from("extra\n")] }),
    ];
    for (const [i, spoil] of bad.entries()) {
      const root = join(dir, `r${i}`);
      const encode: SourceRef["encode"] = async (text, at, c) => spoil(await encodeWindow(text, at, c, convert, mask));
      const err = await collect(root, path, encode).then(() => undefined, (e: unknown) => e);
      expect(isStoreError(err, "InvalidArgument"), String(err)).toBe(true);
      expect((err as Error).message).toMatch(/^session s1: source [^ ]*a\.jsonl: encoded records do not match/);
      expect(landedFiles(root)).toEqual([]);
    }
    // The same window, encoded as it is, lands.
    const ok = await collect(join(dir, "ok"), path, async (text, at, c) => encodeWindow(text, at, c, convert, mask));
    expect(ok.status).toBe("landed");
    expect(landedFiles(join(dir, "ok")).length).toBe(1);
  });

  it("refuses a source with both encode and carry (the carried state would not advance)", async () => {
    const dir = tempDir("store-records-carry");
    const path = join(dir, "a.jsonl");
    writeFileSync(path, jline("u1"));
    const root = join(dir, "root");
    const s = await openSession(root, "s1", { maskUnknown: mask });
    try {
      const p = s.beginPass();
      const source = src(path, { encode: async () => undefined, carry: { restore: () => undefined, save: () => "{}" } });
      const err = await p.collectAppend(source, convert).then(() => undefined, (e: unknown) => e);
      expect(isStoreError(err, "InvalidArgument"), String(err)).toBe(true);
      expect((err as Error).message).toMatch(/encode and carry/);
    } finally {
      s.close();
    }
    expect(landedFiles(root)).toEqual([]);
  });
});

import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import {
  decodeWal,
  encodeLineageFrame,
  encodeRecordFrame,
  formatWalInspection,
  inspectWal,
  isWalError,
  readWalFile,
  type WalEntry,
} from "../src/index.js";
import { manifest, readHex } from "./helpers.js";

afterAll(cleanupTempDirs);

function bigWal(): Buffer {
  const lin = encodeLineageFrame(new Uint8Array(16).fill(7));
  const parts: Buffer[] = [lin];
  let seq = 0;
  // Frames of many sizes, so frames straddle the 4 MiB read chunks, plus one frame bigger than a chunk.
  for (const size of [10, 100_000, 3_000_000, 6_000_000, 50, 1_500_000, 4_194_000, 7]) {
    for (let k = 0; k < 2; k++) {
      parts.push(encodeRecordFrame({ type: "tool_batch_finished", batch_id: "y".repeat(size) }, { seq: ++seq, fence: 3n }), lin);
    }
  }
  return Buffer.concat(parts);
}

describe("streaming file decoder", () => {
  it("decodes a file exactly as the in-memory decoder does, across chunk boundaries", async () => {
    const dir = tempDir("wal-f");
    const bytes = bigWal();
    const p = join(dir, "a.wal");
    writeFileSync(p, bytes);
    const fromFile: WalEntry[] = [];
    const r = await readWalFile(p, { collect: false, onEntry: (e) => fromFile.push(e) });
    const mem: WalEntry[] = [];
    const m = decodeWal(bytes, { onEntry: (e) => mem.push(e) });
    expect(fromFile.map((e) => [e.kind, e.offset])).toEqual(mem.map((e) => [e.kind, e.offset]));
    expect(r.lastSeq).toBe(16);
    expect(r.records).toEqual([]); // collect: false
    expect({ ...r, file: "" }).toEqual({ ...m, file: "", records: [], skipped: [] });
    // Torn at every kind of position in the big file: the decoder reports it and leaves the file alone.
    for (const cut of [bytes.length - 1, bytes.length - 3_000_000, 4 * 1024 * 1024 + 10, 70]) {
      const q = join(dir, `cut-${cut}.wal`);
      writeFileSync(q, bytes.subarray(0, cut));
      const t = await readWalFile(q, { collect: false });
      expect(t.tornTail).not.toBeNull();
      expect(t.validLength + t.tornTail!.bytes).toBe(cut);
      expect(statSync(q).size).toBe(cut);
    }
  });

  it("frames-only verification checks digests and sequence without parsing records", async () => {
    const bytes = bigWal();
    const r = decodeWal(bytes, { framesOnly: true });
    expect(r.lastSeq).toBe(16);
    expect(r.records).toEqual([]);
  });

  it("refuses to read more than the per-pass limit", async () => {
    const p = join(tempDir("wal-f"), "a.wal");
    writeFileSync(p, bigWal());
    try {
      await readWalFile(p, { maxPassBytes: 5_000_000 });
      expect.unreachable();
    } catch (e) {
      expect(isWalError(e) && e.code).toBe("TooLarge");
    }
  });

  it("a missing file is NotFound naming the file", async () => {
    const p = join(tempDir("wal-f"), "missing.wal");
    try {
      await readWalFile(p);
      expect.unreachable();
    } catch (e) {
      expect(isWalError(e) && e.code).toBe("NotFound");
      expect((e as Error).message).toContain(p);
    }
  });
});

describe("inspectWal (the `lake-reader wal inspect --json` object)", () => {
  for (const v of manifest.wal) {
    it(v.name, async () => {
      const dir = tempDir("wal-i");
      mkdirSync(dir, { recursive: true });
      const p = join(dir, v.file.replace(".hex", ".wal"));
      const bytes = readHex(v.file);
      writeFileSync(p, bytes);
      const i = await inspectWal(p);
      expect(Object.keys(i)).toEqual(["file", "status", "lineage_id", "torn_tail", "records", "skipped", "error"]);
      expect(i.file).toBe(p);
      expect(i.status).toBe(v.expect.status);
      expect(i.torn_tail).toBe(v.expect.torn_tail);
      expect(i.records).toEqual(v.expect.records);
      expect(i.skipped).toEqual(v.expect.skipped);
      if (v.expect.status === "ok") {
        expect(i.error).toBeNull();
        expect(i.lineage_id).toBe(v.expect.lineage_id);
      } else {
        expect(i.error).toMatch(new RegExp(`^${p.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: .* at byte ${v.expect.error_offset}$`));
      }
      expect(formatWalInspection(i).split("\n")[0]).toBe(`${p}: ${i.status}`);
      expect(readFileSync(p).equals(bytes)).toBe(true);
    });
  }
});

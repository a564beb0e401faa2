// The incremental frame scanner against every golden vector: fed whole, and fed in two pieces cut
// at every byte (a reader that met a torn tail and came back), it reaches decodeWal's verdict:
// the same records in order, the same refusal code and offset, the same torn tail.
import { describe, expect, it } from "vitest";
import { decodeWal, isWalError, walFrameExtent, WalScanner, type WalScanState } from "../src/index.js";
import { manifest, readHex } from "./helpers.js";

interface Verdict {
  code: string | null;
  offset: number | null;
  seqs: number[];
  torn: boolean;
  end: number | null;
}

function viaDecode(bytes: Buffer): Verdict {
  const seqs: number[] = [];
  try {
    const r = decodeWal(bytes, { onEntry: (e) => e.kind !== "lineage" && seqs.push(e.seq) });
    return { code: null, offset: null, seqs, torn: r.tornTail !== null, end: r.validLength };
  } catch (e) {
    if (!isWalError(e)) throw e;
    return { code: e.code, offset: e.data.offset ?? null, seqs, torn: false, end: null };
  }
}

/** Scan `bytes` as a reader would: up to `cut` first, then a new scanner from the saved state for the rest. */
function viaScanner(bytes: Buffer, cut: number): Verdict {
  const seqs: number[] = [];
  let state: WalScanState | undefined;
  let torn = false;
  try {
    const a = new WalScanner();
    const first = a.scan(bytes.subarray(0, cut));
    for (const f of first.frames) if (f.entry.kind !== "lineage") seqs.push(f.entry.seq);
    state = a.state;
    expect(state.offset).toBe(first.end);
    const b = new WalScanner({ from: JSON.parse(JSON.stringify(state)) as WalScanState });
    const second = b.scan(bytes.subarray(state.offset));
    for (const f of second.frames) if (f.entry.kind !== "lineage") seqs.push(f.entry.seq);
    torn = second.tornTail !== null;
    return { code: null, offset: null, seqs, torn, end: second.end };
  } catch (e) {
    if (!isWalError(e)) throw e;
    return { code: e.code, offset: e.data.offset ?? null, seqs, torn: false, end: null };
  }
}

describe("WalScanner", () => {
  for (const v of manifest.wal) {
    it(`${v.name}: the same verdict as decodeWal, whole and cut at every byte`, () => {
      const bytes = readHex(v.file);
      const want = viaDecode(bytes);
      expect(want.code).toBe(v.expect.error_code);
      for (let cut = 0; cut <= bytes.length; cut++) {
        const got = viaScanner(bytes, cut);
        // Records before a refusal may be reported by a first piece that ended before it: compare the verdict.
        expect({ code: got.code, offset: got.offset, torn: got.torn, end: got.end }, `cut at ${cut}`).toEqual({ code: want.code, offset: want.offset, torn: want.torn, end: want.end });
        if (want.code === null) expect(got.seqs, `cut at ${cut}`).toEqual(want.seqs);
      }
    });
  }

  it("a refused scan leaves the scanner where it was", () => {
    const v = manifest.wal.find((x) => x.name === "seq-gap")!;
    const bytes = readHex(v.file);
    const s = new WalScanner();
    expect(() => s.scan(bytes)).toThrow(/record sequence gap/);
    expect(s.state).toEqual({ offset: 0, lastSeq: 0, lineageId: null });
  });

  it("walFrameExtent cuts at the last complete frame and knows the next frame's length", () => {
    const bytes = readHex(manifest.wal.find((x) => x.name === "record-v1")!.file);
    expect(walFrameExtent(bytes)).toEqual({ complete: bytes.length });
    const ext = walFrameExtent(bytes.subarray(0, bytes.length - 1));
    expect(ext.complete).toBeLessThan(bytes.length);
    expect(ext.complete + ext.next!).toBe(bytes.length);
    expect(walFrameExtent(bytes.subarray(0, 10))).toEqual({ complete: 0 });
  });
});

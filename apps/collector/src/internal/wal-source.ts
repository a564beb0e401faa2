// The collector's reading of a @lake/wal file (a broca WAL, the hook spool) as a store source:
// windows are cut at frame boundaries (walFrameExtent) and every frame goes through @lake/wal's
// incremental scanner, the decoder decodeWal and inspectWal use, so each refusal rule is the
// codec's own. The scan state (offset, last sequence, lineage) and the converter's state travel in
// the source's cursor, so a pass decodes only the frames after the cursor.
import { openSync, closeSync, readSync } from "node:fs";
import { isWalError, walFrameExtent, WalScanner, VER_GATED, type WalRecordEntry, type WalScanState, type WalSkippedEntry } from "@lake/wal";
import type { CarriedState, Framing, SourceLine } from "@lake/store";

/** A decoded record frame, as a framed source line's `value`. */
export type WalLineValue = WalRecordEntry | WalSkippedEntry;

interface Saved {
  readonly scan: WalScanState;
  readonly adapter?: Record<string, unknown>;
}

function readPrefix(path: string, length: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  const fd = openSync(path, "r");
  try {
    let got = 0;
    while (got < length) {
      const n = readSync(fd, buf, got, length - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** One framed source for one pass: the store's Framing and the state carried in its cursor. */
export class WalSource implements Framing, CarriedState {
  private scanner: WalScanner;
  /** The converter's state (broca's run context), kept with the scan state. */
  adapter: Record<string, unknown> = {};

  /**
   * @param rebuild replays the entries before a cursor's offset into `adapter` when the cursor
   *   carries no state (it was saved before state was kept).
   */
  constructor(
    readonly path: string,
    private readonly rebuild?: (entries: readonly WalLineValue[], adapter: Record<string, unknown>) => void,
  ) {
    this.scanner = new WalScanner({ file: path });
  }

  restore(saved: string | undefined, offset: number): void {
    if (saved !== undefined) {
      try {
        const v = JSON.parse(saved) as Saved;
        if (v.scan?.offset === offset) {
          this.scanner = new WalScanner({ file: this.path, from: v.scan });
          this.adapter = v.adapter ?? {};
          return;
        }
      } catch {
        /* unreadable: rebuilt below */
      }
    }
    this.scanner = new WalScanner({ file: this.path });
    this.adapter = {};
    if (offset === 0) return;
    // No usable saved state: scan the frames before the offset once (the cursor's tail digest
    // already vouched for the bytes just before it).
    const r = this.scanner.scan(readPrefix(this.path, offset));
    this.rebuild?.(r.frames.flatMap((f) => (f.entry.kind === "lineage" ? [] : [f.entry])), this.adapter);
  }

  save(): string {
    const s: Saved = { scan: this.scanner.state, ...(Object.keys(this.adapter).length ? { adapter: this.adapter } : {}) };
    return JSON.stringify(s);
  }

  complete(buf: Buffer): number {
    return walFrameExtent(buf).complete;
  }

  unitLength(head: Buffer): number | undefined {
    return walFrameExtent(head).next;
  }

  split(buf: Buffer, offset: number): { lines: SourceLine[]; invalid: boolean[]; refuse?: string } {
    const at = this.scanner.state.offset;
    if (at !== offset) throw new Error(`${this.path}: WAL scan stands at byte ${at}, the window starts at ${offset}`);
    let r;
    try {
      r = this.scanner.scan(buf);
    } catch (e) {
      if (!isWalError(e)) throw e;
      return { lines: [], invalid: [], refuse: e.data.offset === undefined ? e.reason : `${e.reason} at byte ${e.data.offset}` };
    }
    const lines: SourceLine[] = [];
    for (const f of r.frames) {
      const e = f.entry;
      if (e.kind === "lineage") continue;
      // A gated frame's line is its inner record; a plain frame's is its payload as written.
      const ver = buf[e.offset - offset + 4];
      const bytes = ver === VER_GATED ? Buffer.from(JSON.stringify(e.kind === "record" ? e.record : e.raw)) : f.payload;
      lines.push({ bytes, text: bytes.toString("utf8"), value: e, offset: e.offset, line: e.seq });
    }
    return { lines, invalid: lines.map(() => false) };
  }
}

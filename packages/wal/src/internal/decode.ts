import { isAscii, isUtf8 } from "node:buffer";
import { ioError, WalError } from "./errors.js";
import { isFeatureName, isKnownFeature } from "./features.js";
import {
  digestParts,
  FRAME_HEADER_BYTES,
  lineageIdToUuid,
  uuidToLineageId,
  MAX_PAYLOAD_BYTES,
  VER_GATED,
  VER_LINEAGE,
  VER_RECORD,
} from "./frame.js";
import type { RecordParse, WalRecord } from "./records.js";

/** broca's per-pass read limit for one WAL: 1 GiB. */
export const MAX_PASS_BYTES = 1024 * 1024 * 1024;

/** A lineage frame met while decoding. */
export interface WalLineageEntry {
  readonly kind: "lineage";
  /** Byte offset of the frame in the file. */
  readonly offset: number;
  /** The lineage id in UUID form. */
  readonly lineageId: string;
}

/** A record of a known type. */
export interface WalRecordEntry {
  readonly kind: "record";
  /** Byte offset of the frame in the file. */
  readonly offset: number;
  /** Record sequence number (1-based, gapless). */
  readonly seq: number;
  /** The writer's fence (forensic only). */
  readonly fence: bigint;
  /** True when the record came in a ver 3 frame. */
  readonly gated: boolean;
  /** Features the frame required (empty for ver 1). */
  readonly requires: readonly string[];
  /** The decoded, validated record. */
  readonly record: WalRecord;
}

/** A record of a type this build does not know: skipped, never an error. */
export interface WalSkippedEntry {
  readonly kind: "skipped";
  readonly offset: number;
  readonly seq: number;
  readonly fence: bigint;
  readonly gated: boolean;
  readonly requires: readonly string[];
  /** The unknown type name. */
  readonly type: string;
  /** The record object as parsed, for callers that want to look. */
  readonly raw: Readonly<Record<string, unknown>>;
}

/** One decoded frame. */
export type WalEntry = WalLineageEntry | WalRecordEntry | WalSkippedEntry;

/** The torn tail at the end of a file: an unfinished append. Not an error. */
export interface WalTornTail {
  /** Offset of the first byte of the unfinished frame (= end of the last complete frame). */
  readonly offset: number;
  /** Bytes present after that offset. */
  readonly bytes: number;
}

/** Summary of one decode pass. */
export interface WalDecodeSummary {
  /** The file (or label) decoded. */
  readonly file: string;
  /** The file's lineage id in UUID form, or null when it has no lineage frame. */
  readonly lineageId: string | null;
  /** Sequence number of the last record (0 when there is none). */
  readonly lastSeq: number;
  /** End of the last complete frame: the length a writer would truncate to. */
  readonly validLength: number;
  /** Set when the file ends in an unfinished frame. */
  readonly tornTail: WalTornTail | null;
  /** Number of lineage frames. */
  readonly lineageFrames: number;
}

/** A whole decode: the summary plus the records and skipped records. */
export interface WalDecodeResult extends WalDecodeSummary {
  /** Records of known types, in order. */
  readonly records: readonly WalRecordEntry[];
  /** Records of unknown types, in order. */
  readonly skipped: readonly WalSkippedEntry[];
}

/** Options for a decode pass. */
export interface WalDecodeOptions {
  /** Called for every frame, in file order, before the next frame is read. */
  readonly onEntry?: (entry: WalEntry) => void;
  /** Keep records and skipped entries in the result (default true). Set false to stream. */
  readonly collect?: boolean;
  /** Refuse (TooLarge) reading more than this many bytes in one pass. Default 1 GiB. */
  readonly maxPassBytes?: number;
  /**
   * Frame verification only: check lengths, digests, kinds, lineage and sequence, but do not parse
   * the record JSON (records are neither validated nor returned, gated requirements are not
   * checked). For integrity scans.
   */
  readonly framesOnly?: boolean;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });
const EMPTY: readonly string[] = Object.freeze([]);

/** Decoder state shared by the in-memory and file drivers. */
class State {
  lineage: Buffer | null = null;
  lineageId: string | null = null;
  lineageFrames = 0;
  lastSeq = 0;
  readonly records: WalRecordEntry[] = [];
  readonly skipped: WalSkippedEntry[] = [];
  readonly collect: boolean;
  readonly framesOnly: boolean;
  onEntry: ((e: WalEntry) => void) | undefined;
  constructor(
    readonly file: string,
    opts: WalDecodeOptions,
    private readonly parse: (value: unknown) => RecordParse,
    from?: WalScanState,
  ) {
    this.collect = opts.collect ?? true;
    this.framesOnly = opts.framesOnly ?? false;
    this.onEntry = opts.onEntry;
    if (from) {
      this.lastSeq = from.lastSeq;
      if (from.lineageId !== null) {
        this.lineage = Buffer.from(uuidToLineageId(from.lineageId));
        this.lineageId = from.lineageId;
      }
    }
  }

  corrupt(reason: string, offset: number, seq?: number): WalError {
    return new WalError("Corrupt", reason, { data: seq === undefined ? { file: this.file, offset } : { file: this.file, offset, seq } });
  }

  /** Decode one complete frame at buf[pos..], which is at byte `offset` of the file. */
  frame(buf: Buffer, pos: number, len: number, offset: number): void {
    const payload = buf.subarray(pos + FRAME_HEADER_BYTES, pos + FRAME_HEADER_BYTES + len);
    const digest = digestParts(buf.subarray(pos + 4, pos + 21), payload);
    if (!digest.equals(buf.subarray(pos + 21, pos + 53))) throw this.corrupt("frame digest does not verify", offset);
    const ver = buf[pos + 4]!;
    const seq = buf.readBigUInt64LE(pos + 5);
    const fence = buf.readBigUInt64LE(pos + 13);
    if (ver === VER_LINEAGE) {
      if (len !== 16 || seq !== 0n || fence !== 0n) {
        throw this.corrupt(`malformed lineage frame (len ${len}, seq ${seq}, fence ${fence})`, offset);
      }
      if (this.lineage === null) {
        this.lineage = Buffer.from(payload);
        this.lineageId = lineageIdToUuid(this.lineage);
      } else if (!this.lineage.equals(payload)) {
        throw new WalError(
          "Spliced",
          `spliced: lineage ${lineageIdToUuid(payload)} after lineage ${this.lineageId ?? ""}`, { data: { file: this.file, offset } },
        );
      }
      this.lineageFrames++;
      this.onEntry?.({ kind: "lineage", offset, lineageId: this.lineageId ?? "" });
      return;
    }
    if (ver !== VER_RECORD && ver !== VER_GATED) throw this.corrupt(`unknown frame version ${ver}`, offset);
    const expect = this.lastSeq + 1;
    if (seq !== BigInt(expect)) {
      const why =
        this.lastSeq === 0
          ? `record sequence starts at ${seq}, not 1`
          : seq <= BigInt(this.lastSeq)
            ? `record sequence goes backwards: ${seq} after ${this.lastSeq}`
            : `record sequence gap: ${seq} after ${this.lastSeq}`;
      throw new WalError("SequenceError", why, { data: { file: this.file, offset, seq: Number(seq) } });
    }
    this.lastSeq = expect;
    if (this.framesOnly) return;
    // ASCII payloads (the common case) become one-byte strings without UTF-8 decoding.
    let text: string;
    if (isAscii(payload)) text = payload.toString("latin1");
    else if (isUtf8(payload)) text = utf8.decode(payload);
    else throw this.corrupt("record payload is not UTF-8", offset, expect);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw this.corrupt("record payload is not JSON", offset, expect);
    }
    let requires: readonly string[] = EMPTY;
    if (ver === VER_GATED) {
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        throw this.corrupt("gated record payload is not an object", offset, expect);
      }
      const v = value as Record<string, unknown>;
      const req = v["requires"];
      if (!Array.isArray(req) || !req.every((r): r is string => typeof r === "string" && isFeatureName(r))) {
        throw this.corrupt("gated record has no valid requires list", offset, expect);
      }
      const unknown = req.filter((r) => !isKnownFeature(r));
      if (unknown.length > 0) {
        throw new WalError(
          "NewerWriter",
          `newer writer: record ${expect} requires unknown feature${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}`, { data: { file: this.file, offset, seq: expect, unknownFeatures: unknown } },
        );
      }
      requires = req;
      value = v["record"];
    }
    const parsed = this.parse(value);
    if (parsed.kind === "invalid") throw this.corrupt(parsed.reason, offset, expect);
    const gated = ver === VER_GATED;
    if (parsed.kind === "record") {
      const e: WalRecordEntry = { kind: "record", offset, seq: expect, fence, gated, requires, record: parsed.record };
      if (this.collect) this.records.push(e);
      this.onEntry?.(e);
    } else {
      const e: WalSkippedEntry = { kind: "skipped", offset, seq: expect, fence, gated, requires, type: parsed.type, raw: parsed.raw };
      if (this.collect) this.skipped.push(e);
      this.onEntry?.(e);
    }
  }

  result(validLength: number, tornTail: WalTornTail | null): WalDecodeResult {
    return {
      file: this.file,
      lineageId: this.lineageId,
      lastSeq: this.lastSeq,
      validLength,
      tornTail,
      lineageFrames: this.lineageFrames,
      records: this.records,
      skipped: this.skipped,
    };
  }
}

function checkLen(st: State, len: number, offset: number): void {
  if (len > MAX_PAYLOAD_BYTES) throw st.corrupt(`frame length ${len} exceeds the 64 MiB limit`, offset);
}

function checkPass(st: State, end: number, limit: number, offset: number): void {
  if (end > limit) {
    throw new WalError("TooLarge", `refusing to read more than ${limit} bytes of one WAL in one pass`, { data: { file: st.file, offset } });
  }
}

/**
 * Where an incremental scan of a WAL stands: what the frames before `offset` established. Plain
 * JSON, so a reader can keep it between passes (the collector keeps it in its cursor).
 */
export interface WalScanState {
  /** File offset of the next frame (the end of the last complete frame scanned). */
  readonly offset: number;
  /** Sequence number of the last record scanned (0 before the first). */
  readonly lastSeq: number;
  /** The file's lineage id in UUID form, once a lineage frame was scanned. */
  readonly lineageId: string | null;
}

/** One complete frame an incremental scan met: its entry and its whole length (header and payload). */
export interface WalScannedFrame {
  readonly entry: WalEntry;
  /** Bytes of the whole frame (53-byte header + payload). */
  readonly size: number;
  /** The payload bytes (a view into the buffer that was scanned). */
  readonly payload: Buffer;
}

/** What one {@link WalScanner.scan} call found. */
export interface WalScanResult {
  /** The complete frames, in file order. */
  readonly frames: readonly WalScannedFrame[];
  /** File offset after the last complete frame: where the next scan starts. */
  readonly end: number;
  /** Set when the bytes end inside a frame (a torn tail, or a frame still being written). */
  readonly tornTail: WalTornTail | null;
}

/**
 * Where the complete frames of `bytes` end, and how long the frame after them is when its header
 * is there: what a reader needs to cut a window at a frame boundary without decoding. A length
 * over 64 MiB counts as a 53-byte frame, so the scan that follows refuses it (Corrupt).
 */
export function walFrameExtent(bytes: Uint8Array): { readonly complete: number; readonly next?: number } {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  for (;;) {
    if (buf.length - pos < FRAME_HEADER_BYTES) return { complete: pos };
    const len = buf.readUInt32LE(pos);
    const size = len > MAX_PAYLOAD_BYTES ? FRAME_HEADER_BYTES : FRAME_HEADER_BYTES + len;
    if (pos + size > buf.length) return { complete: pos, next: size };
    pos += size;
  }
}

/**
 * The incremental frame scanner: the decoder of {@link decodeWal}, fed a file piece by piece. Each
 * `scan` takes the bytes that follow the last complete frame, verifies every complete frame with
 * every refusal rule (digest, version, lineage shape and splicing, sequence start, gaps and going
 * backwards, UTF-8, JSON, gated shape, unknown features, record shape), and stops at a torn tail.
 * A refusal throws the WalError `decodeWal` throws for the same bytes; the scanner then stays
 * where it was. Start one at a saved {@link WalScanState} to go on where a previous pass stopped.
 */
export class WalScannerWith {
  private st: State;
  private at: number;

  constructor(options: { readonly file?: string; readonly from?: WalScanState; readonly framesOnly?: boolean }, parse: (value: unknown) => RecordParse) {
    this.st = new State(options.file ?? "<memory>", { collect: false, ...(options.framesOnly ? { framesOnly: true } : {}) }, parse, options.from);
    this.at = options.from?.offset ?? 0;
  }

  /** Where the scan stands (the state to save). */
  get state(): WalScanState {
    return { offset: this.at, lastSeq: this.st.lastSeq, lineageId: this.st.lineageId };
  }

  /** Scan `bytes`, the file's bytes from {@link state}`.offset` on. */
  scan(bytes: Uint8Array): WalScanResult {
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const frames: WalScannedFrame[] = [];
    const st = this.st;
    const saved = { lastSeq: st.lastSeq, lineage: st.lineage, lineageId: st.lineageId, lineageFrames: st.lineageFrames };
    let entry: WalEntry | undefined;
    const prev = st.onEntry;
    st.onEntry = (e) => (entry = e);
    let pos = 0;
    try {
      while (pos < buf.length) {
        if (buf.length - pos < FRAME_HEADER_BYTES) break;
        const len = buf.readUInt32LE(pos);
        checkLen(st, len, this.at + pos);
        const size = FRAME_HEADER_BYTES + len;
        if (pos + size > buf.length) break;
        entry = undefined;
        st.frame(buf, pos, len, this.at + pos);
        const payload = buf.subarray(pos + FRAME_HEADER_BYTES, pos + size);
        // framesOnly records report no entry: give them a bare one so offsets and sizes still come out.
        frames.push({ entry: entry ?? { kind: "lineage", offset: this.at + pos, lineageId: st.lineageId ?? "" }, size, payload });
        pos += size;
      }
    } catch (e) {
      st.lastSeq = saved.lastSeq;
      st.lineage = saved.lineage;
      st.lineageId = saved.lineageId;
      st.lineageFrames = saved.lineageFrames;
      throw e;
    } finally {
      st.onEntry = prev;
    }
    const end = this.at + pos;
    this.at = end;
    return { frames, end, tornTail: pos < buf.length ? { offset: end, bytes: buf.length - pos } : null };
  }
}

/**
 * Decode a whole WAL held in memory. Stops at a torn tail (reported, not an error); throws a
 * WalError (Corrupt, Spliced, SequenceError, NewerWriter, TooLarge) for a refusal, naming the
 * label `file` and the byte offset.
 */
export function decodeWalWith(bytes: Uint8Array, options: WalDecodeOptions & { readonly file?: string }, parse: (value: unknown) => RecordParse): WalDecodeResult {
  const st = new State(options.file ?? "<memory>", options, parse);
  const limit = options.maxPassBytes ?? MAX_PASS_BYTES;
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = buf.length;
  let pos = 0;
  while (pos < n) {
    if (n - pos < FRAME_HEADER_BYTES) return st.result(pos, { offset: pos, bytes: n - pos });
    const len = buf.readUInt32LE(pos);
    checkLen(st, len, pos);
    const end = pos + FRAME_HEADER_BYTES + len;
    if (end > n) return st.result(pos, { offset: pos, bytes: n - pos });
    checkPass(st, end, limit, pos);
    st.frame(buf, pos, len, pos);
    pos = end;
  }
  return st.result(pos, null);
}

const CHUNK = 4 * 1024 * 1024;

/**
 * Decode a WAL file, streaming: the file is read in chunks and never held whole (memory is
 * bounded by the largest frame, at most 64 MiB). Opens read-only; never modifies the file. Reads
 * to end-of-file as it is when reached; a torn tail is reported, not an error.
 */
export async function readWalFileWith(path: string, options: WalDecodeOptions, parse: (value: unknown) => RecordParse): Promise<WalDecodeResult> {
  const st = new State(path, options, parse);
  const limit = options.maxPassBytes ?? MAX_PASS_BYTES;
  let fh;
  try {
    // Loaded here, not at import: a writer that appends from its tail cache never decodes, and never loads it.
    const { open } = await import("node:fs/promises");
    fh = await open(path, "r");
  } catch (e) {
    throw ioError(path, "cannot open WAL", e);
  }
  try {
    let buf = Buffer.allocUnsafe(CHUNK);
    let start = 0; // file offset of buf[0]
    let have = 0; // valid bytes in buf
    let pos = 0; // frame start within buf
    let eof = false;
    const fill = async (need: number): Promise<boolean> => {
      // Make buf[pos..pos+need) available if the file has it.
      while (have - pos < need && !eof) {
        if (pos > 0) {
          buf.copy(buf, 0, pos, have);
          start += pos;
          have -= pos;
          pos = 0;
        }
        if (need > buf.length) {
          const bigger = Buffer.allocUnsafe(Math.max(need, buf.length * 2));
          buf.copy(bigger, 0, 0, have);
          buf = bigger;
        }
        let r;
        try {
          r = await fh.read(buf, have, buf.length - have, start + have);
        } catch (e) {
          throw ioError(path, "cannot read WAL", e);
        }
        if (r.bytesRead === 0) eof = true;
        have += r.bytesRead;
      }
      return have - pos >= need;
    };
    for (;;) {
      if (!(await fill(FRAME_HEADER_BYTES))) {
        const rest = have - pos;
        return st.result(start + pos, rest === 0 ? null : { offset: start + pos, bytes: rest });
      }
      const offset = start + pos;
      const len = buf.readUInt32LE(pos);
      checkLen(st, len, offset);
      const size = FRAME_HEADER_BYTES + len;
      checkPass(st, offset + size, limit, offset);
      if (!(await fill(size))) return st.result(offset, { offset, bytes: have - pos });
      st.frame(buf, pos, len, offset);
      pos += size;
    }
  } finally {
    await fh.close();
  }
}

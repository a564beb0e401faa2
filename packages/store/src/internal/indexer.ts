import { createHash } from "node:crypto";
import { closeSync, existsSync, fstatSync, ftruncateSync, mkdirSync, openSync, readFileSync, readSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join, resolve as resolvePath } from "node:path";
import { DirSync, fsyncFile, replaceFrom, tempPathFor } from "@lake/durable";
import { crc32 } from "node:zlib";
import { StoreError, errno, ioError } from "./errors.js";
import { replaceAtomic, type StepHook } from "./fsx.js";
import { INDEX_SCHEMA, readState, readStateText, stateText, type IndexState } from "./index-state.js";
export { INDEX_SCHEMA } from "./index-state.js";
import { ByteSet } from "./keyset.js";
import { checkId, type Area } from "./names.js";
import { parseLanded } from "./landed.js";
import { scanSession, type LandedRef } from "./scan.js";
import { ENTRY_STRING_FIELDS, factsEntry, recordFacts, type RecordFacts } from "./records.js";

export { ENTRY_STRING_FIELDS };

const FILE_MAGIC = Buffer.from("LKIX");
const BLOCK_MAGIC = Buffer.from("LKBK");
const NONE = 0xffffffff;
const FILE_HEADER_BYTES = 8;

/** One landed file as the index knows it. */
export interface IndexedFile {
  /** Landed sequence number. */
  readonly seq: number;
  /** File name, `<kind>-<collected-at>-<seq>.sd`. */
  readonly name: string;
  readonly area: Area;
  /** Stream (or run id): the directory the file is in. */
  readonly stream: string;
  /** The file's kind (transcript, meta …). */
  readonly kind: string;
  /** SHA-256 hex of the whole file. */
  readonly sha256: string;
  /** Record rows in the file. */
  readonly records: number;
  /** Path relative to the session directory. */
  readonly rel: string;
}

/** One record's identifiers and roles (never its text). */
export interface IndexEntry {
  /** Sequence of the landed file holding the record. */
  readonly seq: number;
  /** 0-based record row in that file. */
  readonly row: number;
  readonly area: Area;
  /** Stream (or run id) of the file. */
  readonly stream: string;
  /** The record's kind (user, assistant, tool_call, tool_result, system, summary, usage, meta, unknown). */
  readonly kind: string;
  /** The landed file's kind (transcript, meta …). */
  readonly file_kind: string;
  readonly record_id?: string;
  readonly parent_id?: string;
  readonly tool_call_id?: string;
  readonly child_stream?: string;
  readonly vendor_type?: string;
  readonly message_id?: string;
  readonly request_id?: string;
  readonly usage_key?: string;
  readonly tool_name?: string;
  readonly is_sidechain?: boolean;
  readonly replayed?: boolean;
  readonly is_error?: boolean;
  /** A later copy of a record id already indexed in the same stream (a re-land): assembly skips it. */
  readonly duplicate: boolean;
}

const FLAG_DUPLICATE = 1;
const FLAG_SIDECHAIN = 2;
const FLAG_REPLAYED = 4;
const FLAG_ERROR = 8;

/**
 * Questions about every entry of an index read by range (those it left out below `from` and the
 * ones it holds), answered without holding them: each question reads the index again, block by
 * block, and stops once everything asked is found. Re-landed copies (`duplicate`) are never an answer.
 */
export interface IndexLookup {
  /** Of each stream named, the `parent_id` of its first entry that has one. */
  firstParents(streams: Iterable<string>): Map<string, string>;
  /** Of each record id named, its first entry (in any stream). */
  firstEntries(recordIds: Iterable<string>): Map<string, IndexEntry>;
}

/** The index of one session, as {@link readIndex} returns it. */
export interface SessionIndex {
  /** Highest landed sequence the index covers. Parse never reads past it. */
  readonly indexedSeq: number;
  /** Indexed files, in sequence order (every one, also with `from`). */
  readonly files: IndexedFile[];
  /** The records of every indexed file (with `from`: of the files from that sequence on), in (seq, row) order. */
  readonly entries: IndexEntry[];
  /** True when index/ was missing or unusable and this was derived from the landed files in memory. */
  readonly derived: boolean;
  /** A read by range ({@link ReadIndexOptions.from}): `entries` start at this sequence. */
  readonly from?: number;
  /** A read by range: every entry of the index (up to indexedSeq), searched on demand. */
  readonly lookup?: IndexLookup;
}

/** Options of {@link readIndex}. */
export interface ReadIndexOptions {
  /**
   * Read by range: only the entries of files from this landed sequence on (every file is still
   * listed); the index as a whole is searched through `lookup`. The cost of such a read follows what
   * lies past `from`, not the session's length (the index is still read and checked block by block).
   */
  readonly from?: number;
  /**
   * The optional string fields to decode into each entry (default: every one of ENTRY_STRING_FIELDS):
   * a reader that needs a few (the chain: ids, links, call ids, launches, vendor types) leaves the
   * others undecoded, and its entries hold only those.
   */
  readonly fields?: readonly (typeof ENTRY_STRING_FIELDS)[number][];
  /**
   * Decode the entries of only the files this returns true for (every file is still listed): push
   * reads the entries of the files it has not sent, not a long session's whole history.
   */
  readonly entriesOf?: (file: IndexedFile) => boolean;
}

/** What `updateIndex` did. */
export interface IndexUpdate {
  readonly indexedSeq: number;
  /** Files added by this update. */
  readonly files: number;
  /** Entries added by this update. */
  readonly entries: number;
  /** True when the index was rebuilt from every landed file (missing, unreadable, or another schema). */
  readonly rebuilt: boolean;
  /** Landed files read back by this update that could not be decoded: indexed with no records. */
  readonly damaged?: ReadonlyArray<{ readonly file: string; readonly reason: string }>;
}

/** One block's content before encoding: one landed file and its entries (row 0, 1 …). */
export interface IndexBlock {
  readonly files: readonly IndexedFile[];
  readonly entries: readonly IndexEntry[];
  /** Landed files that could not be decoded (indexed with no records; verify names them too): absolute path and reason. */
  readonly damaged?: ReadonlyArray<{ readonly file: string; readonly reason: string }>;
}

const FILE_ROW_BYTES = 4 + 4 + 1 + 4 + 4 + 32 + 4;
const NFIELDS = ENTRY_STRING_FIELDS.length;
const ENTRY_ROW_BYTES = 4 + 4 + 1 + 4 + 4 * NFIELDS;
/** first_seq, last_seq, n_strings, n_files, n_entries. */
const BLOCK_HEAD_BYTES = 20;
const RECORD_ID = ENTRY_STRING_FIELDS.indexOf("record_id");
const ALL_FIELDS: readonly number[] = ENTRY_STRING_FIELDS.map((_, j) => j);
const PARENT_ID = ENTRY_STRING_FIELDS.indexOf("parent_id");

/** An entry before its duplicate flag is known. */
export type PendingEntry = Omit<IndexEntry, "duplicate">;

/**
 * Encode one block (see README "Index format"): one landed file and its entries, one per record
 * row in order. Throws `InvalidArgument` for another number of files or entries that are not the
 * file's rows.
 */
export function encodeBlock(block: IndexBlock): { bytes: Buffer; strings: number } {
  if (block.files.length !== 1) throw new StoreError("InvalidArgument", `index: a block holds one landed file, not ${block.files.length}`);
  return encodeFileBlock(block.files[0]!, block.entries);
}

function encodeFileBlock(f: IndexedFile, entries: readonly (PendingEntry & { readonly duplicate?: boolean })[]): { bytes: Buffer; strings: number } {
  if (entries.length !== f.records) throw new StoreError("InvalidArgument", `index: file ${f.rel} has ${f.records} records and ${entries.length} entries`);
  // String refs are block-local, numbered in order of first use: the file's name, stream and kind,
  // then each entry's kind and fields in their on-disk order.
  const strings = new Map<string, number>();
  const table: string[] = [];
  let stringBytes = 0;
  const sid = (s: string): number => {
    let i = strings.get(s);
    if (i === undefined) {
      i = table.length;
      strings.set(s, i);
      table.push(s);
      stringBytes += 4 + Buffer.byteLength(s, "utf8");
    }
    return i;
  };
  const nameRef = sid(f.name);
  const streamRef = sid(f.stream);
  const kindRef = sid(f.kind);
  const W = 1 + NFIELDS;
  const entryRefs = new Uint32Array(entries.length * W);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.seq !== f.seq || e.row !== i) throw new StoreError("InvalidArgument", `index: entry ${i} of file ${f.rel} is seq ${e.seq} row ${e.row}`);
    entryRefs[i * W] = sid(e.kind);
    for (let j = 0; j < NFIELDS; j++) {
      const v = e[ENTRY_STRING_FIELDS[j]!];
      entryRefs[i * W + 1 + j] = v === undefined ? NONE : sid(v);
    }
  }
  const contentLen = BLOCK_HEAD_BYTES + stringBytes + FILE_ROW_BYTES + entries.length * ENTRY_ROW_BYTES;
  const out = Buffer.allocUnsafe(8 + contentLen + 4);
  BLOCK_MAGIC.copy(out, 0);
  out.writeUInt32LE(contentLen + 4, 4);
  let p = 8;
  const u32 = (v: number) => {
    out.writeUInt32LE(v >>> 0, p);
    p += 4;
  };
  u32(f.seq);
  u32(f.seq);
  u32(table.length);
  u32(1);
  u32(entries.length);
  for (const s of table) {
    const n = out.write(s, p + 4, "utf8");
    u32(n);
    p += n;
  }
  u32(f.seq);
  u32(nameRef);
  out[p++] = f.area === "runs" ? 1 : 0;
  u32(streamRef);
  u32(kindRef);
  if (out.write(f.sha256, p, "hex") !== 32) throw new StoreError("InvalidArgument", `index: file ${f.rel} has no SHA-256 hex digest`);
  p += 32;
  u32(f.records);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    u32(e.seq);
    u32(e.row);
    out[p++] = (e.duplicate ? FLAG_DUPLICATE : 0) | (e.is_sidechain ? FLAG_SIDECHAIN : 0) | (e.replayed ? FLAG_REPLAYED : 0) | (e.is_error ? FLAG_ERROR : 0);
    for (let j = 0; j < W; j++) u32(entryRefs[i * W + j]!);
  }
  out.writeUInt32LE(crc32(out.subarray(8, p)), p);
  return { bytes: out, strings: table.length };
}

/** The 8-byte header of entries.bin: `LKIX` and the schema as u32 LE. */
export function encodeIndexHeader(): Buffer {
  const b = Buffer.alloc(FILE_HEADER_BYTES);
  FILE_MAGIC.copy(b, 0);
  b.writeUInt32LE(INDEX_SCHEMA, 4);
  return b;
}

/** Entries decoded into objects by this process (tests: what an update or a read by range decodes). */
let decoded = 0;

/** @internal Entries of the index decoded into objects so far by this process (tests). */
export function decodedEntries(): number {
  return decoded;
}

/**
 * One block of entries.bin, checked whole when made (CRC-32, counts, string refs in range, one
 * file whose rows the entries are, in order) and then read in place: a string or an entry is
 * decoded only when asked for. The one decoder of the format: decodeIndex, readIndex, the dedupe
 * keys and the lookups all read blocks through it.
 */
class BlockView {
  /** The block's landed file's sequence. */
  readonly seq: number;
  readonly entries: number;
  readonly strings: number;
  /** Start and end of each string's bytes in `buf`. */
  private readonly at: Uint32Array;
  private readonly decoded: (string | undefined)[];
  private readonly fileAt: number;
  private readonly entriesAt: number;
  private fileRow: IndexedFile | undefined;

  /** `buf`: the block's bytes, `LKBK` through its CRC-32; `bad` makes the error naming the block. */
  constructor(
    readonly buf: Buffer,
    bad: (why: string) => StoreError,
  ) {
    const end = buf.length - 4;
    if (crc32(buf.subarray(8, end)) !== buf.readUInt32LE(end)) throw bad("fails its CRC-32");
    let q = 8;
    const u32 = () => {
      if (q + 4 > end) throw bad("is shorter than its counts");
      const v = buf.readUInt32LE(q);
      q += 4;
      return v;
    };
    const firstSeq = u32();
    const lastSeq = u32();
    const ns = u32();
    const nf = u32();
    const ne = u32();
    if (nf !== 1) throw bad(`holds ${nf} files, not one`);
    if (ns > (end - q) / 4) throw bad("is shorter than its counts");
    this.at = new Uint32Array(ns * 2);
    for (let i = 0; i < ns; i++) {
      const l = u32();
      if (q + l > end) throw bad(`string ${i} overruns the block`);
      this.at[i * 2] = q;
      this.at[i * 2 + 1] = q + l;
      q += l;
    }
    this.strings = ns;
    this.decoded = new Array<string | undefined>(ns);
    const ref = (r: number, what: string, absent = false) => {
      if (r >= ns && !(absent && r === NONE)) throw bad(`${what}: string ref ${r} out of range`);
    };
    if (q + FILE_ROW_BYTES > end) throw bad("is shorter than its counts");
    this.fileAt = q;
    this.seq = buf.readUInt32LE(q);
    ref(buf.readUInt32LE(q + 4), "file name");
    ref(buf.readUInt32LE(q + 9), "file stream");
    ref(buf.readUInt32LE(q + 13), "file kind");
    const records = buf.readUInt32LE(q + 49);
    q += FILE_ROW_BYTES;
    if (firstSeq !== this.seq || lastSeq !== this.seq) throw bad(`says seqs ${firstSeq}..${lastSeq}, its file is seq ${this.seq}`);
    if (ne !== records) throw bad(`holds ${ne} entries for a file of ${records} records`);
    if (q + ne * ENTRY_ROW_BYTES > end) throw bad("is shorter than its counts");
    if (q + ne * ENTRY_ROW_BYTES < end) throw bad(`has ${end - q - ne * ENTRY_ROW_BYTES} stray bytes`);
    this.entriesAt = q;
    this.entries = ne;
    for (let i = 0; i < ne; i++, q += ENTRY_ROW_BYTES) {
      if (buf.readUInt32LE(q) !== this.seq || buf.readUInt32LE(q + 4) !== i) throw bad(`entry ${i} is seq ${buf.readUInt32LE(q)} row ${buf.readUInt32LE(q + 4)}, not row ${i} of seq ${this.seq}`);
      // Each entry's refs checked without naming them first: the name is made only for the error
      // (a name made per check was most of what reading a long session's index allocated).
      const kind = buf.readUInt32LE(q + 9);
      if (kind >= ns) ref(kind, `entry ${i} kind`);
      for (let j = 0; j < NFIELDS; j++) {
        const r = buf.readUInt32LE(q + 13 + 4 * j);
        if (r >= ns && r !== NONE) ref(r, `entry ${i} ${ENTRY_STRING_FIELDS[j]!}`, true);
      }
    }
  }

  /** String `r` of the block's table (decoded once). */
  str(r: number): string {
    let s = this.decoded[r];
    if (s === undefined) {
      s = this.buf.toString("utf8", this.at[r * 2]!, this.at[r * 2 + 1]!);
      this.decoded[r] = s;
    }
    return s;
  }

  /** True when string `r`'s bytes are in `set`. */
  hasString(r: number, set: ByteSet): boolean {
    return set.has(this.buf, this.at[r * 2]!, this.at[r * 2 + 1]!);
  }

  /** The block's landed file. */
  file(): IndexedFile {
    if (!this.fileRow) {
      const b = this.buf;
      const q = this.fileAt;
      const name = this.str(b.readUInt32LE(q + 4));
      const area: Area = b[q + 8] === 1 ? "runs" : "streams";
      const stream = this.str(b.readUInt32LE(q + 9));
      this.fileRow = {
        seq: this.seq, name, area, stream, kind: this.str(b.readUInt32LE(q + 13)), sha256: b.toString("hex", q + 17, q + 49), records: this.entries, rel: `${area}/${stream}/${name}`,
      };
    }
    return this.fileRow;
  }

  flags(i: number): number {
    return this.buf[this.entriesAt + i * ENTRY_ROW_BYTES + 8]!;
  }

  /** String ref of entry `i`'s field `j` (an index of ENTRY_STRING_FIELDS), NONE when absent. */
  field(i: number, j: number): number {
    return this.buf.readUInt32LE(this.entriesAt + i * ENTRY_ROW_BYTES + 13 + 4 * j);
  }

  /** Entry `i`, decoded. */
  entry(i: number, fields: readonly number[] = ALL_FIELDS): IndexEntry {
    decoded++;
    const f = this.file();
    const p = this.entriesAt + i * ENTRY_ROW_BYTES;
    const flags = this.buf[p + 8]!;
    const e: Record<string, unknown> = { seq: this.seq, row: i, area: f.area, stream: f.stream, kind: this.str(this.buf.readUInt32LE(p + 9)), file_kind: f.kind };
    for (const j of fields) {
      const r = this.buf.readUInt32LE(p + 13 + 4 * j);
      if (r !== NONE) e[ENTRY_STRING_FIELDS[j]!] = this.str(r);
    }
    if (flags & FLAG_SIDECHAIN) e.is_sidechain = true;
    if (flags & FLAG_REPLAYED) e.replayed = true;
    if (flags & FLAG_ERROR) e.is_error = true;
    e.duplicate = (flags & FLAG_DUPLICATE) !== 0;
    return e as unknown as IndexEntry;
  }

  /**
   * The block's record ids into `keys`. `mark`: a block being indexed, whose duplicate flags are
   * set here (a record id its stream already holds is a re-land) and its CRC-32 sealed again;
   * else an indexed block, whose first copies are taken as its flags say.
   */
  keysInto(keys: RecordKeys, mark: boolean): void {
    const f = this.file();
    const set = keys.of(f.area, f.stream);
    for (let i = 0; i < this.entries; i++) {
      const p = this.entriesAt + i * ENTRY_ROW_BYTES;
      const r = this.buf.readUInt32LE(p + 13 + 4 * RECORD_ID);
      if (mark) {
        const dup = r !== NONE && !keys.add(set, this.buf, this.at[r * 2]!, this.at[r * 2 + 1]!);
        this.buf[p + 8] = dup ? this.buf[p + 8]! | FLAG_DUPLICATE : this.buf[p + 8]! & ~FLAG_DUPLICATE;
      } else if (r !== NONE && (this.buf[p + 8]! & FLAG_DUPLICATE) === 0) keys.add(set, this.buf, this.at[r * 2]!, this.at[r * 2 + 1]!);
    }
    if (mark) {
      const end = this.buf.length - 4;
      this.buf.writeUInt32LE(crc32(this.buf.subarray(8, end)), end);
    }
  }
}

/**
 * The dedupe keys of an index: for each `area/stream`, the record ids it holds (first copies),
 * as bytes outside the JS heap. What an update needs of the index already written.
 */
class RecordKeys {
  private readonly sets = new Map<string, ByteSet>();
  /** Keys held. */
  size = 0;

  of(area: Area, stream: string): ByteSet {
    const k = `${area}/${stream}`;
    let s = this.sets.get(k);
    if (!s) {
      s = new ByteSet();
      this.sets.set(k, s);
    }
    return s;
  }

  /** Add a record id (its bytes `b[start, end)`) to a stream's set; false when the stream holds it already. */
  add(set: ByteSet, b: Uint8Array, start: number, end: number): boolean {
    if (!set.add(b, start, end)) return false;
    this.size++;
    return true;
  }
}

/** Reads `len` bytes of entries.bin at `pos`: a view valid until the next call. */
type ReadAt = (pos: number, len: number) => Buffer;

/** Blocks of entries.bin read from an open file, through one buffer the size of the largest block. */
function fileReader(fd: number, path: string): ReadAt {
  let scratch = Buffer.allocUnsafe(1 << 16);
  return (pos, len) => {
    if (len > scratch.length) scratch = Buffer.allocUnsafe(Math.max(len, scratch.length * 2));
    let got = 0;
    while (got < len) {
      const n = readSync(fd, scratch, got, len - got, pos + got);
      if (n === 0) throw new StoreError("Corrupt", `${path}: ends at byte ${pos + got}, before the ${pos + len} its blocks need`, { data: { file: path } });
      got += n;
    }
    return scratch.subarray(0, len);
  };
}

/**
 * Read the blocks of entries.bin's first `length` bytes in order, each checked, each following the
 * one before it in sequence. `visit` returning false stops the walk. Throws `Corrupt` naming `file`.
 */
function walkBlocks(read: ReadAt, length: number, file: string, visit: (b: BlockView, at: number) => boolean | void): { blocks: number; entries: number; strings: number } {
  const bad = (why: string) => new StoreError("Corrupt", `${file}: ${why}`, { data: { file } });
  if (length < FILE_HEADER_BYTES) throw bad("not an index file (magic LKIX missing)");
  const head = read(0, FILE_HEADER_BYTES);
  if (!head.subarray(0, 4).equals(FILE_MAGIC)) throw bad("not an index file (magic LKIX missing)");
  const schema = head.readUInt32LE(4);
  if (schema !== INDEX_SCHEMA) throw bad(`index schema ${schema} is not ${INDEX_SCHEMA}`);
  let blocks = 0;
  let entries = 0;
  let strings = 0;
  let prev = 0;
  let p = FILE_HEADER_BYTES;
  while (p < length) {
    if (p + 8 > length) throw bad(`no block at byte ${p}`);
    const h = read(p, 8);
    if (!h.subarray(0, 4).equals(BLOCK_MAGIC)) throw bad(`no block at byte ${p}`);
    const len = h.readUInt32LE(4);
    if (len < BLOCK_HEAD_BYTES + 4 || p + 8 + len > length) throw bad(`block at byte ${p} is truncated`);
    const at = p;
    const b = new BlockView(read(p, 8 + len), (why) => bad(`block at byte ${at} ${why}`));
    if (b.seq <= prev) throw bad(`block at byte ${p} is seq ${b.seq}, after seq ${prev}`);
    prev = b.seq;
    blocks++;
    entries += b.entries;
    strings += b.strings;
    p += 8 + len;
    if (visit(b, at) === false) break;
  }
  return { blocks, entries, strings };
}

/** The block at byte `at` of entries.bin (a position this process took from a walk or a write), checked. */
function blockAt(read: ReadAt, at: number, length: number, file: string): BlockView {
  const bad = (why: string) => new StoreError("Corrupt", `${file}: block at byte ${at} ${why}`, { data: { file } });
  if (at + 8 > length) throw bad("is past the index's end");
  const h = read(at, 8);
  const len = h.readUInt32LE(4);
  if (!h.subarray(0, 4).equals(BLOCK_MAGIC) || len < BLOCK_HEAD_BYTES + 4 || at + 8 + len > length) throw bad("is not a block");
  return new BlockView(read(at, 8 + len), bad);
}

/** Decode entries.bin (its first `length` bytes). Throws `Corrupt` naming `file`. */
export function decodeIndex(buf: Buffer, file: string, length = buf.length): { files: IndexedFile[]; entries: IndexEntry[]; blocks: number; strings: number } {
  if (length > buf.length) throw new StoreError("Corrupt", `${file}: is ${buf.length} bytes, index.state says ${length}`, { data: { file } });
  const files: IndexedFile[] = [];
  const entries: IndexEntry[] = [];
  const r = walkBlocks((pos, len) => buf.subarray(pos, pos + len), length, file, (b) => {
    files.push(b.file());
    for (let i = 0; i < b.entries; i++) entries.push(b.entry(i));
  });
  return { files, entries, blocks: r.blocks, strings: r.strings };
}

/**
 * A file this session just landed, with its block encoded from the records it wrote (duplicates not
 * marked yet): the index update writes it instead of reading the file back. Bytes, not objects: a
 * pass of 65 windows holds some 13 MB of them, off the heap.
 */
export interface PendingFile {
  readonly file: IndexedFile;
  readonly block: Buffer;
}

/** The pending form of a landed file: its block, from the facts of its records. */
export function pendingFile(file: IndexedFile, facts: readonly RecordFacts[]): PendingFile {
  const where = { seq: file.seq, area: file.area, stream: file.stream, kind: file.kind };
  return { file, block: encodeFileBlock(file, facts.map((f, row) => factsEntry(f, where, row))).bytes };
}

/**
 * The block of one landed file: the pending one when this session landed it, else read back (its
 * SHA-256 taken, each row's facts; a file that does not decode is indexed with no records). Its
 * duplicates are not marked yet. Undefined when the file is gone since it was listed.
 */
function blockOf(sessionDir: string, ref: LandedRef, pending?: ReadonlyMap<number, PendingFile>): { bytes: Buffer; damaged?: { file: string; reason: string } } | undefined {
  const p = pending?.get(ref.seq);
  if (p && p.file.rel === ref.rel) return { bytes: p.block };
  const path = join(sessionDir, ref.rel);
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch (e) {
    if (errno(e) === "ENOENT") return undefined; // lost since listed: verify reports gaps
    throw ioError(path, "read landed file", e);
  }
  const sha256 = createHash("sha256").update(buf).digest("hex");
  let rows: string[] = [];
  let damaged: { file: string; reason: string } | undefined;
  try {
    rows = parseLanded(buf, path).rows;
  } catch (e) {
    rows = []; // a corrupt file is indexed with no records; verify names it
    const m = e instanceof Error ? e.message : String(e);
    damaged = { file: path, reason: `damaged landed file: ${m.startsWith(`${path}: `) ? m.slice(path.length + 2) : m}` };
  }
  const file: IndexedFile = { seq: ref.seq, name: ref.name, area: ref.area, stream: ref.stream, kind: ref.kind, sha256, records: rows.length, rel: ref.rel };
  const entries = rows.map((text, row) => {
    let r: Record<string, unknown> = {};
    try {
      const v: unknown = JSON.parse(text);
      if (typeof v === "object" && v !== null) r = v as Record<string, unknown>;
    } catch {
      /* verify names it */
    }
    return factsEntry(recordFacts(r), ref, row);
  });
  const bytes = encodeFileBlock(file, entries).bytes;
  return damaged ? { bytes, damaged } : { bytes };
}

/** The blocks of landed files, in order, derived from the files themselves (duplicates marked from the first). */
function deriveBlocks(sessionDir: string, refs: readonly LandedRef[], visit: (b: BlockView) => boolean | void): void {
  const keys = new RecordKeys();
  for (const ref of refs) {
    const got = blockOf(sessionDir, ref);
    if (!got) continue;
    const b = new BlockView(got.bytes, (why) => new StoreError("Corrupt", `${ref.rel}: its block ${why}`));
    b.keysInto(keys, true);
    if (visit(b) === false) return;
  }
}

/**
 * What this process last wrote of a session's index (or found right before an update): the exact
 * index.state text, what it says, the dedupe keys of what entries.bin holds, and its files with the
 * position of each one's block. It stands for the index while index.state on disk is that text and
 * entries.bin still holds its bytes (every update rewrites index.state, with a new updated_at), so a
 * pass that lands a file appends its block and reads nothing back, and a read by range after it reads
 * only the blocks past `from`: the cost follows what is new, not the session's length. Never
 * entries: those are read from disk. Only an update makes one; a read uses it when it is there.
 */
interface IndexCache {
  text: string;
  state: IndexState;
  keys: RecordKeys;
  files: IndexedFile[];
  /** Byte position of each file's block in entries.bin. */
  at: number[];
}
const caches = new Map<string, IndexCache>();
/**
 * Sessions whose keys are kept at most, and the keys they may hold together: the least recently
 * used goes first, the one just used always stays (a watcher over many sessions, or over a few very
 * long ones, stays bounded). A caller done with a session drops it ({@link releaseIndex}).
 */
const CACHE_MAX = 32;
const CACHE_MAX_KEYS = 131_072;

function keptIndex(dir: string, text: string | undefined, binPath: string): IndexCache | undefined {
  const key = resolvePath(dir);
  const c = caches.get(key);
  if (!c) return undefined;
  caches.delete(key);
  if (c.text !== text) return undefined;
  let size = -1;
  try {
    size = statSync(binPath).size;
  } catch {
    /* gone */
  }
  if (size < c.state.bytes) return undefined;
  caches.set(key, c);
  return c;
}

/**
 * Drop what this process keeps of a session's index (the dedupe keys its last update left, so the
 * next update reads nothing back). For a caller done with the session — a one-shot collect after
 * the session's pass — so memory follows the sessions in hand, not the ones passed.
 */
export function releaseIndex(root: string, sessionId: string): void {
  checkId("session id", sessionId);
  caches.delete(resolvePath(join(root, sessionId)));
}

/** @internal What the index cache holds now: sessions (least recently used first) and their dedupe keys (tests). */
export function keptIndexes(): { sessions: string[]; keys: number } {
  let keys = 0;
  for (const v of caches.values()) keys += v.keys.size;
  return { sessions: [...caches.keys()], keys };
}

function keepIndex(dir: string, c: IndexCache): void {
  const key = resolvePath(dir);
  caches.delete(key);
  caches.set(key, c);
  let keys = 0;
  for (const v of caches.values()) keys += v.keys.size;
  for (const [k, v] of caches) {
    if (caches.size <= 1 || (caches.size <= CACHE_MAX && keys <= CACHE_MAX_KEYS)) break;
    caches.delete(k);
    keys -= v.keys.size;
  }
}

/** The session facets the indexer needs. */
export interface IndexTarget {
  readonly dir: string;
  /** Landed files on disk in sequence order (a session may scan its directory to answer). */
  readonly landed: readonly LandedRef[];
  readonly opts: { readonly onStep?: StepHook; readonly fsync?: boolean };
  /** The highest landed sequence as far as known without listing the directory, and whether it was listed. */
  highestSeqHint?(): { seq: number; scanned: boolean };
  /** Files landed by this session and not yet indexed, by sequence (consumed by the update). */
  readonly pendingIndex?: Map<number, PendingFile>;
  /** Landed files above `seq`, in sequence order, without listing the directory when the session knows them. */
  landedAbove?(seq: number): readonly LandedRef[];
}

/**
 * The index on disk as index.state describes it, read for its dedupe keys only (record ids, block
 * by block); undefined when it is not that index (missing, damaged, another schema, or an
 * entries.bin whose counts are not index.state's): it is rebuilt.
 */
function loadExisting(binPath: string, read: { state: IndexState; text: string } | undefined): IndexCache | undefined {
  if (!read || read.state.schema !== INDEX_SCHEMA) return undefined;
  let fd: number;
  try {
    fd = openSync(binPath, "r");
  } catch (e) {
    if (errno(e) === "ENOENT") return undefined;
    throw ioError(binPath, "read index", e);
  }
  try {
    if (fstatSync(fd).size < read.state.bytes) return undefined;
    const keys = new RecordKeys();
    const files: IndexedFile[] = [];
    const at: number[] = [];
    const d = walkBlocks(fileReader(fd, binPath), read.state.bytes, binPath, (b, p) => {
      b.keysInto(keys, false);
      files.push(b.file());
      at.push(p);
    });
    // entries.bin must be the one index.state describes (a crash may keep one's new version and not the other's).
    if (d.blocks !== read.state.blocks || d.entries !== read.state.entries) return undefined;
    return { text: read.text, state: read.state, keys, files, at };
  } catch (e) {
    if (e instanceof StoreError) return undefined;
    throw ioError(binPath, "read index", e);
  } finally {
    closeSync(fd);
  }
}

/** Bring a session's index up to its highest landed sequence. The caller holds the session's lock. */
export function updateIndexFor(session: IndexTarget): IndexUpdate {
  const idxDir = join(session.dir, "index");
  const statePath = join(idxDir, "index.state");
  const binPath = join(idxDir, "entries.bin");
  const step = session.opts.onStep;
  const sync = session.opts.fsync !== false;
  // Someone may have deleted or rewritten index/ since this process last saw it: the kept keys
  // stand only while index.state is the text it wrote or read.
  const read = readStateText(statePath);
  const kept = keptIndex(session.dir, read?.text, binPath);
  const hint = session.highestSeqHint?.();
  if (kept && hint && !hint.scanned && kept.state.indexed_seq >= hint.seq) return { indexedSeq: kept.state.indexed_seq, files: 0, entries: 0, rebuilt: false };
  if (!kept) {
    // Nothing new and a plausible index on disk: a no-op pass does not read entries.bin. When
    // session.state already says nothing lies above indexed_seq, the directory is not listed.
    const s = read?.state;
    const maxLanded = hint && (hint.scanned || (s !== undefined && s.indexed_seq >= hint.seq)) ? hint.seq : session.landed.length ? session.landed[session.landed.length - 1]!.seq : 0;
    if (s && s.schema === INDEX_SCHEMA && s.indexed_seq >= maxLanded) {
      let size = -1;
      try {
        size = statSync(binPath).size;
      } catch {
        /* missing: rebuilt below */
      }
      if (size >= s.bytes) return { indexedSeq: s.indexed_seq, files: 0, entries: 0, rebuilt: false };
    }
  }
  // The keys are extended below: until index.state says so, this process keeps nothing of the index.
  caches.delete(resolvePath(session.dir));
  const base = kept ?? loadExisting(binPath, read);
  const rebuild = !base;
  const state: IndexState = base ? { ...base.state } : { schema: INDEX_SCHEMA, indexed_seq: 0, files: 0, entries: 0, blocks: 0, strings: 0, bytes: FILE_HEADER_BYTES };
  const keys = base ? base.keys : new RecordKeys();
  const keptFiles = base ? base.files : [];
  const keptAt = base ? base.at : [];
  const todo = session.landedAbove ? session.landedAbove(state.indexed_seq) : session.landed.filter((l) => l.seq > state.indexed_seq);
  if (!rebuild && todo.length === 0) {
    keepIndex(session.dir, base);
    return { indexedSeq: state.indexed_seq, files: 0, entries: 0, rebuilt: false };
  }
  mkdirSync(idxDir, { recursive: true });
  // A rebuild writes a new entries.bin beside the old and puts it in place; a catch-up appends past
  // the bytes index.state names (after truncating to them, dropping a block a crash left). Either
  // way one landed file's block at a time: the memory follows a file, not the session.
  const tmp = rebuild ? tempPathFor(binPath) : undefined;
  let fd: number | undefined;
  let pos = 0;
  const write = (b: Uint8Array) => {
    let off = 0;
    while (off < b.length) off += writeSync(fd!, b, off, b.length - off, pos + off);
    pos += b.length;
  };
  const damaged: { file: string; reason: string }[] = [];
  let files = 0;
  let entries = 0;
  try {
    if (tmp) {
      step?.("index:write-temp");
      try {
        fd = openSync(tmp, "wx", 0o600);
      } catch (e) {
        throw ioError(tmp, "create index", e);
      }
      write(encodeIndexHeader());
    }
    for (const ref of todo) {
      const got = blockOf(session.dir, ref, session.pendingIndex);
      if (!got) continue;
      const b = new BlockView(got.bytes, (why) => new StoreError("Corrupt", `${ref.rel}: its index block ${why}`));
      b.keysInto(keys, true);
      if (fd === undefined) {
        step?.("index:append");
        try {
          fd = openSync(binPath, "r+");
        } catch (e) {
          throw ioError(binPath, "open index", e);
        }
        ftruncateSync(fd, state.bytes); // drop a block a crash left past index.state
        pos = state.bytes;
      }
      keptFiles.push(b.file());
      keptAt.push(pos);
      write(got.bytes);
      if (got.damaged) damaged.push(got.damaged);
      files++;
      entries += b.entries;
      state.strings += b.strings;
    }
    if (fd !== undefined) {
      step?.(tmp ? "index:fsync-temp" : "index:fsync");
      if (sync) fsyncFile(fd);
    }
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
    if (tmp) {
      try {
        unlinkSync(tmp);
      } catch {
        /* not made, or gone */
      }
    }
    throw e instanceof StoreError ? e : ioError(binPath, "write index", e);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  // A rebuild replaces entries.bin and then index.state in index/: one directory fsync for both (a
  // crash that keeps the new index.state and loses the new entries.bin leaves an index that does
  // not decode to its state, which is rebuilt again).
  const dirs = new DirSync({ label: "index-dir", sync, ...(step ? { step } : {}) });
  if (tmp) {
    try {
      replaceFrom(tmp, binPath, { label: "index", sync, ...(step ? { step } : {}), dirSync: dirs });
    } catch (e) {
      throw ioError(binPath, "write", e);
    }
    state.bytes = pos;
  } else state.bytes = Math.max(state.bytes, pos);
  state.blocks += files;
  state.files += files;
  state.entries += entries;
  const maxSeq = todo.length ? todo[todo.length - 1]!.seq : state.indexed_seq;
  state.indexed_seq = Math.max(state.indexed_seq, maxSeq);
  const text = stateText(state);
  replaceAtomic(statePath, idxDir, text, step, "index-state", sync, dirs);
  try {
    dirs.flush();
  } catch (e) {
    throw ioError(idxDir, "fsync directory", e);
  }
  keepIndex(session.dir, { text, state, keys, files: keptFiles, at: keptAt });
  if (session.pendingIndex) for (const seq of session.pendingIndex.keys()) if (seq <= state.indexed_seq) session.pendingIndex.delete(seq);
  return { indexedSeq: state.indexed_seq, files, entries, rebuilt: rebuild, ...(damaged.length ? { damaged } : {}) };
}

/** The lookups of a read by range: `blocks` visits every block of the index, in order. */
function lookupOf(blocks: (visit: (b: BlockView) => boolean | void) => void): IndexLookup {
  return {
    firstParents(streams) {
      const want = new Set(streams);
      const out = new Map<string, string>();
      if (want.size === 0) return out;
      blocks((b) => {
        const stream = b.file().stream;
        if (!want.has(stream) || out.has(stream)) return true;
        for (let i = 0; i < b.entries; i++) {
          const r = b.field(i, PARENT_ID);
          if (r !== NONE && (b.flags(i) & FLAG_DUPLICATE) === 0) {
            out.set(stream, b.str(r));
            break;
          }
        }
        return out.size < want.size;
      });
      return out;
    },
    firstEntries(recordIds) {
      const ids = new Set(recordIds);
      const want = new ByteSet();
      for (const id of ids) want.add(Buffer.from(id, "utf8"));
      const out = new Map<string, IndexEntry>();
      if (ids.size === 0) return out;
      blocks((b) => {
        for (let i = 0; i < b.entries; i++) {
          const r = b.field(i, RECORD_ID);
          if (r === NONE || (b.flags(i) & FLAG_DUPLICATE) !== 0 || !b.hasString(r, want)) continue;
          const id = b.str(r);
          if (!out.has(id)) out.set(id, b.entry(i));
        }
        return out.size < ids.size;
      });
      return out;
    },
  };
}

/**
 * Read a session's index: what index/ holds up to indexed_seq — every file, and the entries of
 * every file or, with `from`, of the files from that sequence on (the whole index searched through
 * `lookup`). When index/ is missing, unreadable or of another schema, the index is derived from
 * the landed files (nothing is written; the next collect rebuilds it on disk) and `derived` is true.
 */
export function readIndex(root: string, sessionId: string, options: ReadIndexOptions = {}): SessionIndex {
  checkId("session id", sessionId);
  const from = options.from;
  const fields = options.fields ? ALL_FIELDS.filter((j) => options.fields!.includes(ENTRY_STRING_FIELDS[j]!)) : ALL_FIELDS;
  if (from !== undefined && !(Number.isSafeInteger(from) && from >= 0)) throw new StoreError("InvalidArgument", `readIndex: from ${String(from)} is not a sequence`);
  const dir = join(root, sessionId);
  if (!existsSync(dir)) throw new StoreError("NotFound", `${dir}: no such session`, { data: { file: dir } });
  const statePath = join(dir, "index", "index.state");
  const binPath = join(dir, "index", "entries.bin");
  const read = readStateText(statePath);
  const state = read?.state;
  const files: IndexedFile[] = [];
  const entries: IndexEntry[] = [];
  const only = options.entriesOf;
  const take = (b: BlockView): void => {
    const f = b.file();
    files.push(f);
    if ((from === undefined || b.seq >= from) && (only === undefined || only(f))) for (let i = 0; i < b.entries; i++) entries.push(b.entry(i, fields));
  };
  if (state && state.schema === INDEX_SCHEMA && from !== undefined) {
    // What an update in this process left: the files are known, and only the blocks from `from` on are read.
    const kept = keptIndex(dir, read.text, binPath);
    if (kept) {
      let fd: number | undefined;
      try {
        fd = openSync(binPath, "r");
        const ino = fstatSync(fd).ino;
        const reader = fileReader(fd, binPath);
        for (let i = 0; i < kept.files.length; i++) {
          if (kept.files[i]!.seq < from) continue;
          if (only !== undefined && !only(kept.files[i]!)) continue;
          const b = blockAt(reader, kept.at[i]!, state.bytes, binPath);
          for (let r = 0; r < b.entries; r++) entries.push(b.entry(r, fields));
        }
        const bytes = state.bytes;
        return { indexedSeq: state.indexed_seq, files: [...kept.files], entries, derived: false, from, lookup: lookupOf((visit) => blocksOnDisk(dir, binPath, bytes, ino, visit)) };
      } catch (e) {
        if (!(e instanceof StoreError) && errno(e) !== "ENOENT") throw ioError(binPath, "read index", e);
        caches.delete(resolvePath(dir)); // not the index it stood for: read whole below
        entries.length = 0;
      } finally {
        if (fd !== undefined) closeSync(fd);
      }
    }
  }
  if (state && state.schema === INDEX_SCHEMA) {
    const fd = openIndex(binPath);
    if (fd !== undefined) {
      try {
        const st = fstatSync(fd);
        if (st.size >= state.bytes) {
          const d = walkBlocks(fileReader(fd, binPath), state.bytes, binPath, take);
          if (d.blocks === state.blocks && d.entries === state.entries) {
            const index = { indexedSeq: state.indexed_seq, files, entries, derived: false };
            if (from === undefined) return index;
            const ino = st.ino;
            return { ...index, from, lookup: lookupOf((visit) => blocksOnDisk(dir, binPath, state.bytes, ino, visit)) };
          }
        }
      } catch (e) {
        if (!(e instanceof StoreError)) throw ioError(binPath, "read index", e);
      } finally {
        closeSync(fd);
      }
      files.length = 0;
      entries.length = 0;
    }
  }
  const scan = scanSession(dir);
  deriveBlocks(dir, scan.landed, take);
  const index = { indexedSeq: scan.landed.length ? scan.landed[scan.landed.length - 1]!.seq : 0, files, entries, derived: true };
  if (from === undefined) return index;
  return { ...index, from, lookup: lookupOf((visit) => deriveBlocks(dir, scanSession(dir).landed, visit)) };
}

/** entries.bin opened for reading, or undefined when there is none (another failure names the file). */
function openIndex(binPath: string): number | undefined {
  try {
    return openSync(binPath, "r");
  } catch (e) {
    if (errno(e) !== "ENOENT") throw ioError(binPath, "read index", e);
    return undefined;
  }
}

/**
 * The blocks of the entries.bin a read by range read (the same file: its first `bytes` are never
 * rewritten in place); derived from the landed files when that file is gone or replaced since.
 */
function blocksOnDisk(dir: string, binPath: string, bytes: number, ino: number, visit: (b: BlockView) => boolean | void): void {
  const fd = openIndex(binPath);
  if (fd !== undefined) {
    try {
      if (fstatSync(fd).ino === ino) {
        walkBlocks(fileReader(fd, binPath), bytes, binPath, (b) => visit(b));
        return;
      }
    } catch (e) {
      if (!(e instanceof StoreError)) throw ioError(binPath, "read index", e);
    } finally {
      closeSync(fd);
    }
  }
  deriveBlocks(dir, scanSession(dir).landed, visit);
}

/** @internal index.state as read, for verify. */
export function readIndexState(dir: string): IndexState | undefined {
  return readState(join(dir, "index", "index.state"));
}

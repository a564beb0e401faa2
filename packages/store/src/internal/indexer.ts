import { createHash } from "node:crypto";
import { closeSync, existsSync, statSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { join, resolve as resolvePath } from "node:path";
import { DirSync, fsyncFile } from "@lake/durable";
import { crc32 } from "node:zlib";
import { StoreError, errno, ioError } from "./errors.js";
import { replaceAtomic, type StepHook } from "./fsx.js";
import { INDEX_SCHEMA, readState, readStateText, stateText, type IndexState } from "./index-state.js";
export { INDEX_SCHEMA } from "./index-state.js";
import { checkId, type Area } from "./names.js";
import { parseLanded } from "./landed.js";
import { scanSession, type LandedRef } from "./scan.js";
import { ENTRY_STRING_FIELDS, factsEntry, recordFacts } from "./records.js";

export { ENTRY_STRING_FIELDS };

/** Index schema. A different schema on disk is discarded and rebuilt, never migrated. */
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

/** The index of one session, as {@link readIndex} returns it. */
export interface SessionIndex {
  /** Highest landed sequence the index covers. Parse never reads past it. */
  readonly indexedSeq: number;
  /** Indexed files, in sequence order. */
  readonly files: IndexedFile[];
  /** Every record of every indexed file, in (seq, row) order. */
  readonly entries: IndexEntry[];
  /** True when index/ was missing or unusable and this was derived from the landed files in memory. */
  readonly derived: boolean;
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

/** One block's content before encoding. */
export interface IndexBlock {
  readonly files: readonly IndexedFile[];
  readonly entries: readonly IndexEntry[];
  /** Landed files that could not be decoded (indexed with no records; verify names them too): absolute path and reason. */
  readonly damaged?: ReadonlyArray<{ readonly file: string; readonly reason: string }>;
}

const FILE_ROW_BYTES = 4 + 4 + 1 + 4 + 4 + 32 + 4;
const NFIELDS = ENTRY_STRING_FIELDS.length;
const ENTRY_ROW_BYTES = 4 + 4 + 1 + 4 + 4 * NFIELDS;

/** Encode one block (see README "Index format"). Entries must belong to the block's files. */
export function encodeBlock(block: IndexBlock): { bytes: Buffer; strings: number } {
  // String refs are block-local, numbered in order of first use: file names, streams, kinds, then
  // each entry's kind and fields in their on-disk order.
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
  const { files, entries } = block;
  const fileRefs = new Uint32Array(files.length * 3);
  for (let i = 0; i < files.length; i++) {
    const f = files[i]!;
    fileRefs[i * 3] = sid(f.name);
    fileRefs[i * 3 + 1] = sid(f.stream);
    fileRefs[i * 3 + 2] = sid(f.kind);
  }
  const W = 1 + NFIELDS;
  const entryRefs = new Uint32Array(entries.length * W);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    entryRefs[i * W] = sid(e.kind);
    for (let j = 0; j < NFIELDS; j++) {
      const v = e[ENTRY_STRING_FIELDS[j]!];
      entryRefs[i * W + 1 + j] = v === undefined ? NONE : sid(v);
    }
  }
  const contentLen = 20 + stringBytes + files.length * FILE_ROW_BYTES + entries.length * ENTRY_ROW_BYTES;
  const out = Buffer.allocUnsafe(8 + contentLen + 4);
  BLOCK_MAGIC.copy(out, 0);
  out.writeUInt32LE(contentLen + 4, 4);
  let p = 8;
  const u32 = (v: number) => {
    out.writeUInt32LE(v >>> 0, p);
    p += 4;
  };
  u32(files.length ? files[0]!.seq : 0);
  u32(files.length ? files[files.length - 1]!.seq : 0);
  u32(table.length);
  u32(files.length);
  u32(entries.length);
  for (const s of table) {
    const n = out.write(s, p + 4, "utf8");
    u32(n);
    p += n;
  }
  for (let i = 0; i < files.length; i++) {
    const f = files[i]!;
    u32(f.seq);
    u32(fileRefs[i * 3]!);
    out[p++] = f.area === "runs" ? 1 : 0;
    u32(fileRefs[i * 3 + 1]!);
    u32(fileRefs[i * 3 + 2]!);
    if (out.write(f.sha256, p, "hex") !== 32) throw new StoreError("InvalidArgument", `index: file ${f.rel} has no SHA-256 hex digest`);
    p += 32;
    u32(f.records);
  }
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

/** Decode entries.bin (its first `length` bytes). Throws `Corrupt` naming `file`. */
export function decodeIndex(buf: Buffer, file: string, length = buf.length): { files: IndexedFile[]; entries: IndexEntry[]; blocks: number; strings: number } {
  const bad = (why: string) => new StoreError("Corrupt", `${file}: ${why}`, { data: { file } });
  if (length > buf.length) throw bad(`is ${buf.length} bytes, index.state says ${length}`);
  if (length < FILE_HEADER_BYTES || !buf.subarray(0, 4).equals(FILE_MAGIC)) throw bad("not an index file (magic LKIX missing)");
  const schema = buf.readUInt32LE(4);
  if (schema !== INDEX_SCHEMA) throw bad(`index schema ${schema} is not ${INDEX_SCHEMA}`);
  const files: IndexedFile[] = [];
  const entries: IndexEntry[] = [];
  let blocks = 0;
  let nstrings = 0;
  let p = FILE_HEADER_BYTES;
  while (p < length) {
    if (p + 8 > length || !buf.subarray(p, p + 4).equals(BLOCK_MAGIC)) throw bad(`no block at byte ${p}`);
    const len = buf.readUInt32LE(p + 4);
    const start = p + 8;
    const end = start + len;
    if (len < 24 || end > length) throw bad(`block at byte ${p} is truncated`);
    const content = buf.subarray(start, end - 4);
    if (crc32(content) !== buf.readUInt32LE(end - 4)) throw bad(`block at byte ${p} fails its CRC-32`);
    let q = 0;
    const u32 = () => {
      if (q + 4 > content.length) throw bad(`block at byte ${p} is shorter than its counts`);
      const v = content.readUInt32LE(q);
      q += 4;
      return v;
    };
    u32();
    u32();
    const ns = u32();
    const nf = u32();
    const ne = u32();
    const strings: string[] = [];
    for (let i = 0; i < ns; i++) {
      const l = u32();
      if (q + l > content.length) throw bad(`block at byte ${p}: string ${i} overruns the block`);
      strings.push(content.toString("utf8", q, q + l));
      q += l;
    }
    const str = (i: number) => {
      const s = strings[i];
      if (s === undefined) throw bad(`block at byte ${p}: string ref ${i} out of range`);
      return s;
    };
    const byseq = new Map<number, IndexedFile>();
    for (let i = 0; i < nf; i++) {
      const seq = u32();
      const name = str(u32());
      if (q + 1 > content.length) throw bad(`block at byte ${p} is shorter than its counts`);
      const area: Area = content[q++] === 1 ? "runs" : "streams";
      const stream = str(u32());
      const kind = str(u32());
      if (q + 32 > content.length) throw bad(`block at byte ${p} is shorter than its counts`);
      const sha256 = content.toString("hex", q, q + 32);
      q += 32;
      const records = u32();
      const f: IndexedFile = { seq, name, area, stream, kind, sha256, records, rel: `${area}/${stream}/${name}` };
      files.push(f);
      byseq.set(seq, f);
    }
    for (let i = 0; i < ne; i++) {
      const seq = u32();
      const row = u32();
      if (q + 1 > content.length) throw bad(`block at byte ${p} is shorter than its counts`);
      const flags = content[q++]!;
      const kind = str(u32());
      const f = byseq.get(seq);
      if (!f) throw bad(`block at byte ${p}: entry ${i} names seq ${seq}, not a file of the block`);
      const e: Record<string, unknown> = { seq, row, area: f.area, stream: f.stream, kind, file_kind: f.kind };
      for (const k of ENTRY_STRING_FIELDS) {
        const r = u32();
        if (r !== NONE) e[k] = str(r);
      }
      if (flags & FLAG_SIDECHAIN) e.is_sidechain = true;
      if (flags & FLAG_REPLAYED) e.replayed = true;
      if (flags & FLAG_ERROR) e.is_error = true;
      e.duplicate = (flags & FLAG_DUPLICATE) !== 0;
      entries.push(e as unknown as IndexEntry);
    }
    if (q !== content.length) throw bad(`block at byte ${p} has ${content.length - q} stray bytes`);
    blocks++;
    nstrings += ns;
    p = end;
  }
  return { files, entries, blocks, strings: nstrings };
}

const DEDUPE_SEP = "\u0000";

/** An entry before its duplicate flag is known. */
export type PendingEntry = Omit<IndexEntry, "duplicate">;

/**
 * A file this session just landed, with its entries taken from the records it wrote: the index
 * update uses it instead of reading the file back.
 */
export interface PendingFile {
  readonly file: IndexedFile;
  readonly entries: readonly PendingEntry[];
}

function markDuplicate(e: PendingEntry, seen: Set<string>): IndexEntry {
  let dup = false;
  if (e.record_id !== undefined) {
    const key = `${e.area}/${e.stream}${DEDUPE_SEP}${e.record_id}`;
    if (seen.has(key)) dup = true;
    else seen.add(key);
  }
  (e as { duplicate?: boolean }).duplicate = dup;
  return e as IndexEntry;
}

/**
 * Build the block content for some landed files. `seen` holds `area/stream\0record_id` keys
 * already indexed, and is extended. Files found in `pending` are taken from it, not read back.
 */
export function indexFiles(sessionDir: string, refs: readonly LandedRef[], seen: Set<string>, pending?: ReadonlyMap<number, PendingFile>): IndexBlock {
  const files: IndexedFile[] = [];
  const entries: IndexEntry[] = [];
  const damaged: { file: string; reason: string }[] = [];
  for (const ref of refs) {
    const p = pending?.get(ref.seq);
    if (p && p.file.rel === ref.rel) {
      files.push(p.file);
      for (const e of p.entries) entries.push(markDuplicate({ ...e }, seen));
      continue;
    }
    const path = join(sessionDir, ref.rel);
    let buf: Buffer;
    try {
      buf = readFileSync(path);
    } catch (e) {
      if (errno(e) === "ENOENT") continue; // lost since listed: verify reports gaps
      throw ioError(path, "read landed file", e);
    }
    const sha256 = createHash("sha256").update(buf).digest("hex");
    let rows: string[] = [];
    try {
      rows = parseLanded(buf, path).rows;
    } catch (e) {
      rows = []; // a corrupt file is indexed with no records; verify names it
      const m = e instanceof Error ? e.message : String(e);
      damaged.push({ file: path, reason: `damaged landed file: ${m.startsWith(`${path}: `) ? m.slice(path.length + 2) : m}` });
    }
    files.push({ seq: ref.seq, name: ref.name, area: ref.area, stream: ref.stream, kind: ref.kind, sha256, records: rows.length, rel: ref.rel });
    for (let row = 0; row < rows.length; row++) {
      let r: Record<string, unknown> = {};
      try {
        const v: unknown = JSON.parse(rows[row]!);
        if (typeof v === "object" && v !== null) r = v as Record<string, unknown>;
      } catch {
        /* verify names it */
      }
      entries.push(markDuplicate(factsEntry(recordFacts(r), ref, row), seen));
    }
  }
  return damaged.length ? { files, entries, damaged } : { files, entries };
}

/**
 * What this process last read or wrote of a session's index: the exact index.state text, what it
 * says, its files and entries, and (once an update needed them) the dedupe keys. It stands for the
 * index while index.state on disk is that text and entries.bin still holds its bytes (every update
 * rewrites index.state, with a new updated_at), so a pass that lands one file appends one block and
 * reads nothing back, and readIndex after it decodes nothing: the cost follows what is new, not the
 * session's length.
 */
interface IndexCache {
  text: string;
  state: IndexState;
  files: IndexedFile[];
  entries: IndexEntry[];
  seen?: Set<string>;
}
const caches = new Map<string, IndexCache>();
/**
 * Sessions whose index is kept at most, and the entries they may hold together: the least recently
 * used goes first, the one just used always stays (a watcher over many sessions, or over a few very
 * long ones, stays bounded). A caller done with a session drops it ({@link releaseIndex}).
 */
const CACHE_MAX = 32;
const CACHE_MAX_ENTRIES = 131_072;

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
 * Drop what this process keeps of a session's index (what its last update or read left, so the
 * next reads nothing back). For a caller done with the session — a one-shot collect after the
 * session's pass, a push after sending it — so memory follows the sessions in hand, not the ones passed.
 */
export function releaseIndex(root: string, sessionId: string): void {
  checkId("session id", sessionId);
  caches.delete(resolvePath(join(root, sessionId)));
}

/** @internal What the index cache holds now: sessions (least recently used first) and entries (tests). */
export function keptIndexes(): { sessions: string[]; entries: number } {
  let entries = 0;
  for (const v of caches.values()) entries += v.entries.length;
  return { sessions: [...caches.keys()], entries };
}

function keepIndex(dir: string, c: IndexCache): void {
  const key = resolvePath(dir);
  caches.delete(key);
  caches.set(key, c);
  let entries = 0;
  for (const v of caches.values()) entries += v.entries.length;
  for (const [k, v] of caches) {
    if (caches.size <= 1 || (caches.size <= CACHE_MAX && entries <= CACHE_MAX_ENTRIES)) break;
    caches.delete(k);
    entries -= v.entries.length;
  }
}

function seenOf(c: IndexCache): Set<string> {
  if (!c.seen) {
    c.seen = new Set<string>();
    for (const e of c.entries) if (e.record_id !== undefined && !e.duplicate) c.seen.add(`${e.area}/${e.stream}${DEDUPE_SEP}${e.record_id}`);
  }
  return c.seen;
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

function loadExisting(dir: string, read: { state: IndexState; text: string } | undefined): IndexCache | undefined {
  const binPath = join(dir, "index", "entries.bin");
  if (!read || read.state.schema !== INDEX_SCHEMA) return undefined;
  let buf: Buffer;
  try {
    buf = readFileSync(binPath);
  } catch (e) {
    if (errno(e) === "ENOENT") return undefined;
    throw ioError(binPath, "read index", e);
  }
  try {
    const d = decodeIndex(buf, binPath, read.state.bytes);
    // entries.bin must be the one index.state describes (a crash may keep one's new version and not the other's).
    if (d.blocks !== read.state.blocks || d.entries.length !== read.state.entries) return undefined;
    return { text: read.text, state: read.state, files: d.files, entries: d.entries };
  } catch {
    return undefined;
  }
}

/** Bring a session's index up to its highest landed sequence. The caller holds the session's lock. */
export function updateIndexFor(session: IndexTarget): IndexUpdate {
  const idxDir = join(session.dir, "index");
  const statePath = join(idxDir, "index.state");
  const binPath = join(idxDir, "entries.bin");
  const step = session.opts.onStep;
  const sync = session.opts.fsync !== false;
  // Someone may have deleted or rewritten index/ since this process last saw it: the kept index
  // stands only while index.state is the text it wrote or read.
  const read = readStateText(statePath);
  let cache = keptIndex(session.dir, read?.text, binPath);
  const hint = session.highestSeqHint?.();
  if (cache && hint && !hint.scanned && cache.state.indexed_seq >= hint.seq) return { indexedSeq: cache.state.indexed_seq, files: 0, entries: 0, rebuilt: false };
  if (!cache) {
    // Nothing new and a plausible index on disk: a no-op pass does not decode entries.bin. When
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
    cache = loadExisting(session.dir, read);
  }
  const rebuild = !cache;
  const state: IndexState = cache ? { ...cache.state } : { schema: INDEX_SCHEMA, indexed_seq: 0, files: 0, entries: 0, blocks: 0, strings: 0, bytes: FILE_HEADER_BYTES };
  const seen = cache ? seenOf(cache) : new Set<string>();
  const todo = session.landedAbove ? session.landedAbove(state.indexed_seq) : session.landed.filter((l) => l.seq > state.indexed_seq);
  if (!rebuild && todo.length === 0) return { indexedSeq: state.indexed_seq, files: 0, entries: 0, rebuilt: false };
  mkdirSync(idxDir, { recursive: true });
  const block = indexFiles(session.dir, todo, seen, session.pendingIndex);
  const enc = block.files.length ? encodeBlock(block) : undefined;
  // A rebuild replaces entries.bin and then index.state in index/: one directory fsync for both (a
  // crash that keeps the new index.state and loses the new entries.bin leaves an index that does
  // not decode to its state, which is rebuilt again).
  const dirs = new DirSync({ label: "index-dir", sync, ...(step ? { step } : {}) });
  if (rebuild) {
    replaceAtomic(binPath, idxDir, enc ? Buffer.concat([encodeIndexHeader(), enc.bytes]) : encodeIndexHeader(), step, "index", sync, dirs);
  } else if (enc) {
    step?.("index:append");
    let fd: number;
    try {
      fd = openSync(binPath, "r+");
    } catch (e) {
      throw ioError(binPath, "open index", e);
    }
    try {
      ftruncateSync(fd, state.bytes); // drop a block a crash left past index.state
      let off = 0;
      while (off < enc.bytes.length) off += writeSync(fd, enc.bytes, off, enc.bytes.length - off, state.bytes + off);
      step?.("index:fsync");
      if (sync) fsyncFile(fd);
    } finally {
      closeSync(fd);
    }
  }
  const maxSeq = todo.length ? todo[todo.length - 1]!.seq : state.indexed_seq;
  if (enc) {
    state.bytes += enc.bytes.length;
    state.blocks++;
    state.strings += enc.strings;
    state.files += block.files.length;
    state.entries += block.entries.length;
  }
  state.indexed_seq = Math.max(state.indexed_seq, maxSeq);
  const text = stateText(state);
  replaceAtomic(statePath, idxDir, text, step, "index-state", sync, dirs);
  try {
    dirs.flush();
  } catch (e) {
    throw ioError(idxDir, "fsync directory", e);
  }
  const files = cache ? cache.files : [];
  const entries = cache ? cache.entries : [];
  for (const f of block.files) files.push(f);
  for (const e of block.entries) entries.push(e);
  keepIndex(session.dir, { text, state, files, entries, seen });
  if (session.pendingIndex) for (const seq of session.pendingIndex.keys()) if (seq <= state.indexed_seq) session.pendingIndex.delete(seq);
  return { indexedSeq: state.indexed_seq, files: block.files.length, entries: block.entries.length, rebuilt: rebuild, ...(block.damaged ? { damaged: block.damaged } : {}) };
}

/**
 * Read a session's index: what index/ holds up to indexed_seq. When index/ is missing, unreadable
 * or of another schema, the index is derived in memory from the landed files (nothing is written;
 * the next collect rebuilds it on disk) and `derived` is true.
 */
export function readIndex(root: string, sessionId: string): SessionIndex {
  checkId("session id", sessionId);
  const dir = join(root, sessionId);
  if (!existsSync(dir)) throw new StoreError("NotFound", `${dir}: no such session`, { data: { file: dir } });
  const statePath = join(dir, "index", "index.state");
  const binPath = join(dir, "index", "entries.bin");
  const read = readStateText(statePath);
  const state = read?.state;
  if (state && state.schema === INDEX_SCHEMA) {
    const kept = keptIndex(dir, read.text, binPath);
    if (kept) return { indexedSeq: state.indexed_seq, files: [...kept.files], entries: [...kept.entries], derived: false };
    try {
      const buf = readFileSync(binPath);
      const d = decodeIndex(buf, binPath, state.bytes);
      if (d.blocks === state.blocks && d.entries.length === state.entries) {
        keepIndex(dir, { text: read.text, state, files: d.files, entries: d.entries });
        return { indexedSeq: state.indexed_seq, files: [...d.files], entries: [...d.entries], derived: false };
      }
    } catch (e) {
      if (errno(e) !== "ENOENT" && !(e instanceof StoreError)) throw ioError(binPath, "read index", e);
    }
  }
  const scan = scanSession(dir);
  const block = indexFiles(dir, scan.landed, new Set());
  return { indexedSeq: scan.landed.length ? scan.landed[scan.landed.length - 1]!.seq : 0, files: [...block.files], entries: [...block.entries], derived: true };
}

/** @internal index.state as read, for verify. */
export function readIndexState(dir: string): IndexState | undefined {
  return readState(join(dir, "index", "index.state"));
}

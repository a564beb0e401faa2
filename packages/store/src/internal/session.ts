import { createHash } from "node:crypto";
import { closeSync, constants as fsConstants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, rmdirSync, rmSync, statSync, unlinkSync, type Stats } from "node:fs";
import { join, resolve as resolvePath } from "node:path";
import { uptime } from "node:os";
import type { CanonicalRecord } from "@lake/events";
import { StoreError, errno, ioError } from "./errors.js";
import { replaceAtomic, landNoReplace, type StepHook } from "./fsx.js";
import { decodeKv, encodeKv, kvInt } from "./kv.js";
import { acquireLock, type LockHandle } from "./lock.js";
import { checkId, checkKind, formatStamp, isoMicros, landedName, nowNs, type Area } from "./names.js";
import { CURSOR_SCHEMA, encodeCursor, readCursorFile, type AppendCursor, type Cursor, type SnapshotCursor } from "./cursor.js";
import { BodyWriter, buildLandedBody } from "./landed.js";
import { RESERVED_ROOT_NAMES, scanSession, type LandedRef } from "./scan.js";
import { pendingEntry, updateIndexFor, type IndexUpdate, type PendingFile } from "./indexer.js";
import { FORGET_DIR, isForgotten } from "./removal.js";

/** The tail window: the bytes before offset that must still match tail_sha256. */
export const TAIL_WINDOW = 1024 * 1024;
/** Default read budget per window (max_delta_bytes). */
export const DEFAULT_MAX_DELTA_BYTES = 2 * 1024 * 1024;
/** Default windows per source per pass. */
export const DEFAULT_MAX_WINDOWS = 65;

/** One source the collector discovered, as the store needs to know it. */
export interface SourceRef {
  /** Absolute path of the source file to read. */
  readonly path: string;
  /** The source as the cursor records it: the path relative to the adapter's source root. */
  readonly source: string;
  /** `streams` (default) for a stream (`main`, an agent id), `runs` for a workflow run. */
  readonly area?: Area;
  /** The stream or run id: the directory its files and cursor live in. */
  readonly stream: string;
  /** The file kind: `transcript`, `meta`, `journal`, `manifest`, `script`, `changes` … */
  readonly kind: string;
  /** Runtime id, for the unknown records the store makes of lines that are not JSON. */
  readonly runtime: string;
  /** Adapter name and version, written to every landed file's header. */
  readonly adapter: string;
  readonly adapterVersion: string;
  /**
   * How an append source is cut into records: newline-terminated lines (default), or a caller's
   * framing for binary formats (a @lake/wal spool or WAL). The cursor rules are the same.
   */
  readonly framing?: Framing;
  /**
   * Whether the first window of a source with no cursor yet is a source of its runtime at all: given
   * the records the window would land, a reason to refuse it (`not a claude-code transcript`) or
   * undefined. A refused source lands nothing and gets no cursor, so it is looked at again later.
   */
  readonly accept?: (records: readonly CanonicalRecord[]) => string | undefined;
  /**
   * Cross-window state of the caller's converter, carried in the cursor (`adapter_state`) so a pass
   * reads only new bytes. `restore` is called once before the first window with the text saved
   * with the cursor (undefined when none, or the source is read from byte 0) and the cursor's
   * offset; `save(newOffset)` after each window's convert, and its text is saved with that window's cursor.
   */
  readonly carry?: CarriedState;
}

/** A converter's state carried from window to window and from pass to pass inside the cursor. */
export interface CarriedState {
  restore(saved: string | undefined, offset: number): void | Promise<void>;
  /** The state after the window that ends at `offset` (the offset the cursor is saved with). */
  save(offset: number): string | undefined;
}

/**
 * A framing of an append source other than lines. The store reads windows of complete units with
 * it: a unit cut by the end of the file is a write in progress (a torn tail) and waits for a later
 * pass; a unit longer than the budget is read whole.
 */
export interface Framing {
  /** Bytes of the longest prefix of `buf` made of complete units (0 when the first is incomplete). */
  complete(buf: Buffer): number;
  /** The whole length of the unit that starts `head`, when its header is in `head`; else undefined. */
  unitLength(head: Buffer): number | undefined;
  /**
   * The records of complete units: each as a SourceLine (its `value` is what convert sees; `line` is
   * the unit's ordinal or sequence), and for each whether it is invalid (lands as an unknown record
   * keeping its bytes). Units that carry no record (a WAL's lineage frames) yield no line. `refuse`
   * names a reason the whole source must not be read (a newer writer, corruption): the source
   * becomes a conflict and nothing of the window lands.
   */
  split(buf: Buffer, offset: number, ord: number): { lines: SourceLine[]; invalid: boolean[]; refuse?: string };
}

/** One complete source line (or, for a snapshot, the whole trimmed content). */
export interface SourceLine {
  /** The line's bytes without its newline. */
  readonly bytes: Buffer;
  /** The bytes decoded as UTF-8. */
  readonly text: string;
  /** The parsed JSON value (lines that are not JSON never reach convert). */
  readonly value: unknown;
  /** Byte offset of the line's first byte in the source. */
  readonly offset: number;
  /** 1-based line number in the source. */
  readonly line: number;
}

/** What convert is told besides the lines. */
export interface ConvertContext {
  readonly sessionId: string;
  readonly source: SourceRef;
}

/**
 * The caller's converter: complete, valid-JSON source lines → canonical records (already masked),
 * in source order. The store calls it once per run of consecutive JSON lines in a window; it may
 * return fewer or more records than lines. The store holds no adapter code.
 */
export type Convert = (lines: readonly SourceLine[], ctx: ConvertContext) => readonly CanonicalRecord[] | Promise<readonly CanonicalRecord[]>;

/**
 * Masks the text of a line that is not JSON before it lands as an unknown record (the collector
 * composes redaction here). Returns the masked text and the rule ids that fired.
 */
export type MaskUnknown = (text: string, ctx: ConvertContext) => { text: string; rules: readonly string[] };

/** A line the store writes to report a problem (default: standard error). */
export type Logger = (line: string) => void;

/** How {@link SessionStore.resolveConflict} moves a conflict. */
export type ResolveMode = "reread-from-start" | "continue-from-offset";

/** Options of {@link openSession}. */
export interface SessionOptions {
  /** How long to wait for the session's lock (ms). 0 (default): fail at once with `Locked`. */
  readonly waitMs?: number;
  /** max_delta_bytes: read budget per window (default 2 MiB). */
  readonly maxDeltaBytes?: number;
  /** Windows per source per pass before the source is pending (default 65). */
  readonly maxWindows?: number;
  /** Where conflicts found by a pass are named (default: standard error). */
  readonly logger?: Logger;
  /** Masks non-JSON lines before they land as unknown records (default: identity). */
  readonly maskUnknown?: MaskUnknown;
  /** Test hook, called before every durable step with its name. */
  readonly onStep?: StepHook;
  /**
   * fsync landed files, cursors, state and index and their directories (default true). Only a test
   * that kills processes (not the machine) may turn it off: the ordering guarantees do not depend on it.
   */
  readonly fsync?: boolean;
}

/** What happened to one source in a pass. */
export type SourceStatus =
  | "landed" // something landed and the source is drained up to its last complete line
  | "pending" // the window limit was hit with complete lines left
  | "unchanged" // nothing new
  | "waiting" // only an unterminated last line is new
  | "conflict" // found in conflict by this pass (named on the logger)
  | "in_conflict" // already in conflict: skipped, only counted
  | "gone" // the file is gone: cursor set to source_gone (or there was nothing to track)
  | "problem" // the source could not be read (unreadable, not a regular file, dangling link …): cursor untouched
  | "rejected"; // the first window is not a source of its runtime (`accept` refused it): nothing landed, no cursor

/** The outcome of collecting one source. */
export interface SourceOutcome {
  readonly status: SourceStatus;
  /** Landed files, in order. */
  readonly landed: ReadonlyArray<{ readonly seq: number; readonly rel: string; readonly records: number; readonly bytes: number }>;
  /** Source bytes consumed in this pass. */
  readonly bytesRead: number;
  /** For `conflict`, `problem` and `rejected`: why. */
  readonly reason?: string;
  /** True when a source_gone cursor was set back to active. */
  readonly reactivated?: boolean;
  /** The source's cursor, relative to the session directory (`streams/main/transcript.cursor`). */
  readonly cursor?: string;
}

/** Summary of a finished pass. */
export interface PassSummary {
  readonly stamp: string;
  /** Files landed by the pass. */
  readonly landed: number;
  readonly records: number;
  /** Sources with complete lines left after the window limit. */
  readonly pending: number;
  /** Sources in conflict that this pass met (found now or before). */
  readonly conflicts: number;
  /** Conflicts this pass found, with file and reason. */
  readonly newConflicts: ReadonlyArray<{ readonly file: string; readonly reason: string }>;
  /** Cursors set to source_gone by this pass. */
  readonly gone: number;
  /** Sources this pass could not read or refused (`problem`, `rejected`), with file and reason. */
  readonly problems: ReadonlyArray<{ readonly file: string; readonly reason: string }>;
  /** The index update, when the pass updated it. */
  readonly index?: IndexUpdate;
  /** Non-zero exit semantics of a single pass: true when pending > 0 or conflicts > 0. */
  readonly failed: boolean;
  /** The highest landed sequence of the session when the pass ended (0: none); the index covers it unless `index` is absent. */
  readonly seq: number;
}

function sha256(b: Uint8Array): string {
  return createHash("sha256").update(b).digest("hex");
}

function readAt(fd: number, pos: number, len: number, file: string): Buffer {
  const buf = Buffer.allocUnsafe(len);
  let got = 0;
  while (got < len) {
    const n = readSync(fd, buf, got, len - got, pos + got);
    if (n === 0) break;
    got += n;
  }
  if (got < len) throw new StoreError("Io", `${file}: short read at ${pos + got} (file shrank while read)`, { data: { file } });
  return buf;
}

/** The tail window's bytes: the (up to) 1 MiB before `offset`. */
function tailBytes(fd: number, offset: number, file: string): Buffer {
  const start = Math.max(0, offset - TAIL_WINDOW);
  return readAt(fd, start, offset - start, file);
}

function tailDigest(fd: number, offset: number, file: string): string {
  return sha256(tailBytes(fd, offset, file));
}

/** The tail window after `win` is taken: the last bytes of `before` (the window before it) and `win`. */
function nextTail(before: Buffer, win: Buffer): Buffer {
  if (win.length >= TAIL_WINDOW) return win.subarray(win.length - TAIL_WINDOW);
  const keep = Math.min(before.length, TAIL_WINDOW - win.length);
  return Buffer.concat([before.subarray(before.length - keep), win]);
}

/** The one-line reason a source cannot be read, from an fs error. */
function sourceReason(e: unknown): string {
  const code = errno(e);
  if (code === "EACCES" || code === "EPERM") return `permission denied (${code})`;
  if (code === "ELOOP") return "symbolic link loop (ELOOP)";
  return code ? `cannot read (${code})` : `cannot read (${e instanceof Error ? e.message : String(e)})`;
}

function fileType(st: Stats): string {
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  if (st.isDirectory()) return "a directory";
  return "not a regular file";
}

/** What a source is before it is opened: gone, a problem (unreadable, not a regular file, a dangling link), or a regular file. */
function inspectSource(path: string): { gone?: true; problem?: string; st?: Stats } {
  let st: Stats;
  try {
    st = statSync(path);
  } catch (e) {
    const code = errno(e);
    if (code === "ENOENT" || code === "ENOTDIR") {
      try {
        if (lstatSync(path).isSymbolicLink()) return { problem: "dangling symbolic link (its target does not exist)" };
      } catch {
        /* gone */
      }
      return { gone: true };
    }
    return { problem: sourceReason(e) };
  }
  if (!st.isFile()) {
    const t = fileType(st);
    return { problem: t === "not a regular file" ? t : `not a regular file (${t}): never opened` };
  }
  return { st };
}

const utf8Fatal = new TextDecoder("utf-8", { fatal: true });

function mtimeSec(st: Stats): number {
  return Math.floor(st.mtimeMs / 1000);
}

/** At most this many positions of a line that is not JSON are tried as the start of a complete one. */
const MAX_TAIL_TRIES = 4096;

/**
 * The complete JSON object that ends a line which is not JSON itself: the last line a writer tore
 * (no newline) followed by the next writer's whole line. Tried from the right, at each `{` after the
 * line's first byte; the first suffix that parses as a JSON object is the complete line (an object
 * opened inside the fragment cannot close at the end of a balanced line after it).
 */
function completeTail(bytes: Buffer, line: string): { at: number; text: string; value: unknown } | undefined {
  let i = line.length;
  for (let tries = 0; tries < MAX_TAIL_TRIES; tries++) {
    i = i > 0 ? line.lastIndexOf("{", i - 1) : -1;
    if (i <= 0) return undefined;
    const text = line.slice(i);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      continue; // not here: further left
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) continue;
    const at = bytes.length - Buffer.byteLength(text);
    // The decoded text must be the bytes themselves (no replaced invalid UTF-8 in the tail).
    if (at <= 0 || !bytes.subarray(at).equals(Buffer.from(text))) return undefined;
    return { at, text, value };
  }
  return undefined;
}

/** Wall-clock time this machine booted (ms since the epoch), or undefined where unknown. */
const BOOT_MS = (() => {
  const up = uptime();
  return Number.isFinite(up) && up > 0 ? Date.now() - up * 1000 : undefined;
})();

/** What session.state says. */
interface SessionState {
  /** The file's exact text (it names one write: it carries last_scan). */
  readonly text: string;
  readonly nextSeq: number;
  /** last_scan as ms since the epoch (NaN when unreadable). */
  readonly lastScanMs: number;
}

/**
 * What this process last left a session as, when it closed it: the session.state text it wrote (or
 * found right) and the cursor files. Every writer that lands a file rewrites session.state before it
 * lets the lock go, and one that dies holding it leaves the lock to be broken; so an open that takes
 * the lock cleanly and finds that very text knows the counter and the cursor files without listing
 * the directory (a growing session's directory holds one landed file per pass).
 */
const leftAs = new Map<string, { text: string; cursorFiles: ReadonlySet<string> }>();
/** Sessions remembered at most (the least recently closed goes first). */
const LEFT_AS_MAX = 4096;

function rememberSession(dir: string, text: string, cursorFiles: ReadonlySet<string>): void {
  leftAs.delete(dir);
  leftAs.set(dir, { text, cursorFiles: new Set(cursorFiles) });
  for (const k of leftAs.keys()) {
    if (leftAs.size <= LEFT_AS_MAX) break;
    leftAs.delete(k);
  }
}

/** What a scan of the session directory found, kept current as the session lands files. */
interface ScanState {
  readonly landed: LandedRef[];
  readonly cursorFiles: Set<string>;
}

/**
 * A session opened under its lock. One collector per session: the lock is held until `close()`.
 * Before it issues a sequence number, the session raises its counter above the highest sequence on
 * disk, and opening removes temporary files a crashed writer left.
 *
 * The directory is scanned at open only when a crash may have left something behind: the lock was
 * broken from a dead holder, session.state is missing, or it was written before this machine last
 * booted. Otherwise the scan waits until it is needed (the first file landed, the index catching
 * up, pruning, the {@link SessionStore.landed} list), so a pass over unchanged sources reads only
 * their cursors. A cursor whose `last_seq` reaches the counter also triggers the scan.
 */
export class SessionStore {
  /** Storage root. */
  readonly root: string;
  readonly sessionId: string;
  /** `<root>/<session-id>`. */
  readonly dir: string;
  /** @internal */ readonly opts: SessionOptions;
  /** @internal */ readonly cursors = new Map<string, Cursor>();
  private lock: LockHandle | undefined;
  private seq: number;
  private stateSeq: number;
  private scanned: ScanState | undefined;
  /** session.state predates this boot: rewrite it (last_scan) once the scan is done. */
  private stateStale = false;
  private madeDirs = new Set<string>();
  /** session.state's text at open (undefined: absent), then as last written. */
  private stateText: string | undefined;
  /** The counter at open. */
  private readonly openSeq: number;
  /**
   * The open took the lock cleanly and found session.state as this process left it: the counter
   * and these cursor files are right without a scan (see {@link leftAs}).
   */
  private readonly known: Set<string> | undefined;
  /** Files landed by this open, in sequence order. */
  private readonly own: LandedRef[] = [];
  /** Sources in conflict noticed so far by this open session (so a watcher names each once). */
  readonly knownConflicts = new Set<string>();
  /** @internal files this session landed that the index has not taken yet: their entries, so the update reads nothing back. */
  readonly pendingIndex = new Map<number, PendingFile>();

  /** @internal use {@link openSession}. */
  constructor(root: string, sessionId: string, lock: LockHandle, opts: SessionOptions) {
    this.root = root;
    this.sessionId = sessionId;
    this.dir = join(root, sessionId);
    this.lock = lock;
    this.opts = opts;
    const st = this.readState();
    this.stateText = st?.text;
    this.stateSeq = st?.nextSeq ?? 1;
    this.seq = this.stateSeq;
    this.openSeq = this.seq;
    const rebooted = st !== undefined && BOOT_MS !== undefined && !(st.lastScanMs > BOOT_MS + 1000);
    this.stateStale = rebooted;
    const left = leftAs.get(resolvePath(this.dir));
    if (!lock.recovered && st !== undefined && !rebooted && left?.text === st.text) this.known = new Set(left.cursorFiles);
    if (lock.recovered || st === undefined || rebooted) this.scan();
  }

  /**
   * Scan the session directory (once per open): remove temporary files a crash left, list landed
   * files and cursors, and raise the counter above the highest sequence on disk.
   */
  private scan(): ScanState {
    if (this.scanned) return this.scanned;
    const scan = scanSession(this.dir);
    for (const t of scan.temps) {
      try {
        unlinkSync(join(this.dir, t));
      } catch (e) {
        if (errno(e) !== "ENOENT") throw ioError(join(this.dir, t), "remove temporary file", e);
      }
    }
    const maxOnDisk = scan.landed.length ? scan.landed[scan.landed.length - 1]!.seq : 0;
    this.seq = Math.max(this.seq, maxOnDisk + 1);
    this.scanned = { landed: scan.landed, cursorFiles: new Set(scan.cursors.map((c) => c.rel)) };
    return this.scanned;
  }

  /** Landed files on disk, in sequence order (kept current as the session lands files). */
  get landed(): LandedRef[] {
    return this.scan().landed;
  }

  /** Cursor files on disk, relative to the session directory. */
  get cursorFiles(): Set<string> {
    if (!this.scanned && this.known) return this.known;
    return this.scan().cursorFiles;
  }

  /** @internal landed files above `seq`, in sequence order: this open's own when nothing else can lie above it. */
  landedAbove(seq: number): LandedRef[] {
    if (!this.scanned && this.known && seq >= this.openSeq - 1) return this.own.filter((l) => l.seq > seq);
    return this.landed.filter((l) => l.seq > seq);
  }

  /** @internal a file this open landed. */
  noteLanded(ref: LandedRef): void {
    this.own.push(ref);
    this.scanned?.landed.push(ref);
  }

  /**
   * @internal the highest landed sequence as far as known without a scan: the last landed file
   * once scanned, else the one below session.state's next_seq.
   */
  highestSeqHint(): { seq: number; scanned: boolean } {
    if (this.scanned) return { seq: this.scanned.landed.length ? this.scanned.landed[this.scanned.landed.length - 1]!.seq : 0, scanned: true };
    return { seq: this.seq - 1, scanned: false };
  }

  private readState(): SessionState | undefined {
    const p = join(this.dir, "session.state");
    let text: string;
    try {
      text = readFileSync(p, "utf8");
    } catch (e) {
      if (errno(e) === "ENOENT") return undefined;
      throw ioError(p, "read session state", e);
    }
    const m = decodeKv(text, p);
    return { text, nextSeq: kvInt(m, "next_seq", p) ?? 1, lastScanMs: Date.parse(m.get("last_scan") ?? "") };
  }

  /** The next sequence number the session will issue. */
  get nextSeq(): number {
    this.scan();
    return this.seq;
  }

  /** True while the lock is held. */
  get isOpen(): boolean {
    return this.lock !== undefined;
  }

  /** @internal */
  assertOpen(): void {
    if (!this.lock) throw new StoreError("Closed", `${this.dir}: session is closed`, { data: { file: this.dir } });
  }

  /** @internal issue the next sequence number. */
  issueSeq(): number {
    if (!this.known) this.scan();
    return this.seq++;
  }

  /** @internal make a directory once. */
  ensureDir(dir: string): void {
    if (this.madeDirs.has(dir)) return;
    mkdirSync(dir, { recursive: true });
    this.madeDirs.add(dir);
  }

  /** @internal read a cursor (cached). */
  loadCursor(rel: string): Cursor | undefined {
    const c = this.cursors.get(rel);
    if (c) return c;
    if (this.scanned ? !this.scanned.cursorFiles.has(rel) : this.known && !this.known.has(rel)) return undefined;
    const r = readCursorFile(join(this.dir, rel));
    if (r) {
      this.cursors.set(rel, r);
      // A file landed past what session.state says: a crash went unnoticed. Scan before going on.
      if (!this.scanned && r.last_seq >= this.seq) this.scan();
    }
    return r;
  }

  /** @internal save a cursor atomically. */
  saveCursor(rel: string, c: Cursor): void {
    const p = join(this.dir, rel);
    const d = p.slice(0, p.lastIndexOf("/"));
    this.ensureDir(d);
    replaceAtomic(p, d, encodeCursor(c), this.opts.onStep, "cursor", this.opts.fsync !== false);
    this.cursors.set(rel, c);
    this.scanned?.cursorFiles.add(rel);
    this.known?.add(rel);
  }

  /** Write session.state (next_seq, liveness unknown, last scan) when the counter moved (or it predates this boot). */
  saveState(force = false): void {
    this.assertOpen();
    if (!force && this.seq === this.stateSeq && !this.stateStale) return;
    this.ensureDir(this.dir);
    const text = encodeKv([
      ["schema", 1], ["session", this.sessionId], ["next_seq", this.seq], ["liveness", "unknown"], ["last_scan", isoMicros(nowNs())],
    ]);
    replaceAtomic(join(this.dir, "session.state"), this.dir, text, this.opts.onStep, "state", this.opts.fsync !== false);
    this.stateSeq = this.seq;
    this.stateStale = false;
    this.stateText = text;
  }

  /** Start a pass: every file it lands carries the pass's UTC stamp. */
  beginPass(): Pass {
    this.assertOpen();
    return new Pass(this, formatStamp(nowNs()));
  }

  /** Bring index/ up to the highest landed sequence (rebuild when missing or of another schema). */
  updateIndex(): IndexUpdate {
    this.assertOpen();
    return updateIndexFor(this);
  }

  /** @internal this open created the session directory: close removes it again when it stayed empty. */
  createdDir = false;

  /**
   * Save state and release the lock. Safe to call twice. A session directory this open created
   * and nothing was written to (every source refused or unreadable) is removed again, so such a
   * source never shows up as a session.
   */
  close(): void {
    if (!this.lock) return;
    try {
      this.saveState();
      // The counter is right (scanned, or known) and session.state says it: the next open here may trust it.
      const cursorFiles = this.scanned?.cursorFiles ?? this.known;
      if (this.stateText !== undefined && cursorFiles && this.seq === this.stateSeq) rememberSession(resolvePath(this.dir), this.stateText, cursorFiles);
    } finally {
      this.pendingIndex.clear();
      this.lock.release();
      this.lock = undefined;
    }
    if (this.createdDir) {
      try {
        rmdirSync(join(this.dir, "index"));
      } catch {
        /* absent or holds an index */
      }
      try {
        rmdirSync(this.dir);
      } catch {
        /* not empty (something landed, or another collector opened it): kept */
      }
    }
  }

  /**
   * Move a conflict, the one way a cursor leaves state conflict (a person decides):
   * - `reread-from-start`: start the source again from byte 0 as a new version of its stream. Every
   *   file already landed stays; the records read again land anew, and the index marks each record
   *   id already landed as a re-land, so nothing is counted twice.
   * - `continue-from-offset`: keep the cursor's position and take the source's current bytes before
   *   it as the new tail digest (the person judged the rewrite harmless). Refused when the file is
   *   shorter than the offset. Needs the source's path.
   * @returns the cursor as saved.
   */
  resolveConflict(cursorRel: string, mode: ResolveMode, sourcePath?: string): Cursor {
    this.assertOpen();
    const file = join(this.dir, cursorRel);
    const cur = this.loadCursor(cursorRel);
    if (!cur) throw new StoreError("NotFound", `${file}: no such cursor`, { data: { file } });
    if (cur.state !== "conflict") throw new StoreError("InvalidArgument", `${file}: cursor is ${cur.state}, not in conflict`, { data: { file } });
    const { conflict_reason: _why, ...rest } = cur;
    const updated_at = isoMicros(nowNs());
    let next: Cursor;
    if (mode === "reread-from-start") {
      if (rest.kind === "append") {
        const { last_uuid: _u, adapter_state: _a, ...a } = rest;
        next = { ...a, offset: 0, ord: 0, tail_sha256: sha256(Buffer.alloc(0)), size: 0, state: "active", updated_at };
      } else next = { ...rest, content_sha256: "", state: "active", updated_at };
    } else if (mode === "continue-from-offset") {
      if (sourcePath === undefined) throw new StoreError("InvalidArgument", `${file}: continue-from-offset needs the source's path`, { data: { file } });
      let fd: number;
      try {
        fd = openSync(sourcePath, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
      } catch (e) {
        throw ioError(sourcePath, "open source", e);
      }
      try {
        const st = fstatSync(fd);
        if (!st.isFile()) throw new StoreError("InvalidArgument", `${sourcePath}: not a regular file`, { data: { file: sourcePath } });
        if (rest.kind === "append") {
          if (st.size < rest.offset) throw new StoreError("InvalidArgument", `${sourcePath}: is ${st.size} bytes, shorter than the cursor's offset ${rest.offset}: only reread-from-start applies`, { data: { file: sourcePath } });
          next = { ...rest, tail_sha256: tailDigest(fd, rest.offset, sourcePath), dev: st.dev, ino: st.ino, size: st.size, mtime: mtimeSec(st), state: "active", updated_at };
        } else {
          // A snapshot has no position: its current content is taken as landed.
          let content = readAt(fd, 0, st.size, sourcePath);
          let end = content.length;
          while (end > 0 && (content[end - 1] === 10 || content[end - 1] === 13)) end--;
          content = content.subarray(0, end);
          next = { ...rest, content_sha256: sha256(content), dev: st.dev, ino: st.ino, size: st.size, mtime: mtimeSec(st), state: "active", updated_at };
        }
      } finally {
        closeSync(fd);
      }
    } else throw new StoreError("InvalidArgument", `unknown resolve mode ${JSON.stringify(mode)} (reread-from-start, continue-from-offset)`);
    this.saveCursor(cursorRel, next);
    this.knownConflicts.delete(cursorRel);
    return next;
  }
}

/**
 * Open a session under its lock (creating its directory). Throws `Locked` when another live
 * process holds it and `waitMs` runs out.
 */
export async function openSession(root: string, sessionId: string, options: SessionOptions = {}): Promise<SessionStore> {
  checkId("session id", sessionId);
  if (RESERVED_ROOT_NAMES.has(sessionId)) throw new StoreError("InvalidArgument", `invalid session id ${JSON.stringify(sessionId)}: ${join(root, sessionId)} is reserved (${[...RESERVED_ROOT_NAMES].join(", ")} are not sessions)`, { data: { "session id": sessionId } });
  if (options.maxDeltaBytes !== undefined && !(Number.isInteger(options.maxDeltaBytes) && options.maxDeltaBytes > 0)) {
    throw new StoreError("InvalidArgument", `maxDeltaBytes must be a positive integer, got ${options.maxDeltaBytes}`);
  }
  if (options.maxWindows !== undefined && !(Number.isInteger(options.maxWindows) && options.maxWindows > 0)) {
    throw new StoreError("InvalidArgument", `maxWindows must be a positive integer, got ${options.maxWindows}`);
  }
  const dir = join(root, sessionId);
  const forgotten = () => new StoreError("Forgotten", `${join(root, FORGET_DIR, `${sessionId}.json`)}: session ${sessionId} is forgotten; nothing lands in it (undo the forget to collect it again)`, { data: { file: join(root, FORGET_DIR, `${sessionId}.json`) } });
  if (isForgotten(root, sessionId)) throw forgotten();
  let made: string | undefined;
  try {
    made = mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw ioError(dir, "create session directory", e);
  }
  const lockOpts: { waitMs?: number; step?: StepHook } = { waitMs: options.waitMs ?? 0 };
  if (options.onStep) lockOpts.step = options.onStep;
  const lock = await acquireLock(dir, lockOpts);
  // A removal may have begun between the check above and the lock: checked again under the lock.
  if (isForgotten(root, sessionId)) {
    lock.release();
    if (made !== undefined) rmSync(dir, { recursive: true, force: true });
    throw forgotten();
  }
  try {
    const store = new SessionStore(root, sessionId, lock, options);
    if (made !== undefined) store.createdDir = true;
    return store;
  } catch (e) {
    lock.release();
    throw e;
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** One pass over a session's sources. */
export class Pass {
  readonly session: SessionStore;
  /** The pass's UTC stamp, `20260831T091204.481523000Z`. */
  readonly stamp: string;
  private visited = new Set<string>();
  private landedFiles = 0;
  private records = 0;
  private pending = 0;
  private conflicts = 0;
  private gone = 0;
  private newConflicts: Array<{ file: string; reason: string }> = [];
  private problems: Array<{ file: string; reason: string }> = [];

  /** @internal use SessionStore.beginPass. */
  constructor(session: SessionStore, stamp: string) {
    this.session = session;
    this.stamp = stamp;
  }

  private log(line: string): void {
    (this.session.opts.logger ?? ((l: string) => process.stderr.write(l + "\n")))(line);
  }

  /**
   * The cursor slot of a source. Two files can feed one stream (the same session reached twice: a
   * copied project folder, two Codex rollouts with one session id): each gets its own cursor. The
   * first keeps `<kind>.cursor`; another takes the first free `<kind>_<n>.cursor` (n = 2, 3 …) and
   * its files are named with that kind. A slot whose cursor names this source is always its slot.
   * Their records share the stream, so the index marks a record id already landed as a re-land.
   */
  private place(src: SourceRef): { area: Area; dirRel: string; cursorRel: string; src: SourceRef } {
    checkId("stream", src.stream);
    checkKind(src.kind);
    const area = src.area ?? "streams";
    if (area !== "streams" && area !== "runs") throw new StoreError("InvalidArgument", `invalid area ${JSON.stringify(area)}`);
    const dirRel = `${area}/${src.stream}`;
    const rel = (kind: string) => `${dirRel}/${kind}.cursor`;
    const sourceOf = (r: string): string | undefined => {
      try {
        return this.session.loadCursor(r)?.source;
      } catch {
        return "\u0000"; // an undecodable cursor: its slot is taken (verify reports it)
      }
    };
    let kind = src.kind;
    const primary = rel(kind);
    if (this.visited.has(primary) || (sourceOf(primary) ?? src.source) !== src.source) {
      let free: string | undefined;
      let mine: string | undefined;
      for (let n = 2; n < 10_000; n++) {
        const k = `${src.kind}_${n}`;
        const r = rel(k);
        if (this.visited.has(r)) continue;
        const owner = sourceOf(r);
        if (owner === undefined) {
          free = k;
          break;
        }
        if (owner === src.source) {
          mine = k;
          break;
        }
      }
      // A cursor of this source wins; else the kind's own cursor while no other source of this
      // pass holds it (the slot then names another path, and the bytes decide); else a free slot.
      kind = mine ?? (this.visited.has(primary) ? free : src.kind) ?? src.kind;
    }
    const cursorRel = rel(kind);
    if (this.visited.has(cursorRel)) throw new StoreError("InvalidArgument", `${cursorRel}: two sources share one cursor in one pass (${src.source})`, { data: { file: cursorRel } });
    this.visited.add(cursorRel);
    return { area, dirRel, cursorRel, src: kind === src.kind ? src : { ...src, kind } };
  }

  /** Step 1: the file is gone; an active cursor becomes source_gone. */
  private gone_(cursorRel: string, cur: Cursor | undefined): SourceOutcome {
    if (cur && cur.state === "active") {
      this.session.saveCursor(cursorRel, { ...cur, state: "source_gone", updated_at: isoMicros(nowNs()) });
      this.gone++;
    }
    return { status: "gone", landed: [], bytesRead: 0 };
  }

  private problem(src: SourceRef, status: "problem" | "rejected", reason: string): SourceOutcome {
    this.problems.push({ file: src.path, reason });
    return { status, landed: [], bytesRead: 0, reason };
  }

  private conflict(src: SourceRef, cursorRel: string, cur: Cursor, reason: string, st: Stats | undefined): SourceOutcome {
    const c = { ...cur, state: "conflict" as const, conflict_reason: reason, updated_at: isoMicros(nowNs()) };
    this.session.saveCursor(cursorRel, c);
    this.session.knownConflicts.add(cursorRel);
    this.conflicts++;
    this.newConflicts.push({ file: src.path, reason });
    this.log(`lake-store: conflict: ${src.path}: ${reason}`);
    void st;
    return { status: "conflict", landed: [], bytesRead: 0, reason };
  }

  private lastId: string | undefined;

  /** Convert a window's lines and serialise the records: once, straight into the landed file's body. */
  private async toRecords(src: SourceRef, lines: SourceLine[], invalid: boolean[], convert: Convert, sizeHint: number): Promise<{ body: BodyWriter; recs: object[] }> {
    const ctx: ConvertContext = { sessionId: this.session.sessionId, source: src };
    const body = new BodyWriter(sizeHint);
    const recs: object[] = [];
    this.lastId = undefined;
    let i = 0;
    while (i < lines.length) {
      if (invalid[i]) {
        const u = await this.unknownRecord(src, lines[i]!, ctx);
        body.add(JSON.stringify(u) ?? "");
        recs.push(u);
        i++;
        continue;
      }
      let j = i;
      while (j < lines.length && !invalid[j]) j++;
      const recsOut = await convert(lines.slice(i, j), ctx);
      if (!Array.isArray(recsOut)) throw new StoreError("InvalidArgument", `${src.path}: convert did not return an array`, { data: { file: src.path } });
      for (const r of recsOut as readonly CanonicalRecord[]) {
        if (typeof r !== "object" || r === null) throw new StoreError("InvalidArgument", `${src.path}: convert returned a non-object record`, { data: { file: src.path } });
        body.add(JSON.stringify(r) ?? "");
        recs.push(r);
        if (typeof r.record_id === "string") this.lastId = r.record_id;
      }
      i = j;
    }
    return { body, recs };
  }

  private async unknownRecord(src: SourceRef, l: SourceLine, ctx: ConvertContext): Promise<CanonicalRecord> {
    // Loaded on first use: a pass that meets no invalid line never loads the record schema.
    const { canonicalize } = await import("@lake/events");
    let text: string;
    let attrs: string | undefined;
    try {
      text = utf8Fatal.decode(l.bytes);
    } catch {
      text = l.bytes.toString("base64");
      attrs = JSON.stringify({ raw_encoding: "base64" });
    }
    const masked = this.session.opts.maskUnknown ? this.session.opts.maskUnknown(text, ctx) : { text, rules: [] };
    return canonicalize(
      {
        runtime: src.runtime, session_id: this.session.sessionId, stream: src.stream, kind: "unknown", raw: masked.text,
        ...(attrs ? { attrs } : {}), source_path: src.source, source_offset: l.offset, source_line: l.line, adapter: src.adapter, adapter_version: src.adapterVersion,
      },
      masked.rules,
    );
  }

  private splitLines(buf: Buffer, offset: number, ord: number): { lines: SourceLine[]; invalid: boolean[]; refuse?: string; sourceLines?: number } {
    const lines: SourceLine[] = [];
    const invalid: boolean[] = [];
    let pos = 0;
    let n = ord;
    while (pos < buf.length) {
      const nl = buf.indexOf(10, pos);
      const end = nl < 0 ? buf.length : nl;
      const bytes = buf.subarray(pos, end);
      const text = bytes.toString("utf8");
      let value: unknown;
      let bad = false;
      try {
        value = JSON.parse(text);
      } catch {
        bad = true;
      }
      n++;
      const tail = bad ? completeTail(bytes, text) : undefined;
      if (tail) {
        // A torn line that a complete one followed (a writer died mid-line, another appended): the
        // fragment lands as unknown bytes (or as its record, when it is JSON itself), the line after it as its record.
        const frag = bytes.subarray(0, tail.at);
        const fragText = frag.toString("utf8");
        let fragValue: unknown;
        let fragBad = false;
        try {
          fragValue = JSON.parse(fragText);
        } catch {
          fragBad = true;
        }
        lines.push({ bytes: frag, text: fragText, value: fragValue, offset: offset + pos, line: n });
        invalid.push(fragBad);
        lines.push({ bytes: bytes.subarray(tail.at), text: tail.text, value: tail.value, offset: offset + pos + tail.at, line: n });
        invalid.push(false);
      } else {
        lines.push({ bytes, text, value, offset: offset + pos, line: n });
        invalid.push(bad);
      }
      pos = end + 1;
    }
    return { lines, invalid, sourceLines: n - ord };
  }

  private land(src: SourceRef, area: Area, dirRel: string, cursor: "append" | "snapshot", range: { first_offset: number; end_offset: number; first_line: number; last_line: number }, out: { body: BodyWriter; recs: readonly object[] }, contentSha?: string): { seq: number; rel: string; records: number; bytes: number } {
    const s = this.session;
    const seq = s.issueSeq();
    const name = landedName(src.kind, this.stamp, seq);
    const records = out.body.records;
    const built = buildLandedBody(
      {
        session: s.sessionId, area, stream: src.stream, kind: src.kind, cursor, source: src.source, seq, collected_at: this.stamp, ...range,
        ...(contentSha !== undefined ? { content_sha256: contentSha } : {}), adapter: src.adapter, adapter_version: src.adapterVersion,
      },
      out.body.bytes(),
      records,
    );
    const dir = join(s.dir, dirRel);
    s.ensureDir(dir);
    landNoReplace(dir, name, built.chunks, s.opts.onStep, s.opts.fsync !== false);
    const rel = `${dirRel}/${name}`;
    s.noteLanded({ seq, name, area, stream: src.stream, kind: src.kind, stamp: this.stamp, rel });
    const where = { seq, area, stream: src.stream, kind: src.kind };
    s.pendingIndex.set(seq, {
      file: { seq, name, area, stream: src.stream, kind: src.kind, sha256: built.sha256, records, rel },
      entries: out.recs.map((r, row) => pendingEntry(r, where, row)),
    });
    this.landedFiles++;
    this.records += records;
    return { seq, rel, records, bytes: built.bytes };
  }

  /** Read one window starting at offset: up to the budget, cut at the last complete newline; a longer single line is read whole. null: nothing complete. */
  private readWindow(fd: number, offset: number, size: number, budget: number, file: string, framing?: Framing): Buffer | null {
    if (size <= offset) return null;
    const want = Math.min(budget, size - offset);
    const buf = readAt(fd, offset, want, file);
    if (framing) {
      const n = framing.complete(buf);
      if (n > 0) return buf.subarray(0, n);
      const need = framing.unitLength(buf);
      if (need === undefined || offset + need > size || need <= buf.length) return null;
      return readAt(fd, offset, need, file);
    }
    const nl = buf.lastIndexOf(10);
    if (nl >= 0) return buf.subarray(0, nl + 1);
    if (offset + want >= size) return null;
    const chunks: Buffer[] = [buf];
    let pos = offset + want;
    while (pos < size) {
      const chunk = readAt(fd, pos, Math.min(budget, size - pos), file);
      const idx = chunk.indexOf(10);
      if (idx >= 0) {
        chunks.push(chunk.subarray(0, idx + 1));
        return Buffer.concat(chunks);
      }
      chunks.push(chunk);
      pos += chunk.length;
    }
    return null;
  }

  /**
   * Take an append source through the eight steps: gone → source_gone; shorter than offset →
   * conflict; same size and inode → nothing read; the 1 MiB before offset must match
   * tail_sha256; read windows of up to max_delta_bytes cut at the last complete newline; convert;
   * land, then save the cursor; at most `maxWindows` windows, then the source is pending.
   */
  async collectAppend(source: SourceRef, convert: Convert): Promise<SourceOutcome> {
    this.session.assertOpen();
    const placed = this.place(source);
    return { ...(await this.appendSteps(placed, convert)), cursor: placed.cursorRel };
  }

  private async appendSteps({ area, dirRel, cursorRel, src }: { area: Area; dirRel: string; cursorRel: string; src: SourceRef }, convert: Convert): Promise<SourceOutcome> {
    const s = this.session;
    const existing = s.loadCursor(cursorRel);
    if (existing && existing.kind !== "append") throw new StoreError("InvalidArgument", `${join(s.dir, cursorRel)}: is a ${existing.kind} cursor, source ${src.source} collected as append`, { data: { file: cursorRel } });
    let cur = existing as AppendCursor | undefined;
    if (cur?.state === "conflict") {
      this.conflicts++;
      return { status: "in_conflict", landed: [], bytesRead: 0 };
    }
    // Look before opening: a FIFO, socket or device is never opened (a FIFO would block the pass).
    const look = inspectSource(src.path);
    if (look.gone) return this.gone_(cursorRel, cur);
    if (look.problem !== undefined) return this.problem(src, "problem", look.problem);
    const st0 = look.st!;
    // Step 3 without opening the file: same size and identity, nothing new, nothing read.
    if ((cur === undefined || cur.state === "active") && st0.size === (cur?.offset ?? 0) && (cur === undefined || st0.ino === cur.ino)) return { status: "unchanged", landed: [], bytesRead: 0 };
    let fd: number;
    try {
      fd = openSync(src.path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    } catch (e) {
      // Step 1: discovery listed it, but it is gone.
      if (errno(e) === "ENOENT" || errno(e) === "ENOTDIR") return this.gone_(cursorRel, cur);
      return this.problem(src, "problem", sourceReason(e));
    }
    if (!fstatSync(fd).isFile()) {
      closeSync(fd);
      return this.problem(src, "problem", "not a regular file");
    }
    try {
      let reactivated = false;
      if (cur && cur.state === "source_gone") {
        cur = { ...cur, state: "active", updated_at: isoMicros(nowNs()) };
        s.saveCursor(cursorRel, cur);
        reactivated = true;
      }
      const budget = s.opts.maxDeltaBytes ?? DEFAULT_MAX_DELTA_BYTES;
      const maxWindows = s.opts.maxWindows ?? DEFAULT_MAX_WINDOWS;
      let st = fstatSync(fd);
      const landed: Array<{ seq: number; rel: string; records: number; bytes: number }> = [];
      let bytesRead = 0;
      let dirty = false;
      let c: Mutable<AppendCursor> = cur
        ? { ...cur }
        : { schema: CURSOR_SCHEMA, kind: "append", source: src.source, dev: st.dev, ino: st.ino, offset: 0, ord: 0, tail_sha256: sha256(Buffer.alloc(0)), size: 0, mtime: 0, last_seq: 0, updated_at: "", state: "active" };
      if (c.source !== src.source) {
        // The same cursor slot now names another source path: the bytes still decide.
        c.source = src.source;
        dirty = true;
      }
      // Step 2: shorter than offset.
      if (st.size < c.offset) return { ...this.conflict(src, cursorRel, c, `source is shorter than the cursor's offset (size ${st.size} < offset ${c.offset})`, st), reactivated };
      const sameIdentity = st.ino === c.ino;
      // Step 3: same size and identity — nothing new, nothing read.
      if (st.size === c.offset && sameIdentity) return { status: "unchanged", landed, bytesRead, ...(reactivated ? { reactivated } : {}) };
      // Step 4: the 1 MiB before offset must still match. The bytes checked are kept: with each
      // window landed they give the next tail digest without reading the file again.
      let tail: Buffer | undefined = c.offset === 0 ? Buffer.alloc(0) : undefined;
      if (!c.tail_sha256) {
        if (!sameIdentity) return { ...this.conflict(src, cursorRel, c, `inode changed (${c.ino} → ${st.ino}) and the cursor has no tail digest to check the bytes`, st), reactivated };
      } else if (c.offset > 0 || !sameIdentity) {
        tail = tailBytes(fd, c.offset, src.path);
        if (sha256(tail) !== c.tail_sha256) return { ...this.conflict(src, cursorRel, c, `the ${Math.min(c.offset, TAIL_WINDOW)} bytes before offset ${c.offset} changed (tail_sha256 mismatch)`, st), reactivated };
      }
      if (!sameIdentity) {
        c.dev = st.dev;
        c.ino = st.ino;
        dirty = true;
      }
      if (src.carry) await src.carry.restore(c.offset > 0 ? c.adapter_state : undefined, c.offset);
      let status: SourceStatus = "unchanged";
      for (let w = 0; ; w++) {
        if (w > 0) st = fstatSync(fd);
        const win = st.size > c.offset ? this.readWindow(fd, c.offset, st.size, budget, src.path, src.framing) : null;
        if (!win) {
          if (w === 0 && st.size > c.offset) status = "waiting";
          break;
        }
        if (w >= maxWindows) {
          status = "pending";
          this.pending++;
          break;
        }
        // Steps 5–6: split into complete lines and convert.
        const split = src.framing ? src.framing.split(win, c.offset, c.ord) : this.splitLines(win.subarray(0, win.length - 1), c.offset, c.ord);
        if (split.refuse !== undefined) return { ...this.conflict(src, cursorRel, c, split.refuse, st), landed, bytesRead, ...(reactivated ? { reactivated } : {}) };
        const { lines, invalid } = split;
        // Source lines of the window (a torn line split in two is still one).
        const count = (split as { sourceLines?: number }).sourceLines ?? lines.length;
        const rows = await this.toRecords(src, lines, invalid, convert, win.length + (win.length >> 1) + 4096);
        if (cur === undefined && w === 0 && src.accept) {
          const why = src.accept(rows.recs as CanonicalRecord[]);
          if (why !== undefined) return this.problem(src, "rejected", why);
        }
        const newOffset = c.offset + win.length;
        // Step 7: land, then save the cursor.
        const f = this.land(src, area, dirRel, "append", { first_offset: c.offset, end_offset: newOffset, first_line: c.ord + 1, last_line: c.ord + count }, rows);
        landed.push(f);
        bytesRead += win.length;
        const lastUuid = this.lastId ?? c.last_uuid;
        tail = nextTail(tail ?? tailBytes(fd, c.offset, src.path), win);
        c = {
          ...c, offset: newOffset, ord: c.ord + count, tail_sha256: sha256(tail), size: st.size, mtime: mtimeSec(st),
          dev: st.dev, ino: st.ino, last_seq: f.seq, updated_at: isoMicros(nowNs()), state: "active",
        };
        if (lastUuid !== undefined) c.last_uuid = lastUuid;
        const carried = src.carry?.save(newOffset);
        if (carried !== undefined) c.adapter_state = carried;
        else delete c.adapter_state;
        s.saveCursor(cursorRel, c);
        dirty = false;
        status = "landed";
      }
      if (dirty) {
        c.updated_at = isoMicros(nowNs());
        s.saveCursor(cursorRel, c);
      }
      return { status, landed, bytesRead, ...(reactivated ? { reactivated } : {}) };
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Take a snapshot source through its pass: read it whole, trim trailing newlines, digest; when the
   * digest differs from content_sha256 the content lands as a new file of the records `convert`
   * makes of it: one for a sidecar or manifest; several for a whole-file session document (a
   * legacy Gemini CLI chat), whose unchanged records the index then marks as re-landed copies. An
   * empty file lands nothing.
   */
  async collectSnapshot(source: SourceRef, convert: Convert): Promise<SourceOutcome> {
    this.session.assertOpen();
    const placed = this.place(source);
    return { ...(await this.snapshotSteps(placed, convert)), cursor: placed.cursorRel };
  }

  private async snapshotSteps({ area, dirRel, cursorRel, src }: { area: Area; dirRel: string; cursorRel: string; src: SourceRef }, convert: Convert): Promise<SourceOutcome> {
    const s = this.session;
    const existing = s.loadCursor(cursorRel);
    if (existing && existing.kind !== "snapshot") throw new StoreError("InvalidArgument", `${join(s.dir, cursorRel)}: is an ${existing.kind} cursor, source ${src.source} collected as snapshot`, { data: { file: cursorRel } });
    let cur = existing as SnapshotCursor | undefined;
    if (cur?.state === "conflict") {
      this.conflicts++;
      return { status: "in_conflict", landed: [], bytesRead: 0 };
    }
    const look = inspectSource(src.path);
    if (look.gone) return this.gone_(cursorRel, cur);
    if (look.problem !== undefined) return this.problem(src, "problem", look.problem);
    let content: Buffer;
    let st: Stats;
    try {
      const fd = openSync(src.path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
      try {
        st = fstatSync(fd);
        if (!st.isFile()) return this.problem(src, "problem", "not a regular file");
        content = readAt(fd, 0, st.size, src.path);
      } finally {
        closeSync(fd);
      }
    } catch (e) {
      if (errno(e) === "ENOENT" || errno(e) === "ENOTDIR") return this.gone_(cursorRel, cur);
      return this.problem(src, "problem", sourceReason(e));
    }
    let reactivated = false;
    if (cur && cur.state === "source_gone") {
      cur = { ...cur, state: "active", updated_at: isoMicros(nowNs()) };
      s.saveCursor(cursorRel, cur);
      reactivated = true;
    }
    let end = content.length;
    while (end > 0 && (content[end - 1] === 10 || content[end - 1] === 13)) end--;
    const trimmed = content.subarray(0, end);
    const extra = reactivated ? { reactivated } : {};
    if (trimmed.length === 0) return { status: "unchanged", landed: [], bytesRead: 0, ...extra };
    const digest = sha256(trimmed);
    if (cur && cur.content_sha256 === digest) return { status: "unchanged", landed: [], bytesRead: 0, ...extra };
    // The whole content goes to convert as one line (a snapshot may be multi-line JSON).
    const text = trimmed.toString("utf8");
    let value: unknown;
    let bad = false;
    try {
      value = JSON.parse(text);
    } catch {
      bad = true;
    }
    const one: SourceLine = { bytes: trimmed, text, value, offset: 0, line: 1 };
    const rows = await this.toRecords(src, [one], [bad], convert, trimmed.length + (trimmed.length >> 1) + 4096);
    if (rows.body.records === 0) throw new StoreError("InvalidArgument", `${src.path}: convert returned no record for a snapshot source`, { data: { file: src.path } });
    let nlines = 1;
    for (const b of trimmed) if (b === 10) nlines++;
    const f = this.land(src, area, dirRel, "snapshot", { first_offset: 0, end_offset: trimmed.length, first_line: 1, last_line: nlines }, rows, digest);
    const c: SnapshotCursor = {
      schema: CURSOR_SCHEMA, kind: "snapshot", source: src.source, dev: st.dev, ino: st.ino, content_sha256: digest, size: st.size, mtime: mtimeSec(st),
      last_seq: f.seq, updated_at: isoMicros(nowNs()), state: "active",
    };
    s.saveCursor(cursorRel, c);
    return { status: "landed", landed: [f], bytesRead: content.length, ...extra };
  }

  /**
   * Pruned sources: after the session's discovered sources, look at every other cursor of the session.
   * An `active` cursor whose file no longer exists becomes `source_gone`. `resolve` maps a cursor's
   * source to the absolute path this adapter would read, or undefined for a path it does not produce
   * (left alone). A permission or other error leaves the cursor as it is.
   * @returns the number of cursors set to source_gone.
   */
  pruneUnseen(resolve: (source: string, where: { area: Area; stream: string; kind: string }) => string | undefined): number {
    const s = this.session;
    s.assertOpen();
    let n = 0;
    for (const rel of [...s.cursorFiles].sort()) {
      if (this.visited.has(rel)) continue;
      let cur: Cursor | undefined;
      try {
        cur = s.loadCursor(rel);
      } catch {
        continue; // a corrupt cursor is verify's to report
      }
      if (!cur || cur.state !== "active") continue;
      const [area, stream, file] = rel.split("/") as [Area, string, string];
      const p = resolve(cur.source, { area, stream, kind: file.slice(0, -".cursor".length) });
      if (p === undefined) continue;
      try {
        lstatSync(p);
        continue;
      } catch (e) {
        if (errno(e) !== "ENOENT" && errno(e) !== "ENOTDIR") continue;
      }
      s.saveCursor(rel, { ...cur, state: "source_gone", updated_at: isoMicros(nowNs()) });
      n++;
    }
    this.gone += n;
    return n;
  }

  /**
   * End the pass: save session.state and (unless `index: false`) bring the index up to date.
   * `failed` carries a single pass's non-zero exit semantics (pending or conflicts).
   */
  finish(options: { index?: boolean } = {}): PassSummary {
    const s = this.session;
    s.assertOpen();
    s.saveState();
    // A directory this open created holds no landed file unless this pass landed one: no index to write.
    const index = options.index === false || (s.createdDir && this.landedFiles === 0) ? undefined : s.updateIndex();
    const out: Mutable<PassSummary> = {
      stamp: this.stamp, landed: this.landedFiles, records: this.records, pending: this.pending, conflicts: this.conflicts,
      newConflicts: this.newConflicts, gone: this.gone, problems: this.problems, failed: this.pending > 0 || this.conflicts > 0 || this.problems.length > 0,
      seq: s.highestSeqHint().seq,
    };
    if (index) out.index = index;
    if (index?.damaged?.length) {
      for (const d of index.damaged) this.problems.push(d);
      out.problems = this.problems;
      out.failed = true;
    }
    return out;
  }
}

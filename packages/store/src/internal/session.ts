import { closeSync, constants as fsConstants, fstatSync, mkdirSync, openSync, readFileSync, rmdirSync, rmSync, unlinkSync } from "node:fs";
import { join, resolve as resolvePath } from "node:path";
import { uptime } from "node:os";
import { DirSync } from "@lake/durable";
import { StoreError, errno, ioError } from "./errors.js";
import { replaceAtomic, type StepHook } from "./fsx.js";
import { decodeKv, encodeKv, kvInt } from "./kv.js";
import { acquireLock, type LockHandle } from "./lock.js";
import { checkId, formatStamp, isoMicros, nowNs } from "./names.js";
import { encodeCursor, readCursorFile, type Cursor } from "./cursor.js";
import { RESERVED_ROOT_NAMES, scanSession, type LandedRef } from "./scan.js";
import { updateIndexFor, type IndexUpdate, type PendingFile } from "./indexer.js";
import { FORGET_DIR, isForgotten } from "./removal.js";
import type { ResolveMode, SessionOptions } from "./contracts.js";
import { mtimeSec, readAt, sha256, tailDigest } from "./window.js";
import { Pass } from "./pass.js";

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
  /**
   * @internal the directories of cursors saved since the last flush: a cursor is renamed into place
   * after its file landed (the landing fsynced that directory), and its own directory fsync waits
   * for the next landing there or for `flushDirs` (pass end, close), once per directory.
   */
  readonly dirSync: DirSync;

  /** @internal use {@link openSession}. */
  constructor(root: string, sessionId: string, lock: LockHandle, opts: SessionOptions) {
    this.root = root;
    this.sessionId = sessionId;
    this.dir = join(root, sessionId);
    this.lock = lock;
    this.opts = opts;
    this.dirSync = new DirSync({ label: "cursor-dirs", sync: opts.fsync !== false, ...(opts.onStep ? { step: opts.onStep } : {}) });
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
    // session.state is a cache written without fsync: after a machine crash it may be empty or torn.
    // One that does not decode is treated as absent (the directory is scanned: the disk decides).
    try {
      const m = decodeKv(text, p);
      const nextSeq = kvInt(m, "next_seq", p) ?? 1;
      return { text, nextSeq, lastScanMs: Date.parse(m.get("last_scan") ?? "") };
    } catch {
      return undefined;
    }
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
    replaceAtomic(p, d, encodeCursor(c), this.opts.onStep, "cursor", this.opts.fsync !== false, this.dirSync);
    this.cursors.set(rel, c);
    this.scanned?.cursorFiles.add(rel);
    this.known?.add(rel);
  }

  /** @internal fsync the directories of the cursors saved since the last landing in them (once each). */
  flushDirs(): void {
    try {
      this.dirSync.flush();
    } catch (e) {
      throw ioError(this.dirSync.pending()[0] ?? this.dir, "fsync directory", e);
    }
  }

  /**
   * Write session.state (next_seq, liveness unknown, last scan) when the counter moved (or it
   * predates this boot). A cache, replaced atomically without fsync: the disk is the authority on
   * the counter, and a machine crash makes every session.state older than the boot, so the next
   * open scans the directory anyway (one that does not decode is treated as absent).
   */
  saveState(force = false): void {
    this.assertOpen();
    if (!force && this.seq === this.stateSeq && !this.stateStale) return;
    this.ensureDir(this.dir);
    const text = encodeKv([
      ["schema", 1], ["session", this.sessionId], ["next_seq", this.seq], ["liveness", "unknown"], ["last_scan", isoMicros(nowNs())],
    ]);
    replaceAtomic(join(this.dir, "session.state"), this.dir, text, this.opts.onStep, "state", false);
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
      this.flushDirs();
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

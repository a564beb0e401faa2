import { chmodSync, closeSync, fchmodSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { readWalFileWith, type WalDecodeResult, type WalTornTail } from "./decode.js";
import { prepareRecordWith, type KnownRecordValidator } from "./encode.js";
import { KNOWN_RECORD_TYPE_NAMES, NEEDS_SCHEMAS, parseSkippableOnly } from "./record-types.js";
import { ioError, isWalError, WalError } from "./errors.js";
import { FEATURE_FLOOR_FILE, fsyncDir, raiseFeatureFloor, readFeatureFloor } from "./floor.js";
import { encodeFrame, encodeLineageFrame, lineageIdToUuid, mintLineageId, uuidToLineageId } from "./frame.js";
import { readWalTail, walFileStamp, writeWalTail } from "./tail.js";

/**
 * When the writer calls fsync. `always`: every append (and the creation of a file) is fsynced
 * before the promise resolves. `manual`: nothing is fsynced until the caller calls `sync()` or
 * passes `{ sync: true }` to an append (batching, as broca does for informational records).
 */
export type WalFsyncPolicy = "always" | "manual";

/** Options for {@link WalWriter.open}. */
export interface WalWriterOptions {
  /** The fsync policy. Required: durability is the caller's explicit choice. */
  readonly fsync: WalFsyncPolicy;
  /** The lease tenure stamp written into every record frame (forensic only). Default 0. */
  readonly fence?: bigint;
  /**
   * Path of the feature floor file. Default: `wal-feature-floor` in the state root, i.e. two
   * directories above the WAL (`<root>/wal/<addr>.wal` → `<root>/wal-feature-floor`).
   */
  readonly featureFloorPath?: string;
  /** Lineage id (UUID form) for a newly created file. Default: a freshly minted one. */
  readonly lineageId?: string;
  /**
   * Path of the file's tail cache (README "Tail cache"): `close` records there where the file ends,
   * its stat, last seq and lineage, once everything appended is synced; a reopen that finds the
   * file exactly so (inode, size, mtime and ctime) continues from there instead of decoding the
   * file. Absent, stale or unreadable: the file is decoded, as without one. Only for a file whose
   * one writer at a time always passes it (another writer would leave it stale: that is seen).
   */
  readonly tailCache?: string;
}

/** Options for one append. */
export interface WalAppendOptions {
  /** Extra required features (each must be in the known-feature table), e.g. flow-scopes/v1. */
  readonly requires?: readonly string[];
  /** fsync this append even under the `manual` policy. */
  readonly sync?: boolean;
}

/** What one append wrote. */
export interface WalAppendResult {
  /** The record's sequence number. */
  readonly seq: number;
  /** Byte offset of the record frame. */
  readonly offset: number;
  /** True when it was written as a ver 3 frame. */
  readonly gated: boolean;
  /** The features it required. */
  readonly requires: readonly string[];
}

/**
 * The single writer of one WAL file. Opening creates the file (0600, in 0700 directories) starting
 * with a lineage frame, or reopens an existing one: it is decoded in full first (a refused file is
 * never touched; not when its tail cache says where it ends and the file is as that says, see
 * {@link WalWriterOptions.tailCache}) and a torn tail is truncated — the only place a torn tail is ever cut. Each append
 * writes the record frame followed by a copy of the lineage frame in one write. A record that
 * requires a feature first raises the feature floor; if that fails the append is refused and
 * nothing is written. Its I/O is synchronous (node:fs's `*Sync` calls: an append's write and fsync
 * run on the calling thread, no thread-pool hop), so a program that only appends never loads
 * node:fs/promises (some 3 ms of a start); its methods still return promises, appends in call order.
 */
export class WalWriter {
  /** The WAL file path. */
  readonly path: string;
  /** The lineage id in UUID form. */
  readonly lineageId: string;
  /** What reopening truncated, or null when the file ended cleanly (or was new). */
  readonly truncated: WalTornTail | null;
  /** True when `open` created the file. */
  readonly created: boolean;
  /** The file descriptor, or null once closed. */
  #fd: number | null;
  #lineageFrame: Buffer;
  #pendingLineage: boolean;
  #position: number;
  #lastSeq: number;
  #fence: bigint;
  #policy: WalFsyncPolicy;
  #floorPath: string;
  #floor: Set<string> | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  #broken: WalError | null = null;
  #tailCache: string | undefined;
  /** The file may hold bytes not yet fsynced (appended since the last fsync, or there when it was opened). */
  #unsynced: boolean;

  private constructor(init: {
    path: string;
    fd: number;
    lineage: Uint8Array;
    pendingLineage: boolean;
    position: number;
    lastSeq: number;
    options: WalWriterOptions;
    truncated: WalTornTail | null;
    created: boolean;
    /** Everything in the file is known fsynced. */
    synced: boolean;
  }) {
    this.path = init.path;
    this.#fd = init.fd;
    this.lineageId = lineageIdToUuid(init.lineage);
    this.#lineageFrame = encodeLineageFrame(init.lineage);
    this.#pendingLineage = init.pendingLineage;
    this.#position = init.position;
    this.#lastSeq = init.lastSeq;
    this.#fence = init.options.fence ?? 0n;
    this.#policy = init.options.fsync;
    this.#floorPath = init.options.featureFloorPath ?? join(dirname(dirname(init.path)), FEATURE_FLOOR_FILE);
    this.#tailCache = init.options.tailCache;
    this.truncated = init.truncated;
    this.created = init.created;
    this.#unsynced = !init.synced;
  }

  /** Sequence number of the last record in the file (0 when none). */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** Current end of the file (bytes). */
  get size(): number {
    return this.#position;
  }

  /** Open (or create) the WAL at `path` for appending. See the class description. */
  static async open(path: string, options: WalWriterOptions): Promise<WalWriter> {
    if (options.fsync !== "always" && options.fsync !== "manual") {
      throw new WalError("InvalidArgument", `fsync policy must be "always" or "manual"`, { data: { file: path } });
    }
    const dir = dirname(path);
    try {
      const first = mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (first !== undefined) {
        // Every directory mkdir created, from the deepest up to the first, gets 0700 whatever the umask.
        for (let d = dir; ; d = dirname(d)) {
          chmodSync(d, 0o700);
          if (d === first || d === dirname(d)) break;
        }
      }
    } catch (e) {
      throw ioError(dir, "cannot create WAL directory", e);
    }
    let fd: number;
    try {
      fd = openSync(path, "wx", 0o600);
    } catch (e) {
      if ((e as { code?: unknown }).code !== "EEXIST") throw ioError(path, "cannot create WAL", e);
      return WalWriter.#reopen(path, options);
    }
    try {
      fchmodSync(fd, 0o600);
      const lineage = options.lineageId === undefined ? mintLineageId() : uuidToLineageId(options.lineageId);
      const frame = encodeLineageFrame(lineage);
      writeAll(fd, frame, 0, path);
      if (options.fsync === "always") {
        fsyncSync(fd);
        fsyncDir(dir);
      }
      return new WalWriter({ path, fd, lineage, pendingLineage: false, position: frame.length, lastSeq: 0, options, truncated: null, created: true, synced: options.fsync === "always" });
    } catch (e) {
      closeSync(fd);
      throw ioError(path, "cannot initialise WAL", e);
    }
  }

  static async #reopen(path: string, options: WalWriterOptions): Promise<WalWriter> {
    const cached = options.tailCache === undefined ? undefined : await WalWriter.#fromTail(path, options);
    if (cached !== undefined) return cached;
    // Decode first: a refused file (corrupt, spliced, newer writer, …) is never opened for writing.
    const r = await scanForAppend(path);
    let fd: number;
    try {
      fd = openSync(path, "r+");
    } catch (e) {
      throw ioError(path, "cannot open WAL for appending", e);
    }
    try {
      const st = fstatSync(fd);
      if (st.size < r.validLength) throw new WalError("Io", "WAL shrank while it was being reopened", { data: { file: path } });
      let truncated: WalTornTail | null = null;
      if (st.size > r.validLength) {
        // Bytes after the last complete frame: the torn tail seen by the decode (or an append that
        // raced it, which a single-writer file cannot have).
        truncated = { offset: r.validLength, bytes: st.size - r.validLength };
        ftruncateSync(fd, r.validLength);
        fsyncSync(fd);
      }
      const lineage = r.lineageId === null ? mintLineageId() : uuidToLineageId(r.lineageId);
      return new WalWriter({
        path,
        fd,
        lineage,
        pendingLineage: r.lineageId === null,
        position: r.validLength,
        lastSeq: r.lastSeq,
        options,
        truncated,
        created: false,
        // A torn tail cut is fsynced, and the bytes before it with it.
        synced: truncated !== null,
      });
    } catch (e) {
      closeSync(fd);
      throw ioError(path, "cannot reopen WAL", e);
    }
  }

  /** The writer of a file its tail cache describes as it is now (nothing written since), else undefined. */
  static async #fromTail(path: string, options: WalWriterOptions): Promise<WalWriter | undefined> {
    const tail = readWalTail(options.tailCache!);
    if (tail === undefined) return undefined;
    let fd: number;
    try {
      fd = openSync(path, "r+");
    } catch (e) {
      throw ioError(path, "cannot open WAL for appending", e);
    }
    try {
      const st = fstatSync(fd, { bigint: true });
      // A tail cache is written only once everything in the file is synced: the file is as it says, so it still is.
      if (walFileStamp(st) === tail.stat) {
        return new WalWriter({ path, fd, lineage: uuidToLineageId(tail.lineageId), pendingLineage: false, position: Number(st.size), lastSeq: tail.lastSeq, options, truncated: null, created: false, synced: true });
      }
    } catch (e) {
      closeSync(fd);
      throw ioError(path, "cannot reopen WAL", e);
    }
    closeSync(fd);
    return undefined;
  }

  /**
   * Append one record. Known types are validated (InvalidArgument on failure); the record's own
   * feature requirements plus `options.requires` decide between a ver 1 and a ver 3 frame. Appends
   * are serialised in call order.
   */
  append(record: { readonly type: string } & Record<string, unknown>, options: WalAppendOptions = {}): Promise<WalAppendResult> {
    const run = this.#queue.then(() => this.#append(record, options));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #append(record: { readonly type: string } & Record<string, unknown>, options: WalAppendOptions): Promise<WalAppendResult> {
    const fd = this.#open();
    const prepared = prepareRecordWith(record, options.requires ?? [], KNOWN_RECORD_TYPE_NAMES.has(record.type) ? await knownValidator() : undefined);
    if (prepared.requires.length > 0) this.#raiseFloor(prepared.requires);
    const seq = this.#lastSeq + 1;
    const frame = encodeFrame({ ver: prepared.ver, seq: BigInt(seq), fence: this.#fence, payload: prepared.payload });
    const parts = this.#pendingLineage ? [this.#lineageFrame, frame, this.#lineageFrame] : [frame, this.#lineageFrame];
    const bytes = Buffer.concat(parts);
    const offset = this.#position + (this.#pendingLineage ? this.#lineageFrame.length : 0);
    try {
      writeAll(fd, bytes, this.#position, this.path);
      this.#unsynced = true;
      if (this.#policy === "always" || options.sync === true) {
        fsyncSync(fd);
        this.#unsynced = false;
      }
    } catch (e) {
      // The file may now end in a torn frame; only a reopen (which truncates it) may continue.
      this.#broken = ioError(this.path, "append failed; reopen the WAL to continue", e);
      throw this.#broken;
    }
    this.#position += bytes.length;
    this.#lastSeq = seq;
    this.#pendingLineage = false;
    return { seq, offset, gated: prepared.requires.length > 0, requires: prepared.requires };
  }

  #raiseFloor(requires: readonly string[]): void {
    if (this.#floor !== null && requires.every((f) => this.#floor!.has(f))) return;
    try {
      raiseFeatureFloor(this.#floorPath, requires);
      this.#floor = new Set(readFeatureFloor(this.#floorPath));
    } catch (e) {
      if (isWalError(e) && e.code === "FeatureFloor") throw e;
      throw new WalError("FeatureFloor", `cannot raise the feature floor: ${(e as Error).message}`, { data: { file: this.#floorPath }, cause: e });
    }
    if (!requires.every((f) => this.#floor!.has(f))) {
      throw new WalError("FeatureFloor", `feature floor does not name ${requires.join(", ")} after raising it`, { data: { file: this.#floorPath } });
    }
  }

  #open(): number {
    if (this.#broken !== null) throw this.#broken;
    if (this.#fd === null) throw new WalError("Closed", "WAL writer is closed", { data: { file: this.path } });
    return this.#fd;
  }

  /** fsync everything appended so far. */
  sync(): Promise<void> {
    const run = this.#queue.then(() => {
      try {
        fsyncSync(this.#open());
        this.#unsynced = false;
      } catch (e) {
        throw ioError(this.path, "fsync failed", e);
      }
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Wait for pending appends, fsync under the `always` policy (unless the file is known synced: every
   * append since it was opened was), record the tail cache (when there is one and everything in the
   * file is synced), and close the file.
   */
  async close(): Promise<void> {
    await this.#queue;
    const fd = this.#fd;
    this.#fd = null;
    if (fd === null) return;
    try {
      if (this.#policy === "always" && this.#broken === null && this.#unsynced) {
        fsyncSync(fd);
        this.#unsynced = false;
      }
      if (this.#tailCache !== undefined && this.#broken === null && !this.#unsynced && !this.#pendingLineage) {
        try {
          writeWalTail(this.#tailCache, { stat: walFileStamp(fstatSync(fd, { bigint: true })), lastSeq: this.#lastSeq, lineageId: this.lineageId });
        } catch {
          // A cache: one not written only costs the next writer a decode.
        }
      }
    } finally {
      closeSync(fd);
    }
  }
}

function writeAll(fd: number, bytes: Buffer, position: number, path: string): void {
  let done = 0;
  while (done < bytes.length) {
    const n = writeSync(fd, bytes, done, bytes.length - done, position + done);
    if (n <= 0) throw new WalError("Io", "write returned no progress", { data: { file: path } });
    done += n;
  }
}

/**
 * Read a WAL to append to it. The schemas (zod) load only when the file holds a record of a known
 * type, so a writer of skippable records (the collector's hook spool) never loads them.
 */
async function scanForAppend(path: string): Promise<WalDecodeResult> {
  try {
    return await readWalFileWith(path, { collect: false }, parseSkippableOnly);
  } catch (e) {
    if (e !== NEEDS_SCHEMAS) throw e;
  }
  const { parseRecordValue } = await import("./records.js");
  return readWalFileWith(path, { collect: false }, parseRecordValue);
}

/** The schema check of known records, loaded on first use. */
async function knownValidator(): Promise<KnownRecordValidator> {
  return (await import("./records.js")).validateKnownRecord;
}

// Atomic replace and install without replace. Both write a temporary file in the target's own
// directory (a rename or link never crosses a file system), fsync it, put it in place, fsync the
// directory. Errors are Node's own system errors, unchanged: each caller wraps them in its error class.
import { randomHex } from "./random.js";
import { chmodSync, closeSync, linkSync, lstatSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { errno } from "./errno.js";
import type { DirSync } from "./dirsync.js";
import { fsyncDir, fsyncFile } from "./fsync.js";
import type { StepHook } from "./step.js";

/** Prefix of the default temporary name, `.tmp-<name>-<random>` beside the target. */
export const TEMP_PREFIX = ".tmp-";

/** What to write: a string (UTF-8), bytes, or chunks written in order. */
export type FileData = string | Uint8Array | readonly Uint8Array[];

/** Options of `writeAtomic` and `installNoReplace`. */
export interface WriteOptions {
  /** Crash-step hook, called as `<label>:<step>` before each step. */
  readonly step?: StepHook;
  /** Step label (default `replace` / `land`). */
  readonly label?: string;
  /**
   * false skips both fsyncs: only for tests that kill processes, not machines (the page cache
   * survives a killed process, so the order of the steps alone decides what it sees).
   */
  readonly sync?: boolean;
  /** Mode the temporary file is created with (default 0600; the final file keeps it). */
  readonly mode?: number;
  /** The temporary file's path (default `<dir>/.tmp-<name>-<random>`); must be on the target's file system. */
  readonly temp?: string;
  /** `replaceFrom` / `installFrom`: keep the temporary file when the target's directory is missing (ENOENT). */
  readonly keepTempOnMissingDir?: boolean;
  /** `replaceFrom`: fsync the temporary file first (one another library wrote, e.g. SQLite or DuckDB, and closed unsynced). */
  readonly syncTemp?: boolean;
  /**
   * A batch of directory fsyncs. A replace leaves its directory fsync to it (no `fsync-dir` step:
   * the batch's `flush()` does it); an install still fsyncs the directory at once and tells the
   * batch that directory is durable.
   */
  readonly dirSync?: DirSync;
  /**
   * `replaceFrom` / `installFrom`: the directory fsync is the caller's (no `fsync-dir` step): it
   * must `fsyncDirAsync(dirname(path))` before it relies on the name, as an object store does
   * before it answers a put.
   */
  readonly callerSyncsDir?: boolean;
}

/** The default temporary path for `path`: `.tmp-<name>-<12 hex>` in the same directory. */
export function tempPathFor(path: string): string {
  return join(dirname(path), `${TEMP_PREFIX}${basename(path)}-${randomHex(6)}`);
}

function chunksOf(data: FileData): readonly Uint8Array[] {
  if (typeof data === "string") return [Buffer.from(data)];
  if (data instanceof Uint8Array) return [data];
  return data;
}

function writeTemp(tmp: string, data: FileData, o: WriteOptions, label: string): void {
  o.step?.(`${label}:write-temp`);
  const fd = openSync(tmp, "wx", o.mode ?? 0o600);
  try {
    for (const c of chunksOf(data)) {
      let off = 0;
      while (off < c.length) off += writeSync(fd, c, off, c.length - off);
    }
    o.step?.(`${label}:fsync-temp`);
    if (o.sync !== false) fsyncFile(fd);
  } finally {
    closeSync(fd);
  }
}

/** Remove a file, ignoring every error (it is gone already, or was never made). */
export function unlinkQuiet(p: string): void {
  try {
    unlinkSync(p);
  } catch {
    /* already gone */
  }
}

/**
 * Replace `path` atomically: a reader sees the old content or the new, never a mix, and after a
 * crash the file holds one of the two. Steps: `write-temp`, `fsync-temp`, `rename`, `fsync-dir`
 * (with `dirSync`, the directory fsync is left to that batch). On failure the temporary file is
 * removed and the Node error is rethrown.
 */
export function writeAtomic(path: string, data: FileData, options: WriteOptions = {}): void {
  const label = options.label ?? "replace";
  const tmp = options.temp ?? tempPathFor(path);
  try {
    writeTemp(tmp, data, options, label);
  } catch (e) {
    unlinkQuiet(tmp);
    throw e;
  }
  replaceFrom(tmp, path, { ...options, label });
}

/**
 * Put an already written temporary file over `path` (fsynced first with `syncTemp`): rename, then
 * fsync the directory. Steps [`fsync-temp`], `rename`, `fsync-dir`. On failure the temporary file is
 * removed and the Node error rethrown (an ENOENT for a missing parent directory too: the caller may
 * create it and call again with a new temporary file).
 */
export function replaceFrom(tmp: string, path: string, options: Omit<WriteOptions, "temp" | "mode"> = {}): void {
  const label = options.label ?? "replace";
  moveIntoPlace(tmp, path, options, label, true, () => {
    if (options.syncTemp === true) {
      options.step?.(`${label}:fsync-temp`);
      if (options.sync !== false) fsyncFile(tmp);
    }
    options.step?.(`${label}:rename`);
    renameSync(tmp, path);
    return true;
  });
}

/**
 * The shared tail of `replaceFrom` and `installFrom`: run `move` (which puts `tmp` under `path`, or
 * answers false when it did not); on failure remove `tmp` (kept on ENOENT with
 * `keepTempOnMissingDir`) and rethrow; after a move, step `fsync-dir` and fsync the directory — or,
 * for a replace (`deferDir`) given a `dirSync` batch, leave that fsync to the batch; an install's
 * fsync tells the batch its directory is durable.
 */
function moveIntoPlace(tmp: string, path: string, options: Pick<WriteOptions, "step" | "sync" | "keepTempOnMissingDir" | "dirSync" | "callerSyncsDir">, label: string, deferDir: boolean, move: () => boolean): boolean {
  let moved: boolean;
  try {
    moved = move();
  } catch (e) {
    if (errno(e) !== "ENOENT" || !options.keepTempOnMissingDir) unlinkQuiet(tmp);
    throw e;
  }
  if (!moved) return false;
  if (options.callerSyncsDir) return true;
  if (deferDir && options.dirSync) {
    options.dirSync.defer(dirname(path));
    return true;
  }
  options.step?.(`${label}:fsync-dir`);
  if (options.sync !== false) fsyncDir(dirname(path));
  options.dirSync?.covered(dirname(path));
  return true;
}

/**
 * How a file is installed under its final name without replacing: `link` (a hard link, falling
 * back to `reserve` where the file system has none) or `reserve` (an empty O_EXCL file holds the
 * name, then the complete file is renamed over it: between the two a reader or a crash can see an
 * empty file, which callers treat as a reservation).
 */
export type InstallMode = "link" | "reserve";

/** Options of `installNoReplace`. */
export interface InstallOptions extends WriteOptions {
  /** Default `link`. */
  readonly installMode?: InstallMode;
  /**
   * In `link` mode, where the file system has no hard links (`linkUnsupported`), fall back to
   * `reserve` (default false: the link error is thrown). Only for a reader that knows the spec's
   * reservations: a crash between the reservation and the rename leaves an EMPTY file under the name.
   */
  readonly reserveFallback?: boolean;
  /** chmod the temporary file to 0444 before it is installed (default false). */
  readonly readOnly?: boolean;
}

/** What `installNoReplace` did: `installed` (with the mode used), or `exists` (nothing there was touched). */
export type InstallResult = { readonly installed: true; readonly mode: InstallMode } | { readonly installed: false };

/** Whether `tmp` has a second name (a link that succeeded although it was reported as EEXIST). */
function linkedTwice(tmp: string): boolean {
  try {
    return lstatSync(tmp).nlink >= 2;
  } catch {
    return false;
  }
}

/** Whether `link` failed because the file system has no hard links. */
export function linkUnsupported(e: unknown): boolean {
  const c = errno(e);
  return c === "ENOTSUP" || c === "EOPNOTSUPP" || c === "EPERM" || c === "ENOSYS" || c === "EXDEV";
}

/**
 * Write `path` only if the name is free: `{installed: false}` when it is taken (whatever is there is
 * left untouched). Steps (link mode): `write-temp`, `fsync-temp`, [`chmod`], `link`, `unlink-temp`,
 * `fsync-dir`; reserve mode: …, [`chmod`], `reserve`, `rename`, `fsync-dir`. On failure the
 * temporary file is removed and the Node error is rethrown.
 */
export function installNoReplace(path: string, data: FileData, options: InstallOptions = {}): InstallResult {
  const label = options.label ?? "land";
  const tmp = options.temp ?? tempPathFor(path);
  try {
    writeTemp(tmp, data, options, label);
    if (options.readOnly === true) {
      options.step?.(`${label}:chmod`);
      chmodSync(tmp, 0o444);
    }
  } catch (e) {
    unlinkQuiet(tmp);
    throw e;
  }
  return installFrom(tmp, path, { ...options, label });
}

/**
 * Install an already written (and fsynced) temporary file under `path` only if that name is free:
 * link (or reserve, then rename), remove the temporary name, fsync the directory. Steps `link`,
 * `unlink-temp` / `reserve`, `rename`, then `fsync-dir`. The temporary file is gone afterwards
 * whatever happened, except when the error is ENOENT and `keepTempOnMissingDir` is set (the parent
 * directory is missing: the caller may create it and call again).
 */
export function installFrom(tmp: string, path: string, options: Omit<InstallOptions, "temp" | "mode" | "readOnly"> = {}): InstallResult {
  const label = options.label ?? "land";
  let mode = options.installMode ?? "link";
  const moved = moveIntoPlace(tmp, path, options, label, false, () => {
    if (mode === "link") {
      options.step?.(`${label}:link`);
      try {
        linkSync(tmp, path);
        options.step?.(`${label}:unlink-temp`);
        unlinkSync(tmp);
      } catch (e) {
        if (errno(e) === "EEXIST") {
          // NFS: a retransmitted LINK whose first try succeeded answers EEXIST; the temp file's
          // link count says whether the name is ours (open(2), "O_EXCL" on NFS).
          const ours = linkedTwice(tmp);
          if (ours) {
            options.step?.(`${label}:unlink-temp`);
            unlinkSync(tmp);
          } else {
            unlinkQuiet(tmp);
            return false;
          }
        } else {
          if (!linkUnsupported(e) || options.reserveFallback !== true) throw e;
          mode = "reserve";
        }
      }
    }
    if (mode === "reserve") {
      options.step?.(`${label}:reserve`);
      let fd: number;
      try {
        fd = openSync(path, "wx", 0o444);
      } catch (e) {
        if (errno(e) === "EEXIST") {
          unlinkQuiet(tmp);
          return false;
        }
        throw e;
      }
      closeSync(fd);
      options.step?.(`${label}:rename`);
      renameSync(tmp, path);
    }
    return true;
  });
  return moved ? { installed: true, mode } : { installed: false };
}

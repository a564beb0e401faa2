import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, fsyncSync, linkSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { StoreError, errno, ioError } from "./errors.js";

/** Called before every durable step (test hook: a crash test kills the process at step N). */
export type StepHook = (step: string) => void;

/** Prefix of every temporary file the store writes; never matches a landed or cursor name. */
export const TEMP_PREFIX = ".tmp-";

function tempName(dir: string, name: string): string {
  return join(dir, `${TEMP_PREFIX}${name}-${randomBytes(6).toString("hex")}`);
}

/** fsync a directory so a rename / link / unlink in it is durable. */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch (e) {
    throw ioError(dir, "fsync directory", e);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function writeAll(fd: number, chunks: readonly Uint8Array[]): void {
  for (const c of chunks) {
    let off = 0;
    while (off < c.length) off += writeSync(fd, c, off, c.length - off);
  }
}

function writeTemp(tmp: string, chunks: readonly Uint8Array[], step: StepHook | undefined, label: string, sync: boolean): void {
  step?.(`${label}:write-temp`);
  const fd = openSync(tmp, "wx", 0o600);
  try {
    writeAll(fd, chunks);
    step?.(`${label}:fsync-temp`);
    if (sync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * `sync` false skips the fsyncs (only for tests that kill processes, not machines: the page
 * cache survives a killed process, so the order of operations alone decides what it sees).
 *
 * Land a file: write it to a temporary name, fsync, make it read-only (0444), install the final
 * name without replacing (hard link, then unlink the temporary name), fsync the directory.
 * Throws StoreError `Exists` when the final name is taken; nothing already there is touched.
 */
export function landNoReplace(dir: string, name: string, chunks: readonly Uint8Array[], step?: StepHook, sync = true): void {
  const tmp = tempName(dir, name);
  const final = join(dir, name);
  try {
    writeTemp(tmp, chunks, step, "land", sync);
    step?.("land:chmod");
    chmodSync(tmp, 0o444);
    step?.("land:link");
    try {
      linkSync(tmp, final);
    } catch (e) {
      if (errno(e) === "EEXIST") throw new StoreError("Exists", `${final}: landed file already exists; not replaced`, { data: { file: final } });
      throw e;
    }
    step?.("land:unlink-temp");
    unlinkSync(tmp);
    step?.("land:fsync-dir");
    if (sync) fsyncDir(dir);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw ioError(final, "land", e);
  }
}

/** Replace a small file atomically: temporary name, fsync, rename over, fsync the directory. */
export function replaceAtomic(path: string, dir: string, data: string | Uint8Array, step?: StepHook, label = "replace", sync = true): void {
  const name = path.slice(dir.length + 1);
  const tmp = tempName(dir, name);
  try {
    writeTemp(tmp, [typeof data === "string" ? Buffer.from(data) : data], step, label, sync);
    step?.(`${label}:rename`);
    renameSync(tmp, path);
    step?.(`${label}:fsync-dir`);
    if (sync) fsyncDir(dir);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw ioError(path, "write", e);
  }
}

// The store's durable writes, on @lake/durable; failures become StoreError naming the file.
import { statSync } from "node:fs";
import { join } from "node:path";
import { fsyncDir as durableFsyncDir, installNoReplace, writeAtomic, type DirSync, type StepHook } from "@lake/durable";
import { StoreError, ioError } from "./errors.js";

/** Called before every durable step (test hook: a crash test kills the process at step N). */
export type { StepHook };

/** Prefix of every temporary file the store writes; never matches a landed or cursor name. */
export { TEMP_PREFIX } from "@lake/durable";

/** fsync a directory so a rename / link / unlink in it is durable (@lake/durable's error policy). */
export function fsyncDir(dir: string): void {
  try {
    durableFsyncDir(dir);
  } catch (e) {
    throw ioError(dir, "fsync directory", e);
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
export function landNoReplace(dir: string, name: string, chunks: readonly Uint8Array[], step?: StepHook, sync = true, dirSync?: DirSync): void {
  const final = join(dir, name);
  let r;
  try {
    r = installNoReplace(final, chunks, { readOnly: true, label: "land", sync, ...(step ? { step } : {}), ...(dirSync ? { dirSync } : {}) });
  } catch (e) {
    throw ioError(final, "land", e);
  }
  if (!r.installed) throw new StoreError("Exists", `${final}: landed file already exists; not replaced`, { data: { file: final } });
}

/**
 * Replace a small file atomically: temporary name, fsync, rename over, fsync the directory (`dir`,
 * the file's own) — or, with `dirSync`, leave the directory fsync to that batch.
 */
export function replaceAtomic(path: string, _dir: string, data: string | Uint8Array, step?: StepHook, label = "replace", sync = true, dirSync?: DirSync): void {
  try {
    writeAtomic(path, data, { label, sync, ...(step ? { step } : {}), ...(dirSync ? { dirSync } : {}) });
  } catch (e) {
    throw ioError(path, "write", e);
  }
}

/**
 * A file's identity for a cache check, `<ino>:<size>:<mtime ns>:<ctime ns>`, or undefined when it
 * cannot be stat'ed. A file the store replaces by rename gets another inode, or at least another
 * ctime, each time: an unchanged stamp means an unchanged file.
 */
export function fileStamp(path: string): string | undefined {
  try {
    const st = statSync(path, { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return undefined;
  }
}

// `.lock`: one parser per chain. @lake/durable's one lock file; its failures as ChainError.
import { fsp } from "./fs.js";
import { join } from "node:path";
import { errno, tryLock, type InstallMode, type LockHandle } from "@lake/durable";
import { ChainError } from "./errors.js";

/** How a file is installed under its final name without replacing: hard link, or an O_EXCL reservation. */
export type { InstallMode };

/** One minute: the age past which an empty reservation is abandoned. */
export const RESERVATION_MAX_AGE_MS = 60_000;

/** @internal A held lock. */
export type HeldLock = LockHandle;

/**
 * Take `<dir>/.lock`. A lock held by a live process (or one on another host) gives ChainError `Locked`; a lock whose
 * holder on this host is provably dead is broken and taken over.
 */
export async function acquireLock(dir: string): Promise<HeldLock> {
  const path = join(dir, ".lock");
  for (let again = true; ; again = false) {
    let r;
    try {
      r = tryLock(path);
    } catch (e) {
      // The chain directory went away under us (a parse that found nothing removed the one it created): recreate it.
      if (errno(e) === "ENOENT" && again) {
        await fsp.mkdirs(join(dir, "rounds"));
        continue;
      }
      throw new ChainError("Io", `${path}: cannot take the lock: ${String(e)}`, { data: { file: path }, cause: e });
    }
    if (r.held) return r;
    const h = r.holder;
    const who = h ? `pid ${h.pid} on ${h.host}` : "a writer that has not finished writing it";
    throw new ChainError("Locked", `${path}: another parser holds the chain (${who})`, { data: { file: path, pid: h?.pid, host: h?.host } });
  }
}

/** Release a lock we hold (only if it is still ours). */
export function releaseLock(lock: HeldLock): void {
  try {
    lock.release();
  } catch {
    /* the lock file is gone or unreadable: nothing of ours to remove */
  }
}

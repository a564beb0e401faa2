// The session lock: @lake/durable's one lock file, its failures as StoreError.
import { join } from "node:path";
import { acquireLock as durableAcquire, lockHolder as durableHolder, type Liveness, type LockHolder, type StepHook } from "@lake/durable";
import { StoreError, ioError } from "./errors.js";

/** Who holds a lock, as written in the lock file. */
export type { LockHolder };


/** A held lock. `release()` removes the lock file if it still carries this holder's token. */
export interface LockHandle {
  readonly path: string;
  readonly token: string;
  /**
   * True when taking the lock broke a stale one: its holder died holding it, so what it guarded
   * may be half done (a session then scans its directory on open).
   */
  readonly recovered: boolean;
  release(): void;
}

/**
 * Take the lock file `<dir>/.lock` (or `<dir>/<name>`): @lake/durable's lock (O_EXCL; pid, host,
 * boot id, process start time, token; a provably dead holder's lock is broken). `waitMs` 0 fails at
 * once with `Locked`; otherwise the call polls until the lock is free or the time is up.
 */
export async function acquireLock(dir: string, options: { waitMs?: number; step?: StepHook; name?: string } = {}): Promise<LockHandle> {
  const path = join(dir, options.name ?? ".lock");
  let r;
  try {
    r = await durableAcquire(path, { waitMs: options.waitMs ?? 0, ...(options.step ? { step: options.step } : {}) });
  } catch (e) {
    throw ioError(path, "lock", e);
  }
  if (r.held) {
    const held = r;
    return {
      path,
      token: held.token,
      recovered: held.recovered,
      release() {
        try {
          held.release();
        } catch (e) {
          throw ioError(path, "release lock", e);
        }
      },
    };
  }
  const h = r.holder;
  throw new StoreError("Locked", `${path}: locked by ${h ? `pid ${h.pid} on ${h.host} since ${h.acquiredAt}` : "a process still writing its lock file"}`, {
    data: { file: path, ...(h ? { pid: h.pid, host: h.host, acquiredAt: h.acquiredAt } : {}) },
  });
}

/** Read who holds `<dir>/.lock`, with its liveness, or undefined when nothing holds it. */
export function lockHolder(dir: string): (LockHolder & { liveness: Liveness }) | undefined {
  const path = join(dir, ".lock");
  try {
    return durableHolder(path);
  } catch (e) {
    throw ioError(path, "read lock", e);
  }
}

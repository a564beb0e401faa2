import { randomHex } from "./random.js";
import { chmodSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dirLeaseOwner, sweep, takeDirLease } from "./dir.js";
import type { StepHook } from "./step.js";

/** A private scratch directory: `done()` removes it (with everything in it). */
export interface ScratchDir {
  readonly dir: string;
  done(): void;
}

/** Options of `scratchDir`. */
export interface ScratchOptions {
  /** Where (default: the OS temp directory). */
  readonly parent?: string;
  /** Crash-step hook, given to the lease (`lease:prepare`, `lease:claim`). */
  readonly step?: StepHook;
}

/**
 * A scratch directory `<parent>/<prefix>-<random>` (mode 0700) that a killed process does not leave
 * behind for good: it is a directory lease (`owner.json` names this process), and each call first
 * removes the `<prefix>-*` directories whose owner is proven dead on this host (killed, or from
 * before a reboot) — by breaking their lease, so two processes sweeping at once remove each once and
 * never a live owner's. A directory without an owner record (an earlier build's) is left alone.
 */
export function scratchDir(prefix: string, options: ScratchOptions = {}): ScratchDir {
  const parent = options.parent ?? tmpdir();
  removeAbandoned(prefix, parent);
  for (;;) {
    const dir = join(parent, `${prefix}-${randomHex(6)}`);
    // A fresh random name: nothing lies beside it (removeAbandoned swept the prefix), so no second listing.
    const lease = takeDirLease(dir, options.step ? { step: options.step } : {}, false);
    if (!lease.held) continue; // the name is taken: another
    chmodSync(dir, 0o700);
    return { dir, done: () => lease.release() };
  }
}

/** Remove the `<prefix>-*` scratch directories in `parent` whose owner is proven dead; how many. */
export function removeAbandoned(prefix: string, parent: string = tmpdir()): number {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return 0;
  }
  let removed = 0;
  // What a process killed while taking or breaking one left beside it (`.<name>.prep-*`,
  // `.<name>.stale-*`, `.<name>.break`): the lease's own sweep, once per name.
  const beside = new Set<string>();
  for (const n of names) {
    const m = /^\.(.+)\.(?:prep-|stale-|break$)/.exec(n);
    if (m?.[1]?.startsWith(`${prefix}-`)) beside.add(m[1]);
  }
  for (const name of beside) {
    try {
      sweep(join(parent, name));
    } catch {
      // Left for the next sweep.
    }
  }
  for (const n of names) {
    if (!n.startsWith(`${prefix}-`)) continue;
    const dir = join(parent, n);
    if (dirLeaseOwner(dir)?.liveness !== "dead") continue;
    try {
      // Taking the lease breaks the dead owner's (once, whoever else sweeps); releasing deletes it.
      // What lies beside it was swept above.
      const got = takeDirLease(dir, {}, false);
      if (got.held) {
        got.release();
        removed++;
      }
    } catch {
      // Left for the next sweep (a permission or I/O error is not this caller's to report).
    }
  }
  return removed;
}

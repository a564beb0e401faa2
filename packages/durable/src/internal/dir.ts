// Directories: a move in one rename (`moveDir`), and the directory lease built on it. See the
// README ("Moving a directory", "The directory lease").
import { randomHex } from "./random.js";
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { errno } from "./errno.js";
import { fsyncDir } from "./fsync.js";
import { decodeHolder, holderLiveness, isStale, selfHolder, tryLock, type Liveness, type LockHolder, type Read } from "./lock.js";
import type { StepHook } from "./step.js";

/** Options of `moveDir`. */
export interface MoveOptions {
  /** Crash-step hook: `<label>:rename` before the rename, `<label>:fsync-dir` before the directory fsyncs. */
  readonly step?: StepHook;
  /** Step label (default `move`). */
  readonly label?: string;
  /** false skips the directory fsyncs (a move that need not survive a power cut: scratch space, tests that kill processes). */
  readonly sync?: boolean;
}

function notADirectory(path: string): Error {
  return Object.assign(new Error(`ENOTDIR: not a directory, move '${path}'`), { code: "ENOTDIR", errno: -20, syscall: "rename", path });
}

/**
 * Move the directory `from` to `to` in one rename(2), then fsync the directory that holds `to`
 * and (when another) the one that held `from`. Never replaces what is at `to`: false when the name
 * is taken (a non-empty directory, or anything that is not a directory), both left as they were.
 * An EMPTY directory at `to` is replaced (rename(2) does that atomically; nothing can hold the name
 * without content). `from` missing or not a directory throws (ENOENT, ENOTDIR: Node's errors).
 */
export function moveDir(from: string, to: string, options: MoveOptions = {}): boolean {
  const label = options.label ?? "move";
  if (!lstatSync(from).isDirectory()) throw notADirectory(from);
  options.step?.(`${label}:rename`);
  try {
    renameSync(from, to);
  } catch (e) {
    const c = errno(e);
    if (c === "EEXIST" || c === "ENOTEMPTY") return false;
    // ENOTDIR: `to` is a file (taken), or a component of its path is not a directory (an error).
    if (c === "ENOTDIR" && exists(to)) return false;
    throw e;
  }
  options.step?.(`${label}:fsync-dir`);
  if (options.sync !== false) {
    fsyncDir(dirname(to));
    if (dirname(from) !== dirname(to)) fsyncDir(dirname(from));
  }
  return true;
}

function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

// ---- the directory lease --------------------------------------------------------------------

/** The owner record of a directory lease (`<dir>/owner.json`): a lock holder and its process's start time. */
export interface LeaseOwner extends LockHolder {
  /** When the owner process started (ms since the epoch). */
  readonly startedAt: number;
}

/** The file in a lease directory naming its owner. */
export const LEASE_OWNER_FILE = "owner.json";

/**
 * `owner.json`'s text: one JSON line, `host`, `pid`, `started_at`, `token` first (what every earlier
 * build wrote and reads), then `boot_id`, `proc_start` (when known) and `acquired_at`.
 */
export function encodeLeaseOwner(o: LeaseOwner): string {
  return `${JSON.stringify({ host: o.host, pid: o.pid, started_at: o.startedAt, token: o.token, ...(o.bootId ? { boot_id: o.bootId } : {}), ...(o.procStart ? { proc_start: o.procStart } : {}), acquired_at: o.acquiredAt })}\n`;
}

/** Decode `owner.json`; undefined when it names no owner (empty, torn, not JSON, no pid, host or token). */
export function decodeLeaseOwner(text: string): LeaseOwner | undefined {
  if (!text.trim().startsWith("{")) return undefined;
  const h = decodeHolder(text);
  if (!h) return undefined;
  let startedAt = 0;
  try {
    const s = (JSON.parse(text) as { started_at?: unknown }).started_at;
    if (typeof s === "number" && Number.isFinite(s)) startedAt = s;
  } catch {
    /* decodeHolder parsed it */
  }
  return { ...h, startedAt };
}

function readLease(dir: string): Read | "gone" {
  let ageMs: number;
  try {
    if (!statSync(dir).isDirectory()) return { text: "", holder: undefined, ageMs: Number.POSITIVE_INFINITY };
    ageMs = Date.now() - statSync(dir).mtimeMs;
  } catch (e) {
    if (errno(e) === "ENOENT") return "gone";
    throw e;
  }
  let text = "";
  try {
    text = readFileSync(join(dir, LEASE_OWNER_FILE), "utf8");
  } catch (e) {
    if (errno(e) !== "ENOENT" && errno(e) !== "ENOTDIR") throw e;
  }
  return { text, holder: decodeLeaseOwner(text), ageMs };
}

/**
 * A name beside the lease for its claimers and breakers: hidden (`.<name>.<what>` in the lease's
 * parent), so a directory that lists its children as data (a storage root's sessions) never takes
 * one for an entry of its own.
 */
function beside(dir: string, what: string): string {
  return join(dirname(dir), `.${basename(dir)}.${what}`);
}

/**
 * Move the lease directory at `dir` aside if it still is the one judged (its owner text is
 * `judged`): renamed to a name of this call's own (one rename, one winner), compared, and moved back
 * (never replacing) when it is not — a live owner's lease taken in between stays its owner's.
 * Returns the aside path when the judged lease was moved (the caller deletes it).
 */
function moveAsideIfSame(dir: string, judged: string, step: StepHook | undefined, label: string): string | undefined {
  const aside = beside(dir, `stale-${randomHex(6)}`);
  step?.(`${label}:move-aside`);
  try {
    renameSync(dir, aside);
  } catch (e) {
    if (errno(e) === "ENOENT") return undefined;
    throw e;
  }
  const moved = readLease(aside);
  // Gone already: a claimer's sweep deleted it, which it does only to a lease whose owner is proven
  // dead — the judged one (a live claimer cannot take `dir` while it exists, and breakers take turns).
  if (moved === "gone" || moved.text === judged) return aside;
  try {
    renameSync(aside, dir);
    return undefined;
  } catch {
    /* the name is taken again: the moved lease's owner lost it to a live one */
  }
  rmSync(aside, { recursive: true, force: true });
  return undefined;
}

function removeAside(aside: string, step: StepHook | undefined, label: string): void {
  step?.(`${label}:remove`);
  rmSync(aside, { recursive: true, force: true });
}

/**
 * Remove what killed claimers and breakers left beside the lease (`.<name>.prep-*`, `.<name>.stale-*`,
 * `.<name>.break`):
 * each only once its owner is proven dead (or it names none for 5 s), so a live claimer's prepared
 * directory and a live owner's lease being moved back are never touched.
 */
export function sweep(dir: string): void {
  const parent = dirname(dir);
  const name = basename(dir);
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const n of names) {
    if (n === `.${name}.break`) {
      // a breaker's guard: a lock file, taken and released here only when its holder is proven dead
      const g = tryLock(join(parent, n));
      if (g.held) g.release();
      continue;
    }
    if (!n.startsWith(`.${name}.prep-`) && !n.startsWith(`.${name}.stale-`)) continue;
    const p = join(parent, n);
    const r = readLease(p);
    if (r !== "gone" && isStale(r, undefined)) rmSync(p, { recursive: true, force: true });
  }
}

/** A held directory lease. `release()` removes the directory if it still is this owner's. */
export interface DirLeaseHandle {
  readonly held: true;
  readonly dir: string;
  readonly owner: LeaseOwner;
  /** True when taking the lease broke a stale one: its owner died holding it. */
  readonly recovered: boolean;
  release(): void;
}

/** A lease found held (owner undefined: a directory without a readable owner record, younger than 5 s). */
export interface DirLeaseBusy {
  readonly held: false;
  readonly dir: string;
  readonly owner: LeaseOwner | undefined;
}

/** Options of `acquireDirLease`. */
export interface DirLeaseOptions {
  /** Crash-step hook: `lease:prepare`, `lease:claim`, `lease:break`, `lease:move-aside`, `lease:remove`. */
  readonly step?: StepHook;
}

const wait = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
let processStartMs: number | undefined;

/**
 * Take the directory lease `dir` (one attempt, synchronously): a directory `.<name>.prep-<random>`
 * holding `owner.json` is prepared, then moved to `dir` in one rename, which fails when `dir`
 * exists. A lease whose owner is proven dead (the lock file's rules: same host; pid gone, reused, or
 * from before a reboot) is broken — under `.<name>.break`, a lock file — by moving it aside and
 * comparing; one from another host never is. The handle, or who holds it; I/O errors are Node's.
 */
export function acquireDirLease(dir: string, options: DirLeaseOptions = {}): DirLeaseHandle | DirLeaseBusy {
  return takeDirLease(dir, options, true);
}

/**
 * `acquireDirLease`, with the sweep of what killed claimers and breakers left beside `dir` only when
 * `sweepFirst` (a caller that has just swept the parent, or made a fresh random name, skips a listing).
 */
export function takeDirLease(dir: string, options: DirLeaseOptions, sweepFirst: boolean): DirLeaseHandle | DirLeaseBusy {
  const step = options.step;
  processStartMs ??= Date.now() - Math.round(process.uptime() * 1000);
  const owner: LeaseOwner = { ...selfHolder(randomHex(16)), startedAt: processStartMs };
  const text = encodeLeaseOwner(owner);
  if (sweepFirst) sweep(dir);
  let recovered = false;
  for (let i = 0; ; i++) {
    const prep = beside(dir, `prep-${randomHex(6)}`);
    step?.("lease:prepare");
    mkdirSync(prep, { mode: 0o755 });
    try {
      // No fsync: a lease matters only while its owner lives; after a machine crash the boot id makes it stale.
      writeFileSync(join(prep, LEASE_OWNER_FILE), text, { mode: 0o644 });
      step?.("lease:claim");
      if (moveDir(prep, dir, { sync: false, label: "lease" })) return leaseHandle(dir, owner, text, step, recovered);
      const r = readLease(dir);
      if (r === "gone") continue;
      if (!isStale(r, undefined) || i >= 8) return { held: false, dir, owner: r.holder as LeaseOwner | undefined };
      const guard = tryLock(beside(dir, "break"), step ? { step } : {});
      if (!guard.held) {
        wait(5 * (i + 1)); // another breaker is at it
        continue;
      }
      try {
        const again = readLease(dir);
        if (again === "gone" || !isStale(again, undefined) || again.text !== r.text) continue;
        step?.("lease:break");
        const aside = moveAsideIfSame(dir, again.text, step, "lease");
        if (aside === undefined) continue;
        recovered = true;
        // claimed at once (the prepared directory is ready), so the breaker is the one told `recovered`
        step?.("lease:claim");
        const won = moveDir(prep, dir, { sync: false, label: "lease" });
        removeAside(aside, step, "lease");
        if (won) return leaseHandle(dir, owner, text, step, true);
      } finally {
        guard.release();
      }
    } finally {
      rmSync(prep, { recursive: true, force: true });
    }
  }
}

function leaseHandle(dir: string, owner: LeaseOwner, text: string, step: StepHook | undefined, recovered: boolean): DirLeaseHandle {
  return {
    held: true,
    dir,
    owner,
    recovered,
    release() {
      const r = readLease(dir);
      if (r === "gone" || r.text !== text) return; // lost to a breaker that proved this owner dead
      const aside = moveAsideIfSame(dir, text, step, "release");
      if (aside !== undefined) removeAside(aside, step, "release");
    },
  };
}

/** Who holds the directory lease `dir`, with its liveness, or undefined when nothing (readable) holds it. */
export function dirLeaseOwner(dir: string): (LeaseOwner & { readonly liveness: Liveness }) | undefined {
  const r = readLease(dir);
  if (r === "gone" || !r.holder) return undefined;
  return { ...(r.holder as LeaseOwner), liveness: holderLiveness(r.holder) };
}

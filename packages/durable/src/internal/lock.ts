// The one lock file. Created with O_EXCL; holds the holder's data as `key value` lines; dies with its
// holder: stale only when this host can prove the holder dead. See the README ("The lock file").
import { randomHex } from "./random.js";
import { closeSync, fstatSync, linkSync, lstatSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync, type BigIntStats } from "node:fs";
import { hostname } from "node:os";
import { errno } from "./errno.js";
import { unlinkQuiet } from "./files.js";
import type { StepHook } from "./step.js";

/** Who holds a lock, as written in the lock file. */
export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  /** Boot id of the holder's host (Linux), so a lock from before a reboot is stale. */
  readonly bootId?: string;
  /** The holder's process start time in clock ticks since boot (Linux `/proc/<pid>/stat` field 22), against pid reuse. */
  readonly procStart?: string;
  /** When the lock was taken (ISO 8601). */
  readonly acquiredAt: string;
  /** Random token naming this acquisition. */
  readonly token: string;
}

/** What this host can say about a holder: `dead` only when it can prove it. */
export type Liveness = "alive" | "dead" | "unknown";

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

const BOOT_ID = readProc("/proc/sys/kernel/random/boot_id")?.trim();

function procStart(pid: number): string | undefined {
  const s = readProc(`/proc/${pid}/stat`);
  if (!s) return undefined;
  const fields = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return fields[19]; // field 22 overall; fields here start at field 3
}

/**
 * Whether a process with this pid exists on this host (signal 0: ESRCH means gone; EPERM means it
 * exists under another user). The one liveness probe of the repository.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errno(e) !== "ESRCH";
  }
}

/** Liveness of a lock holder: `dead` only when this host can prove it (same host, and the pid is gone or reused, or the host rebooted). */
export function holderLiveness(h: LockHolder): Liveness {
  if (h.host !== hostname()) return "unknown";
  if (h.bootId && BOOT_ID && h.bootId !== BOOT_ID) return "dead";
  if (!processAlive(h.pid)) return "dead";
  if (h.procStart) {
    const now = procStart(h.pid);
    if (now !== undefined && now !== h.procStart) return "dead";
    if (now === undefined && readProc("/proc/self/stat") !== undefined) return "dead";
  }
  return "alive";
}

/**
 * The lock file's text for a holder: `key value` lines (one space), in this order. Every older build
 * reads these lines — the store's and the chain's locks were written so, and the layout's key-lock
 * reader judges a lock it cannot parse by its age — so a process of an older build never takes a
 * live lock of this one for an empty one.
 */
export function encodeHolder(h: LockHolder): string {
  const pairs: [string, string | number | undefined][] = [["pid", h.pid], ["host", h.host], ["boot_id", h.bootId], ["proc_start", h.procStart], ["acquired_at", h.acquiredAt], ["token", h.token]];
  let out = "";
  for (const [k, v] of pairs) {
    const text = v === undefined ? "" : String(v);
    if (text === "") continue; // absent (an unknown acquired_at reads back as "")
    if (/\s/.test(text)) throw new Error(`lock holder ${k} ${JSON.stringify(text)} holds white space`);
    out += `${k} ${text}\n`;
  }
  return out;
}

/**
 * Decode a lock file's text; undefined when it names no holder (empty: a crash between create and
 * write; or unreadable). Also reads the `key value` lines the store's and the chain's locks wrote
 * before this format, and the `{pid, host, nonce, t}` JSON of the layout's key locks, so a lock left
 * by an older build is still judged by its holder.
 */
export function decodeHolder(text: string): LockHolder | undefined {
  const t = text.trim();
  if (t === "") return undefined;
  const m = new Map<string, string>();
  if (t.startsWith("{")) {
    let o: unknown;
    try {
      o = JSON.parse(t);
    } catch {
      return undefined;
    }
    if (typeof o !== "object" || o === null || Array.isArray(o)) return undefined;
    for (const [k, v] of Object.entries(o)) if (typeof v === "string" || typeof v === "number") m.set(k, String(v));
  } else {
    for (const line of t.split("\n")) {
      const kv = /^(\S+)[ \t]+(.*)$/.exec(line);
      if (kv?.[1] !== undefined && kv[2] !== undefined) m.set(kv[1], kv[2]);
    }
  }
  const pid = Number(m.get("pid"));
  const host = m.get("host");
  // `nonce` and `t` (ms since the epoch): the key locks of @lake/layout's local store before this format.
  const token = m.get("token") ?? m.get("nonce");
  const ms = Number(m.get("t"));
  if (!m.has("acquired_at") && Number.isFinite(ms) && ms > 0) m.set("acquired_at", new Date(ms).toISOString());
  if (!Number.isSafeInteger(pid) || pid <= 0 || host === undefined || token === undefined) return undefined;
  const h: { -readonly [K in keyof LockHolder]: LockHolder[K] } = { pid, host, acquiredAt: m.get("acquired_at") ?? "", token };
  const b = m.get("boot_id");
  if (b) h.bootId = b;
  const p = m.get("proc_start");
  if (p) h.procStart = p;
  return h;
}

/** A lock file (or a lease's owner record) as read: its text, the holder it names, its age by mtime. */
export interface Read {
  readonly text: string;
  readonly holder: LockHolder | undefined;
  readonly ageMs: number;
}

function readHolder(path: string): Read | "gone" {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if (errno(e) === "ENOENT") return "gone";
    throw e;
  }
  let ageMs: number;
  try {
    ageMs = Date.now() - statSync(path).mtimeMs;
  } catch {
    return "gone";
  }
  return { text, holder: decodeHolder(text), ageMs };
}

/** A lock file that names no holder is a crash between create and write; stale after this long. */
export const EMPTY_LOCK_STALE_MS = 5_000;

/** Whether a lock (or lease) read so is stale: its holder proven dead, or none named for 5 s, or (`staleAfterMs`) taken too long ago. */
export function isStale(r: Read, staleAfterMs: number | undefined): boolean {
  if (!r.holder) return r.ageMs > EMPTY_LOCK_STALE_MS;
  if (staleAfterMs !== undefined) {
    const at = Date.parse(r.holder.acquiredAt);
    if ((Number.isFinite(at) ? Date.now() - at : r.ageMs) > staleAfterMs) return true;
  }
  return holderLiveness(r.holder) === "dead";
}

/** What identifies one created lock file: a file that replaced it differs in ino or ctime. */
interface FileIdentity {
  readonly ino: bigint;
  readonly ctimeNs: bigint;
}

function identity(st: BigIntStats): FileIdentity {
  return { ino: st.ino, ctimeNs: st.ctimeNs };
}

function tryCreate(path: string, content: string, step: StepHook | undefined): FileIdentity | undefined {
  step?.("lock:create");
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o644);
  } catch (e) {
    if (errno(e) === "EEXIST") return undefined;
    throw e;
  }
  try {
    // No fsync: a lock matters only while its holder lives; after a machine crash the boot id makes it stale.
    writeSync(fd, content);
    return identity(fstatSync(fd, { bigint: true }));
  } finally {
    closeSync(fd);
  }
}

/**
 * Remove the lock file at `path` if it still is the one judged (its text is `judged`): renamed aside
 * to a name of this call's own (one rename, one winner), compared, and linked back (never replacing)
 * when it is not — a live holder's lock taken in between stays its holder's. Returns true when the
 * judged file was removed.
 */
function removeIfSame(path: string, judged: string): boolean {
  const aside = `${path}.stale-${randomHex(6)}`;
  try {
    renameSync(path, aside);
  } catch (e) {
    if (errno(e) === "ENOENT") return false;
    throw e;
  }
  const moved = readHolder(aside);
  const same = moved !== "gone" && moved.text === judged;
  if (!same && moved !== "gone") {
    try {
      linkSync(aside, path);
    } catch {
      /* the name is taken again: the moved lock's holder lost it to a live one */
    }
  }
  unlinkQuiet(aside);
  return same;
}

/**
 * Remove a stale lock. Breakers are serialised by `<lock>.break`, itself an O_EXCL lock file; under
 * it the lock is read again and, if it still carries the dead token, removed by `removeIfSame`. A
 * `.break` left by a breaker that died is itself judged by its holder's liveness and removed the
 * same way, so a live breaker's fresh guard taken in between is never deleted.
 */
function breakStale(path: string, staleToken: string | undefined, step: StepHook | undefined, staleAfterMs: number | undefined): void {
  const guard = `${path}.break`;
  if (!tryCreate(guard, holderText(randomHex(8)), step)) {
    const g = readHolder(guard);
    if (g !== "gone" && isStale(g, undefined)) removeIfSame(guard, g.text);
    return;
  }
  try {
    const again = readHolder(path);
    if (again === "gone" || !isStale(again, staleAfterMs) || again.holder?.token !== staleToken) return;
    step?.("lock:break");
    removeIfSame(path, again.text);
  } finally {
    unlinkQuiet(guard);
  }
}

/** This process's pid, host, boot id and start time: read once (they do not change while it lives). */
let self: Omit<LockHolder, "acquiredAt" | "token"> | undefined;

/** This process as a holder taking something now under `token` (the lock file's and the directory lease's). */
export function selfHolder(token: string): LockHolder {
  if (!self) {
    const ps = procStart(process.pid);
    self = { pid: process.pid, host: hostname(), ...(BOOT_ID ? { bootId: BOOT_ID } : {}), ...(ps ? { procStart: ps } : {}) };
  }
  return { ...self, acquiredAt: new Date().toISOString(), token };
}

function holderText(token: string): string {
  return encodeHolder(selfHolder(token));
}

/** A held lock. `release()` removes the lock file if it still is this holder's. */
export interface LockHandle {
  readonly held: true;
  readonly path: string;
  readonly token: string;
  /**
   * True when taking the lock broke a stale one: its holder died holding it, so what it guarded
   * may be half done.
   */
  readonly recovered: boolean;
  release(): void;
}

/** A lock found held by another holder (undefined: a holder still writing its lock file, or one from another host that cannot be read). */
export interface LockBusy {
  readonly held: false;
  readonly path: string;
  readonly holder: LockHolder | undefined;
}

/** Options of `acquireLock`. */
export interface LockOptions {
  /** 0 (default): one attempt; otherwise poll until the lock is free or this many ms passed. */
  readonly waitMs?: number;
  /** Crash-step hook: `lock:create` before each create, `lock:break` before a stale lock is removed. */
  readonly step?: StepHook;
  /**
   * Also stale, whatever its holder's liveness or host: a lock taken longer ago than this. Only for
   * locks held for milliseconds by design (the layout's key locks), where a lock this old is a holder
   * that died on another host; never for a lock a long-running holder keeps.
   */
  readonly staleAfterMs?: number;
  /** The longest pause between polls while waiting (ms, default 200; the first is 10 or this, whichever is less). */
  readonly maxPollMs?: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function handle(path: string, token: string, made: FileIdentity, recovered: boolean): LockHandle {
  return {
    held: true,
    path,
    token,
    recovered,
    release() {
      // The file this holder created (same inode, untouched since): remove it without reading it.
      let same = false;
      try {
        const st = lstatSync(path, { bigint: true });
        same = st.ino === made.ino && st.ctimeNs === made.ctimeNs;
      } catch (e) {
        if (errno(e) === "ENOENT") return;
      }
      if (!same) {
        const r = readHolder(path);
        if (r === "gone" || r.holder?.token !== token) return;
      }
      try {
        unlinkSync(path);
      } catch (e) {
        if (errno(e) !== "ENOENT") throw e;
      }
    },
  };
}

/** One attempt, breaking a stale lock first: the handle, or who holds it. I/O errors are Node's, unchanged. */
export function tryLock(path: string, options: Omit<LockOptions, "waitMs"> = {}): LockHandle | LockBusy {
  return attempt(path, randomHex(16), options, { recovered: false });
}

function attempt(path: string, token: string, options: Omit<LockOptions, "waitMs">, state: { recovered: boolean }): LockHandle | LockBusy {
  const step = options.step;
  for (let i = 0; ; i++) {
    const made = tryCreate(path, holderText(token), step);
    if (made) {
      return handle(path, token, made, state.recovered);
    }
    const r = readHolder(path);
    if (r === "gone") continue;
    if (!isStale(r, options.staleAfterMs) || i >= 8) return { held: false, path, holder: r.holder };
    breakStale(path, r.holder?.token, step, options.staleAfterMs);
    state.recovered = true;
  }
}

/**
 * Take the lock file at `path`. It is created with O_EXCL and holds pid, host, boot id, process
 * start time, time and a random token. A lock whose holder is provably dead (same host; pid gone,
 * reused, or from before a reboot) is stale and is broken; one from another host never is.
 * Resolves to the handle, or (after `waitMs`) to `LockBusy`; I/O errors reject with Node's error.
 */
export async function acquireLock(path: string, options: LockOptions = {}): Promise<LockHandle | LockBusy> {
  const token = randomHex(16);
  const deadline = Date.now() + (options.waitMs ?? 0);
  const maxPoll = options.maxPollMs ?? 200;
  let delay = Math.min(10, maxPoll);
  const state = { recovered: false };
  for (;;) {
    const r = attempt(path, token, options, state);
    if (r.held || Date.now() >= deadline) return r;
    // jittered, so waiters that met at one lock do not wake in step
    await sleep(Math.min(delay * (0.5 + Math.random()), Math.max(1, deadline - Date.now())));
    delay = Math.min(delay * 2, maxPoll);
  }
}

/** Who holds the lock at `path`, with its liveness, or undefined when nothing (readable) holds it. */
export function lockHolder(path: string): (LockHolder & { readonly liveness: Liveness }) | undefined {
  const r = readHolder(path);
  if (r === "gone" || !r.holder) return undefined;
  return { ...r.holder, liveness: holderLiveness(r.holder) };
}

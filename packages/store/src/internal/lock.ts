import { randomBytes, randomUUID } from "node:crypto";
import { closeSync, fstatSync, lstatSync, openSync, readFileSync, statSync, unlinkSync, writeSync, type BigIntStats } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { StoreError, errno, ioError } from "./errors.js";
import { decodeKv, encodeKv } from "./kv.js";
import type { StepHook } from "./fsx.js";

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

/** Liveness of a lock holder: `dead` only when this host can prove it (same host, and the pid is gone or reused). */
export function holderLiveness(h: LockHolder): "alive" | "dead" | "unknown" {
  if (h.host !== hostname()) return "unknown";
  if (h.bootId && BOOT_ID && h.bootId !== BOOT_ID) return "dead";
  try {
    process.kill(h.pid, 0);
  } catch (e) {
    if (errno(e) === "ESRCH") return "dead";
  }
  if (h.procStart) {
    const now = procStart(h.pid);
    if (now !== undefined && now !== h.procStart) return "dead";
    if (now === undefined && readProc("/proc/self/stat") !== undefined) return "dead";
  }
  return "alive";
}

function parseHolder(text: string, file: string): LockHolder | undefined {
  if (text.trim() === "") return undefined;
  try {
    const m = decodeKv(text, file);
    const pid = Number(m.get("pid"));
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    const h: { -readonly [K in keyof LockHolder]: LockHolder[K] } = { pid, host: m.get("host") ?? "", acquiredAt: m.get("acquired_at") ?? "", token: m.get("token") ?? "" };
    const b = m.get("boot_id");
    if (b) h.bootId = b;
    const p = m.get("proc_start");
    if (p) h.procStart = p;
    return h;
  } catch {
    return undefined;
  }
}

function readHolder(path: string): { holder: LockHolder | undefined; ageMs: number } | "gone" {
  try {
    const text = readFileSync(path, "utf8");
    let ageMs = 0;
    try {
      ageMs = Date.now() - statSync(path).mtimeMs;
    } catch {
      return "gone";
    }
    return { holder: parseHolder(text, path), ageMs };
  } catch (e) {
    if (errno(e) === "ENOENT") return "gone";
    throw ioError(path, "read lock", e);
  }
}

/** A lock file that is empty or unreadable as a holder is a crash between create and write; stale after this long. */
const EMPTY_LOCK_STALE_MS = 5_000;

function isStale(r: { holder: LockHolder | undefined; ageMs: number }): boolean {
  if (!r.holder) return r.ageMs > EMPTY_LOCK_STALE_MS;
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

function tryCreate(path: string, content: string, step?: StepHook): FileIdentity | undefined {
  let fd: number;
  step?.("lock:create");
  try {
    fd = openSync(path, "wx", 0o644);
  } catch (e) {
    if (errno(e) === "EEXIST") return undefined;
    throw ioError(path, "create lock", e);
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
 * Remove a stale lock. Breakers are serialised by `<lock>.break`, itself an O_EXCL file; under it
 * the lock is read again and removed only if it still holds the same dead token. A `.break` left by
 * a breaker that died is itself judged by its holder's liveness.
 */
function breakStale(path: string, staleToken: string | undefined, step?: StepHook): void {
  const guard = `${path}.break`;
  const me = holderText(randomBytes(8).toString("hex"));
  if (!tryCreate(guard, me, step)) {
    const g = readHolder(guard);
    if (g !== "gone" && isStale(g)) {
      try {
        unlinkSync(guard);
      } catch {
        /* another breaker took it */
      }
    }
    return;
  }
  try {
    const again = readHolder(path);
    if (again !== "gone" && isStale(again) && (again.holder?.token ?? undefined) === staleToken) {
      step?.("lock:break");
      unlinkSync(path);
    }
  } finally {
    unlinkSync(guard);
  }
}

/** This process's pid, host, boot id and start time: read once (they do not change while it lives). */
let selfHead: string | undefined;

function holderText(token: string): string {
  selfHead ??= encodeKv([
    ["pid", process.pid],
    ["host", hostname()],
    ["boot_id", BOOT_ID],
    ["proc_start", procStart(process.pid)],
  ]);
  return selfHead + encodeKv([["acquired_at", new Date().toISOString()], ["token", token]]);
}

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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Take the lock file `<dir>/.lock` (or `<dir>/<name>`). It is created with O_EXCL and holds pid, host, boot id, process start
 * time and a random token. A lock whose holder is provably dead (same host; pid gone, reused, or from
 * before a reboot) is stale and is broken. `waitMs` 0 fails at once with `Locked`; otherwise the call
 * polls until the lock is free or the time is up.
 */
export async function acquireLock(dir: string, options: { waitMs?: number; step?: StepHook; name?: string } = {}): Promise<LockHandle> {
  const path = join(dir, options.name ?? ".lock");
  const token = randomUUID().replaceAll("-", "");
  const deadline = Date.now() + (options.waitMs ?? 0);
  let delay = 10;
  let recovered = false;
  for (;;) {
    const made = tryCreate(path, holderText(token), options.step);
    if (made) {
      return {
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
          if (same) {
            try {
              unlinkSync(path);
            } catch (e) {
              if (errno(e) !== "ENOENT") throw ioError(path, "release lock", e);
            }
            return;
          }
          const r = readHolder(path);
          if (r !== "gone" && r.holder?.token === token) {
            try {
              unlinkSync(path);
            } catch (e) {
              if (errno(e) !== "ENOENT") throw ioError(path, "release lock", e);
            }
          }
        },
      };
    }
    const r = readHolder(path);
    if (r === "gone") continue;
    if (isStale(r)) {
      breakStale(path, r.holder?.token, options.step);
      recovered = true;
      continue;
    }
    if (Date.now() >= deadline) {
      const h = r.holder;
      throw new StoreError("Locked", `${path}: locked by ${h ? `pid ${h.pid} on ${h.host} since ${h.acquiredAt}` : "a process still writing its lock file"}`, {
        data: { file: path, ...(h ? { pid: h.pid, host: h.host, acquiredAt: h.acquiredAt } : {}) },
      });
    }
    await sleep(Math.min(delay, Math.max(1, deadline - Date.now())));
    delay = Math.min(delay * 2, 200);
  }
}

/** Read who holds `<dir>/.lock`, with its liveness, or undefined when nothing holds it. */
export function lockHolder(dir: string): (LockHolder & { liveness: "alive" | "dead" | "unknown" }) | undefined {
  const r = readHolder(join(dir, ".lock"));
  if (r === "gone" || !r.holder) return undefined;
  return { ...r.holder, liveness: holderLiveness(r.holder) };
}

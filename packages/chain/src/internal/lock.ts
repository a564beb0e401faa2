// `.lock`: one parser per chain. A lock file holding pid, host and a token, installed without replacing.
import { randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { ChainError, errnoCode } from "./errors.js";

/** How a file is installed under its final name without replacing: hard link, or an O_EXCL reservation. */
export type InstallMode = "link" | "reserve";

/** One minute: the age past which an empty reservation (or an unreadable lock) is abandoned. */
export const RESERVATION_MAX_AGE_MS = 60_000;

/** @internal A held lock. */
export interface HeldLock {
  path: string;
  token: string;
}

interface LockInfo {
  pid: number;
  host: string;
  token: string;
}

function parseLock(text: string): LockInfo | null {
  const kv = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^(\S+) (.*)$/.exec(line);
    if (m && m[1] !== undefined && m[2] !== undefined) kv.set(m[1], m[2]);
  }
  const pid = Number(kv.get("pid"));
  const host = kv.get("host");
  const token = kv.get("token");
  if (!Number.isSafeInteger(pid) || pid <= 0 || host === undefined || token === undefined) return null;
  return { pid, host, token };
}

/** Whether a process with this pid exists on this host. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errnoCode(e) === "EPERM";
  }
}

/** Whether `link` failed because the filesystem has no hard links. */
export function linkUnsupported(e: unknown): boolean {
  const c = errnoCode(e);
  return c === "ENOTSUP" || c === "EOPNOTSUPP" || c === "EPERM" || c === "ENOSYS" || c === "EXDEV";
}

/**
 * Take `<dir>/.lock`. A lock held by a live process (or one on another host) gives ChainError `Locked`; a lock whose
 * process on this host is gone is taken over.
 */
export async function acquireLock(dir: string, mode: InstallMode): Promise<HeldLock> {
  const path = join(dir, ".lock");
  const token = randomBytes(12).toString("hex");
  const content = `pid ${process.pid}\nhost ${hostname()}\ntoken ${token}\n`;
  for (let attempt = 0; attempt < 4; attempt++) {
    if (await tryCreate(dir, path, content, token, mode)) return { path, token };
    await judgeHolder(path, token);
  }
  throw new ChainError("Locked", `${path}: could not take the lock after removing stale holders`, { data: { file: path } });
}

async function tryCreate(dir: string, path: string, content: string, token: string, mode: InstallMode): Promise<boolean> {
  if (mode === "link") {
    const tmp = join(dir, `.lock.tmp-${process.pid}-${token}`);
    await fsp.writeFile(tmp, content, { flag: "wx", mode: 0o444 }).catch(async (e: unknown) => {
      // The chain directory went away under us (a parse that found nothing removed the one it created): recreate it.
      if (errnoCode(e) !== "ENOENT") throw e;
      await fsp.mkdir(join(dir, "rounds"), { recursive: true });
      await fsp.writeFile(tmp, content, { flag: "wx", mode: 0o444 });
    });
    try {
      await fsp.link(tmp, path);
      return true;
    } catch (e) {
      if (errnoCode(e) === "EEXIST") return false;
      if (!linkUnsupported(e)) throw new ChainError("Io", `${path}: cannot take the lock: ${String(e)}`, { data: { file: path }, cause: e });
    } finally {
      await fsp.unlink(tmp).catch(() => undefined);
    }
  }
  let fh: fsp.FileHandle;
  try {
    fh = await fsp.open(path, "wx", 0o444);
  } catch (e) {
    if (errnoCode(e) === "EEXIST") return false;
    throw new ChainError("Io", `${path}: cannot take the lock: ${String(e)}`, { data: { file: path }, cause: e });
  }
  try {
    await fh.writeFile(content);
    await fh.sync();
  } finally {
    await fh.close();
  }
  return true;
}

/** Throws `Locked` when the current holder may be alive; removes a dead holder's lock and returns otherwise. */
async function judgeHolder(path: string, ourToken: string): Promise<void> {
  let text: string;
  let mtimeMs: number;
  try {
    text = await fsp.readFile(path, "utf8");
    mtimeMs = (await fsp.stat(path)).mtimeMs;
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return; // released meanwhile: try again
    throw new ChainError("Io", `${path}: cannot read the lock: ${String(e)}`, { data: { file: path }, cause: e });
  }
  const info = parseLock(text);
  const stale = info ? info.host === hostname() && !processAlive(info.pid) : Date.now() - mtimeMs > RESERVATION_MAX_AGE_MS;
  if (!stale) {
    const who = info ? `pid ${info.pid} on ${info.host}` : "a writer that has not finished writing it";
    throw new ChainError("Locked", `${path}: another parser holds the chain (${who})`, { data: { file: path, pid: info?.pid, host: info?.host } });
  }
  // Take the stale lock away by renaming it (one call, one winner), then make sure it is the one we judged.
  const aside = `${path}.stale-${ourToken}`;
  try {
    await fsp.rename(path, aside);
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return;
    throw new ChainError("Io", `${path}: cannot remove a stale lock: ${String(e)}`, { data: { file: path }, cause: e });
  }
  const moved = await fsp.readFile(aside, "utf8").catch(() => "");
  if (moved === text) {
    await fsp.unlink(aside).catch(() => undefined);
    return;
  }
  // We moved a newer, live lock: put it back and give way.
  await fsp.link(aside, path).catch(() => undefined);
  await fsp.unlink(aside).catch(() => undefined);
  throw new ChainError("Locked", `${path}: another parser took the chain`, { data: { file: path } });
}

/** Release a lock we hold (only if it is still ours). */
export async function releaseLock(lock: HeldLock): Promise<void> {
  const text = await fsp.readFile(lock.path, "utf8").catch(() => "");
  if (parseLock(text)?.token === lock.token) await fsp.unlink(lock.path).catch(() => undefined);
}

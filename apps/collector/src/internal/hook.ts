// `lake-collector hook`: read one Claude Code hook event (JSON) from stdin and append it to the
// hook spool: one @lake/wal file per session under <root>/_hooks/spool/. Start-up is kept
// minimal: this module imports only node builtins (not node:crypto or node:fs/promises: some 8 ms of
// a start between them), @lake/wal/writer (which loads no record schema,
// so no zod, for the spool's records) and the store's lock (@lake/store/lock); test/hook.test.ts
// checks every module the process loads.
import { mkdirSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { acquireLock, isStoreError } from "@lake/store/lock";
import { WalWriter } from "@lake/wal/writer";
import { CollectorError } from "./errors.js";
import { spoolDir } from "./spool.js";

/** The record type of a hook event in the spool. */
export const HOOK_RECORD_TYPE = "lake_hook_event";

export { spoolDir };

/** SHA-256 of a string, hex: node:crypto's, loaded only for a session id that is not a plain name (a hook needs it for nothing else). */
function sha256Hex(s: string): string {
  return (createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto")).createHash("sha256").update(s).digest("hex");
}

/**
 * The spool file of a session: `<session_id>.wal`, or `sha256-<hex>.wal` when the id is not a plain
 * file name (`[A-Za-z0-9._-]`, at most 128 characters, not starting with a dot). Events without a
 * session id go to `unknown-session.wal`.
 */
export function spoolFile(root: string, sessionId: string | undefined): string {
  const id = sessionId && /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/.test(sessionId) ? sessionId : sessionId ? `sha256-${sha256Hex(sessionId)}` : "unknown-session";
  return join(spoolDir(root), `${id}.wal`);
}

/**
 * Take the spool's writer lock, `<file>.lock`: the store's lock (@lake/store/lock). Hooks fire
 * concurrently (parallel tool calls), and a WAL has one writer. A lock whose holder is provably
 * dead (same host; pid gone or reused, or from before a reboot) is broken only under the breakers'
 * guard and only while it still holds the same dead token, so two hooks can never both hold it.
 */
async function lockSpool(file: string, timeoutMs = 10_000): Promise<() => void> {
  try {
    const lock = await acquireLock(dirname(file), { name: `${basename(file)}.lock`, waitMs: timeoutMs });
    return () => lock.release();
  } catch (e) {
    if (isStoreError(e) && e.code === "Locked") throw new CollectorError("Locked", `${e.message} (the hook spool stayed locked for ${timeoutMs / 1000} s)`, { cause: e });
    throw e;
  }
}

/**
 * Append one hook event to the spool, fsynced before returning. The event must be a JSON object.
 * Returns the spool file and the record's sequence number.
 */
export async function appendHookEvent(root: string, input: string, now: Date = new Date()): Promise<{ file: string; seq: number }> {
  let event: unknown;
  try {
    event = JSON.parse(input);
  } catch (e) {
    throw new CollectorError("Input", `stdin: hook event is not valid JSON (${(e as Error).message})`);
  }
  if (typeof event !== "object" || event === null || Array.isArray(event)) throw new CollectorError("Input", "stdin: hook event is not a JSON object");
  const sid = (event as Record<string, unknown>).session_id;
  const file = spoolFile(root, typeof sid === "string" ? sid : undefined);
  mkdirSync(spoolDir(root), { recursive: true, mode: 0o700 });
  const unlock = await lockSpool(file);
  try {
    // The tail cache (`<file>.tail`): a hook appends without decoding the spool file first, so its
    // time does not grow with the session's events (every hook writes the file under this lock).
    const w = await WalWriter.open(file, { fsync: "always", featureFloorPath: join(spoolDir(root), "wal-feature-floor"), tailCache: `${file}.tail` });
    try {
      const r = await w.append({ type: HOOK_RECORD_TYPE, received_at: now.toISOString(), payload: event as Record<string, unknown> });
      return { file, seq: r.seq };
    } finally {
      await w.close();
    }
  } finally {
    unlock();
  }
}

/**
 * Read all of stdin as text: from its file descriptor, without making `process.stdin` (its stream
 * machinery is some 2 ms of a hook's start). A descriptor that would block (a non-blocking pipe
 * whose writer has not finished) hands the rest to the stream, what was read kept.
 */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for (;;) {
    const buf = Buffer.allocUnsafe(64 * 1024);
    let n: number;
    try {
      n = readSync(0, buf, 0, buf.length, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EAGAIN") break;
      if ((e as NodeJS.ErrnoException).code === "EOF") return Buffer.concat(chunks).toString("utf8");
      throw e;
    }
    if (n === 0) return Buffer.concat(chunks).toString("utf8");
    chunks.push(buf.subarray(0, n));
  }
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

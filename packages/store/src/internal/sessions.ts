import { closeSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { isStoreError } from "./errors.js";
import { readCursorFile } from "./cursor.js";
import { lockHolder } from "./lock.js";
import type { Area } from "./names.js";
import { listSessionIds, scanSession } from "./scan.js";
import { openSession } from "./session.js";
import type { SessionOptions } from "./contracts.js";
import { LostSessionTracker } from "./lost.js";

export { LostSessionTracker };

/** List the session ids of a storage root (names starting with `_` or `.` are not sessions). */
export function listSessions(root: string): string[] {
  return listSessionIds(root);
}

/** Resolve a cursor's source to the absolute path the adapter would read, or undefined for a path it does not produce. */
export type ResolveSource = (sessionId: string, source: string, where: { area: Area; stream: string; kind: string }) => string | undefined;

/** Options of {@link checkLostSessions}. */
export interface LostSessionOptions {
  /** Sessions discovery found in this rediscovery (they are checked by their own pass's `pruneUnseen`). */
  readonly found: ReadonlySet<string>;
  readonly resolve: ResolveSource;
  /** The adapter's include/exclude: sessions it keeps out are left alone. */
  readonly include?: (sessionId: string) => boolean;
  /** Discovery reported a project directory it could not read: check nothing (it may hide files). */
  readonly discoveryProblem?: boolean;
  /** Remembers checked sessions across passes (a watcher keeps one); without it every call checks all. */
  readonly tracker?: LostSessionTracker;
  /** Session options for the lock (waitMs etc.). */
  readonly session?: SessionOptions;
}

/** What {@link checkLostSessions} did. */
export interface LostSessionResult {
  readonly checked: string[];
  /** Cursors set to source_gone. */
  readonly gone: number;
  /** Sessions skipped because another process held the lock or the check failed (retried later). */
  readonly retry: string[];
  /** True when nothing was checked because discovery reported an unreadable directory. */
  readonly skipped: boolean;
}

/**
 * Pruned sources of sessions discovery no longer finds: list the storage root and, under each such
 * session's lock, set source_gone on every active cursor whose file no longer exists.
 */
export async function checkLostSessions(root: string, options: LostSessionOptions): Promise<LostSessionResult> {
  options.tracker?.noteFound(options.found);
  if (options.discoveryProblem) return { checked: [], gone: 0, retry: [], skipped: true };
  const checked: string[] = [];
  const retry: string[] = [];
  let gone = 0;
  for (const id of listSessionIds(root)) {
    if (options.found.has(id)) continue;
    if (options.include && !options.include(id)) continue;
    if (options.tracker?.isChecked(id)) continue;
    try {
      const s = await openSession(root, id, { waitMs: 0, ...options.session });
      try {
        gone += s.beginPass().pruneUnseen((source, where) => options.resolve(id, source, where));
      } finally {
        s.close();
      }
      checked.push(id);
      options.tracker?.markChecked(id);
    } catch (e) {
      if (!isStoreError(e)) throw e;
      retry.push(id);
    }
  }
  return { checked, gone, retry, skipped: false };
}

/**
 * A source with bytes past its cursor. `reason` is `new-lines` (complete lines a pass has not read
 * yet: run collect) or `partial-line` (only a last line without its newline: a write in progress or a
 * torn line, read once a newline follows).
 */
export interface PendingSource {
  readonly session: string;
  readonly source: string;
  readonly path: string;
  /** Bytes past the cursor's offset. */
  readonly bytes: number;
  readonly reason: "new-lines" | "partial-line";
}

/** Counts over a storage root. */
export interface StoreStatus {
  readonly sessions: number;
  readonly streams: number;
  readonly landedFiles: number;
  readonly cursors: { readonly active: number; readonly conflict: number; readonly source_gone: number; readonly unreadable: number };
  /** Active append cursors whose source (via `resolve`) is longer than their offset; 0 without `resolve`. */
  readonly pending: number;
  /** Each pending source and why it is pending (as many as `pending`). */
  readonly pendingSources: readonly PendingSource[];
  /** Cursors in conflict (same as cursors.conflict). */
  readonly conflicts: number;
  /** Sessions whose lock a live process holds. */
  readonly locked: number;
}

/** Count sessions, streams, landed files and cursors by state; with `resolve`, also sources with bytes not yet read. */
export function status(root: string, options: { resolve?: ResolveSource } = {}): StoreStatus {
  let streams = 0;
  let landedFiles = 0;
  let pending = 0;
  let locked = 0;
  const cursors = { active: 0, conflict: 0, source_gone: 0, unreadable: 0 };
  const pendingSources: PendingSource[] = [];
  const ids = listSessionIds(root);
  for (const id of ids) {
    const dir = join(root, id);
    const scan = scanSession(dir);
    streams += scan.streams;
    landedFiles += scan.landed.length;
    const h = lockHolder(dir);
    if (h && h.liveness !== "dead") locked++;
    for (const c of scan.cursors) {
      let cur;
      try {
        cur = readCursorFile(join(dir, c.rel));
      } catch {
        cursors.unreadable++;
        continue;
      }
      if (!cur) continue;
      cursors[cur.state]++;
      if (options.resolve && cur.kind === "append" && cur.state === "active") {
        const p = options.resolve(id, cur.source, { area: c.area, stream: c.stream, kind: c.kind });
        if (p === undefined) continue;
        try {
          const size = statSync(p).size;
          if (size > cur.offset) {
            pending++;
            pendingSources.push({ session: id, source: cur.source, path: p, bytes: size - cur.offset, reason: hasNewline(p, cur.offset, size) ? "new-lines" : "partial-line" });
          }
        } catch {
          /* gone or unreadable: not pending */
        }
      }
    }
  }
  return { sessions: ids.length, streams, landedFiles, cursors, pending, pendingSources, conflicts: cursors.conflict, locked };
}

/** Whether the bytes [from, to) of a file hold a newline (read in 64 KiB chunks). */
function hasNewline(path: string, from: number, to: number): boolean {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(Math.min(1 << 16, to - from));
    for (let at = from; at < to; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, to - at), at);
      if (n <= 0) return false;
      if (buf.subarray(0, n).includes(10)) return true;
      at += n;
    }
    return false;
  } finally {
    closeSync(fd);
  }
}

/** One source in conflict, as {@link listConflicts} finds it. */
export interface ConflictEntry {
  readonly session: string;
  /** The cursor, relative to the session directory (`streams/main/transcript.cursor`). */
  readonly cursor: string;
  /** The cursor's source (`<runtime>:<path relative to its root>` for the collector). */
  readonly source: string;
  /** The source file (via `resolve`), when known. */
  readonly path?: string;
  readonly kind: "append" | "snapshot";
  /** Why, as the pass that found it said (empty for a conflict found before reasons were kept). */
  readonly reason: string;
  /** When the cursor went into conflict (ISO 8601). */
  readonly since: string;
  /** For an append cursor: the offset it holds. */
  readonly offset?: number;
}

/** Every cursor in state conflict in the root, in session and cursor order. */
export function listConflicts(root: string, options: { resolve?: ResolveSource } = {}): ConflictEntry[] {
  const out: ConflictEntry[] = [];
  for (const id of listSessionIds(root)) {
    const dir = join(root, id);
    for (const c of scanSession(dir).cursors.sort((a, b) => (a.rel < b.rel ? -1 : 1))) {
      let cur;
      try {
        cur = readCursorFile(join(dir, c.rel));
      } catch {
        continue; // verify reports a cursor it cannot decode
      }
      if (!cur || cur.state !== "conflict") continue;
      const path = options.resolve?.(id, cur.source, { area: c.area, stream: c.stream, kind: c.kind });
      out.push({
        session: id, cursor: c.rel, source: cur.source, ...(path !== undefined ? { path } : {}), kind: cur.kind, reason: cur.conflict_reason ?? "", since: cur.updated_at,
        ...(cur.kind === "append" ? { offset: cur.offset } : {}),
      });
    }
  }
  return out;
}

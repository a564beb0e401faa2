// The collector's part of forgetting a session: what the removal of @lake/store deletes beyond the
// root's own directories (the session's source files, only when asked; its hook spool file) and
// the state lines it drops (push.state). The order and the mechanics are the store's.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { listAdapters } from "@lake/adapters";
import { acquireLock, decodeCursor, finishRemovals, forgetSession, isStoreError, parseSpoolName, type RemovalResult } from "@lake/store";
import { runtimeRoots, sourceResolver, type SourceRoots } from "./collect.js";
import { crashTesting, step } from "./crash.js";
import { CollectorError } from "./errors.js";
import { spoolFile } from "./hook.js";

/** The push lock of a root (`_export/.lock`): push.state has one writer at a time. */
async function exportLock(root: string, waitMs: number): Promise<{ release(): void }> {
  mkdirSync(join(root, "_export"), { recursive: true });
  return acquireLock(join(root, "_export"), { waitMs }).catch((e: unknown) => {
    throw new CollectorError("Locked", `${join(root, "_export", ".lock")}: a push holds this root (${(e as Error).message})`);
  });
}

// push.state's codec lives with push, which loads @lake/layout: it is imported only when a removal runs,
// so a collect pass with nothing to remove does not pay for it.
type PushStateCodec = Pick<typeof import("./push.js"), "readPushState" | "writePushState" | "CARRY_DIR" | "carrySession">;
const pushStateCodec = (): Promise<PushStateCodec> => import("./push.js");

/**
 * Drop a session's lines from push.state, at every receiver: its fleet-store lines and every OTLP
 * receiver's answer for one of its derived spool files; and push's usage carries of it
 * (`_export/usage/`, the usage records of a directory not sealed yet). Returns the receivers that had one.
 */
export function dropPushLines({ readPushState, writePushState, CARRY_DIR, carrySession }: PushStateCodec, root: string, sessionId: string): string[] {
  let carries: string[] = [];
  try {
    carries = readdirSync(join(root, CARRY_DIR)).filter((n) => carrySession(n) === sessionId);
  } catch {
    /* no carries */
  }
  for (const n of carries) rmSync(join(root, CARRY_DIR, n), { force: true });
  const state = readPushState(root);
  const had: string[] = [];
  for (const [url, r] of Object.entries(state.receivers)) {
    if (r.sessions[sessionId] !== undefined) {
      delete r.sessions[sessionId];
      had.push(url);
    }
  }
  const ours = (name: string) => {
    const p = parseSpoolName(name);
    return p?.kind === "local" && p.sessionId === sessionId;
  };
  for (const [url, r] of Object.entries(state.otlp_receivers ?? {})) {
    const names = [...Object.keys(r.accepted), ...Object.keys(r.rejected)].filter(ours);
    for (const n of names) {
      delete r.accepted[n];
      delete r.rejected[n];
    }
    if (names.length > 0) had.push(url);
  }
  if (had.length > 0) writePushState(root, state);
  return had;
}

/** Receivers whose push.state lines name the session. */
export async function pushLines(root: string, sessionId: string): Promise<string[]> {
  const state = (await pushStateCodec()).readPushState(root);
  return Object.entries(state.receivers)
    .filter(([, r]) => r.sessions[sessionId] !== undefined)
    .map(([url]) => url);
}

/** The session's spool files: its hook WAL, the WAL's writer lock and its tail cache, where they exist. */
export function spoolFiles(root: string, sessionId: string): string[] {
  const wal = spoolFile(root, sessionId);
  return [wal, `${wal}.lock`, `${wal}.tail`].filter((f) => existsSync(f));
}

/**
 * The session's source files in the vendor stores: every file its cursors name (resolved against
 * this collector's roots) and every file discovery finds for it now. The hook runtime's sources are
 * the spool, deleted as spool files.
 */
export async function sessionSources(root: string, sessionId: string, sources: SourceRoots): Promise<{ files: string[]; roots: string[] }> {
  const roots = runtimeRoots(root, sources);
  roots.delete("hook");
  const resolve = sourceResolver(roots);
  const files = new Set<string>();
  for (const area of ["streams", "runs"]) {
    const adir = join(root, sessionId, area);
    let streams: string[] = [];
    try {
      streams = readdirSync(adir);
    } catch {
      continue;
    }
    for (const s of streams) {
      let names: string[] = [];
      try {
        names = readdirSync(join(adir, s));
      } catch {
        continue;
      }
      for (const n of names) {
        if (!n.endsWith(".cursor")) continue;
        const file = join(adir, s, n);
        try {
          const c = decodeCursor(readFileSync(file, "utf8"), file);
          const p = resolve(sessionId, c.source);
          if (p && existsSync(p)) files.add(p);
        } catch {
          /* an unreadable cursor names no source */
        }
      }
    }
  }
  for (const a of listAdapters()) {
    const rs = roots.get(a.runtime);
    if (!rs || rs.length === 0) continue;
    const d = await a.discover({ roots: rs, include: [sessionId] });
    for (const s of d.sources) if (s.session_id === sessionId && existsSync(s.path)) files.add(s.path);
  }
  return { files: [...files].sort(), roots: [...new Set([...roots.values()].flat())].sort() };
}

function stepHook(): { onStep?: (n: string) => void } {
  return crashTesting ? { onStep: (n: string) => step(`store:${n}`) } : {};
}

/** Forget a session now: the store's removal, with this collector's sources, spool and push.state. */
export async function applyForget(root: string, sessionId: string, plan: { sources: string[]; sourceRoots: string[] }): Promise<RemovalResult> {
  const codec = await pushStateCodec();
  const lock = await exportLock(root, 10_000);
  try {
    return await forgetSession(
      root,
      sessionId,
      { sources: plan.sources, sourceRoots: plan.sourceRoots, spool: spoolFiles(root, sessionId) },
      { dropState: (id) => dropPushLines(codec, root, id), ...stepHook() },
    );
  } catch (e) {
    throw asCollectorError(e);
  } finally {
    lock.release();
  }
}

function asCollectorError(e: unknown): unknown {
  if (isStoreError(e) && e.code === "Corrupt") return new CollectorError("Input", e.message, { cause: e });
  if (isStoreError(e) && e.code === "Locked") return new CollectorError("Locked", e.message, { cause: e });
  return e;
}

/** What finishPending (pending.ts) runs once it has found a removal to finish. */
export async function finishRemovalsNow(root: string, options: { holdsExportLock?: boolean; warn?: (line: string) => void } = {}): Promise<RemovalResult[]> {
  const codec = await pushStateCodec();
  const lock = options.holdsExportLock ? undefined : await exportLock(root, 10_000);
  try {
    return await finishRemovals(root, { dropState: (id) => dropPushLines(codec, root, id), ...stepHook() });
  } catch (e) {
    const err = asCollectorError(e);
    if (err instanceof CollectorError && err.code === "Input") {
      (options.warn ?? ((l) => process.stderr.write(`lake-collector: ${l}\n`)))(err.message);
      return [];
    }
    throw err;
  } finally {
    lock?.release();
  }
}

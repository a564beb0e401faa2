// Forgetting a session: the storage root's removal procedure (docs/spec/storage-root.md, "A scenario
// root", adapted to a removal a person asks for). The record in _forget/ comes first and stays as
// the exclusion; then the listed source files, the session directory and the chain directory
// (each in one rename into _removed/, then deleted there), the spool files and derived metrics, the caller's state
// lines, and last the record is rewritten to say removed.
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, unlinkSync } from "node:fs";
import { moveDir } from "@lake/durable";
import { dirname, join, relative, sep } from "node:path";
import { StoreError, errno, ioError } from "./errors.js";
import { replaceAtomic, type StepHook } from "./fsx.js";
import { acquireLock } from "./lock.js";
import { forgetMetrics } from "./metrics/spool.js";
import { checkId } from "./names.js";
import { scanSession } from "./scan.js";

/** Directory of the root holding one exclusion record per forgotten session. */
export const FORGET_DIR = "_forget";
/** Directory of the root a removal moves a session's directories into before deleting them. */
export const REMOVED_DIR = "_removed";
/** Directory of the root holding the round chains (one directory per conversation). */
export const CONVERSATIONS_DIR = "_conversations";
/** Schema of a forget record. */
export const FORGET_SCHEMA = 1;

/**
 * A forget record, `<root>/_forget/<session-id>.json`: the plan of a removal while `state` is
 * `removing`, and the exclusion that keeps discovery from landing the session again once it is
 * `removed` (until it is undone).
 */
export interface ForgetRecord {
  readonly schema: 1;
  readonly session: string;
  readonly state: "removing" | "removed";
  /** ISO time the removal was asked for. */
  readonly requested_at: string;
  /** Source files to delete (absolute paths); empty unless the caller asked for the sources too. */
  readonly sources: readonly string[];
  /** Roots the source files sit under: directories named for the session are removed up to these, never a root itself. */
  readonly source_roots: readonly string[];
  /** Spool files the session owns (absolute paths). */
  readonly spool: readonly string[];
}

/** Encode a forget record: one JSON object, keys in the order of {@link ForgetRecord}, then `\n`. */
export function encodeForgetRecord(r: ForgetRecord): string {
  const ordered: ForgetRecord = {
    schema: r.schema,
    session: r.session,
    state: r.state,
    requested_at: r.requested_at,
    sources: [...r.sources],
    source_roots: [...r.source_roots],
    spool: [...r.spool],
  };
  return JSON.stringify(ordered) + "\n";
}

/** Decode a forget record strictly; throws StoreError `Corrupt` naming `file`. */
export function decodeForgetRecord(text: string, file: string): ForgetRecord {
  const bad = (why: string): never => {
    throw new StoreError("Corrupt", `${file}: not a forget record (${why})`, { data: { file } });
  };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return bad((e as Error).message);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return bad("not a JSON object");
  const o = v as Record<string, unknown>;
  const keys = ["schema", "session", "state", "requested_at", "sources", "source_roots", "spool"];
  for (const k of Object.keys(o)) if (!keys.includes(k)) bad(`unknown field ${k}`);
  if (o.schema !== FORGET_SCHEMA) bad(`schema ${JSON.stringify(o.schema)}, expected ${FORGET_SCHEMA}`);
  if (typeof o.session !== "string" || o.session === "") bad("session must be a string");
  if (o.state !== "removing" && o.state !== "removed") bad(`state ${JSON.stringify(o.state)}`);
  if (typeof o.requested_at !== "string" || Number.isNaN(Date.parse(o.requested_at))) bad("requested_at must be an ISO time");
  const paths = (k: string): string[] => {
    const a = o[k];
    if (!Array.isArray(a) || a.some((p) => typeof p !== "string" || !p.startsWith("/"))) return bad(`${k} must be a list of absolute paths`);
    return a as string[];
  };
  return {
    schema: 1,
    session: o.session as string,
    state: o.state as "removing" | "removed",
    requested_at: o.requested_at as string,
    sources: paths("sources"),
    source_roots: paths("source_roots"),
    spool: paths("spool"),
  };
}

function recordPath(root: string, sessionId: string): string {
  return join(root, FORGET_DIR, `${sessionId}.json`);
}

/** The forget record of a session, or undefined when it was never forgotten (or the removal was undone). */
export function readForgetRecord(root: string, sessionId: string): ForgetRecord | undefined {
  const file = recordPath(root, sessionId);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if (errno(e) === "ENOENT") return undefined;
    throw ioError(file, "read forget record", e);
  }
  return decodeForgetRecord(text, file);
}

/** True when the session has a forget record: nothing may land, parse or send it. One `stat`. */
export function isForgotten(root: string, sessionId: string): boolean {
  try {
    statSync(recordPath(root, sessionId));
    return true;
  } catch (e) {
    if (errno(e) === "ENOENT" || errno(e) === "ENOTDIR") return false;
    throw ioError(recordPath(root, sessionId), "stat forget record", e);
  }
}

/** Every session id with a forget record, sorted. */
export function listForgotten(root: string): string[] {
  let names: string[];
  try {
    names = readdirSync(join(root, FORGET_DIR));
  } catch (e) {
    if (errno(e) === "ENOENT") return [];
    throw ioError(join(root, FORGET_DIR), "list forget records", e);
  }
  return names.filter((n) => n.endsWith(".json") && !n.startsWith(".")).map((n) => n.slice(0, -5)).sort();
}

/** What a removal of a session would delete from the root (a preview; nothing is changed). */
export interface RemovalPreview {
  readonly session: string;
  /** The session directory, when it exists: its landed files, cursors and every file's bytes. */
  readonly sessionDir?: { readonly path: string; readonly landed: number; readonly cursors: number; readonly files: number; readonly bytes: number };
  /** The chain directory, when it exists: its round files and every file's bytes. */
  readonly chainDir?: { readonly path: string; readonly rounds: number; readonly files: number; readonly bytes: number };
  /** The session's forget record as it is now. */
  readonly record?: ForgetRecord;
}

export function treeSize(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        files++;
        bytes += lstatSync(p).size;
      }
    }
  };
  walk(dir);
  return { files, bytes };
}

function isDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch (e) {
    if (errno(e) === "ENOENT") return false;
    throw ioError(p, "stat", e);
  }
}

/** What removing `sessionId` would delete from the root's own directories. */
export function previewRemoval(root: string, sessionId: string): RemovalPreview {
  checkId("session id", sessionId);
  const sdir = join(root, sessionId);
  const cdir = join(root, CONVERSATIONS_DIR, sessionId);
  const record = readForgetRecord(root, sessionId);
  const out: { -readonly [K in keyof RemovalPreview]: RemovalPreview[K] } = { session: sessionId };
  if (isDir(sdir)) {
    const scan = scanSession(sdir);
    out.sessionDir = { path: sdir, landed: scan.landed.length, cursors: scan.cursors.length, ...treeSize(sdir) };
  }
  if (isDir(cdir)) {
    let rounds = 0;
    try {
      rounds = readdirSync(join(cdir, "rounds")).filter((n) => n.endsWith(".sf")).length;
    } catch {
      /* no rounds/ */
    }
    out.chainDir = { path: cdir, rounds, ...treeSize(cdir) };
  }
  if (record) out.record = record;
  return out;
}

/** Options of {@link forgetSession} and {@link finishRemovals}. */
export interface RemovalOptions {
  /** Drop the session's lines from the caller's state files (push state …); called once every file it names is gone. */
  readonly dropState?: (sessionId: string) => void;
  /** How long to wait for the session's lock (ms, default 10 000). */
  readonly waitMs?: number;
  /** Test hook called before every durable step (crash tests stop the process there). */
  readonly onStep?: StepHook;
  /** fsync (default true). */
  readonly fsync?: boolean;
}

/** What one removal deleted. */
export interface RemovalResult {
  readonly session: string;
  /** Source files deleted (absolute paths), then directories named for the session that were left empty. */
  readonly sources: string[];
  readonly sourceDirs: string[];
  /** The session directory and the chain directory, when they were there. */
  readonly sessionDir?: string;
  readonly chainDir?: string;
  readonly spool: string[];
  /** The session's derived metrics deleted from `_metrics/` (`metrics-<session>-<seq>-local.pb`). */
  readonly metrics: string[];
  /** True when this call wrote the record (false: it finished a removal a stopped run began). */
  readonly started: boolean;
}

/** What a request to forget a session names beyond the root's own directories. */
export interface ForgetRequest {
  /** Source files to delete (absolute paths); none leaves the vendor store as it is. */
  readonly sources?: readonly string[];
  readonly sourceRoots?: readonly string[];
  /** Spool files the session owns (absolute paths). */
  readonly spool?: readonly string[];
  /** ISO time (default now). */
  readonly now?: string;
}

/**
 * `_removed/` must be a real directory: a symbolic link or a file there stops every removal (nothing
 * is deleted through it or moved into it). Throws StoreError `Corrupt` naming it.
 */
function removedDir(root: string, create: boolean): string | undefined {
  const dir = join(root, REMOVED_DIR);
  let st;
  try {
    st = lstatSync(dir);
  } catch (e) {
    if (errno(e) !== "ENOENT") throw ioError(dir, "stat", e);
    if (!create) return undefined;
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (e2) {
      throw ioError(dir, "create", e2);
    }
    return dir;
  }
  if (st.isSymbolicLink()) throw new StoreError("Corrupt", `${dir}: is a symbolic link; no session is removed (nothing is deleted through it or moved into it)`, { data: { file: dir } });
  if (!st.isDirectory()) throw new StoreError("Corrupt", `${dir}: is not a directory; no session is removed`, { data: { file: dir } });
  return dir;
}

/** Delete a directory moved into `_removed/`, one top-level entry at a time (a step after each). */
function deleteMoved(path: string, step: StepHook | undefined): void {
  let names: string[] = [];
  try {
    names = readdirSync(path).sort();
  } catch (e) {
    if (errno(e) === "ENOENT") return;
    if (errno(e) !== "ENOTDIR") throw ioError(path, "list", e);
  }
  for (const n of names) {
    rmSync(join(path, n), { recursive: true, force: true });
    step?.("forget:removed-entry");
  }
  rmSync(path, { recursive: true, force: true });
}

/**
 * Delete whatever a stopped removal left in `_removed/`. Throws StoreError `Corrupt` when
 * `_removed` is a symbolic link or not a directory. Returns the names deleted.
 */
export function clearRemoved(root: string, onStep?: StepHook): string[] {
  const dir = removedDir(root, false);
  if (!dir) return [];
  const names = readdirSync(dir).sort();
  for (const n of names) {
    deleteMoved(join(dir, n), onStep);
    onStep?.("forget:leftover-deleted");
  }
  return names;
}

/** Move `path` into `_removed/<name>` in one rename, then delete it there. False when `path` is not there. */
function renameAway(removed: string, path: string, name: string, step: StepHook | undefined, label: string, sync: boolean): boolean {
  const target = join(removed, name);
  // A stopped run may have left an earlier copy under the name: it goes first.
  if (isDir(target) || existsAny(target)) deleteMoved(target, step);
  let moved: boolean;
  try {
    // one rename, then both directories fsynced (@lake/durable's moveDir)
    moved = moveDir(path, target, { sync });
  } catch (e) {
    if (errno(e) === "ENOENT") return false;
    throw ioError(path, `move into ${REMOVED_DIR}/`, e);
  }
  if (!moved) throw new StoreError("Exists", `${target}: appeared while ${path} was being moved there; not replaced`, { data: { file: target } });
  step?.(`forget:${label}-renamed`);
  deleteMoved(target, step);
  step?.(`forget:${label}-deleted`);
  return true;
}

function existsAny(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** Remove a file, true when it was there. */
function unlinkIfThere(p: string): boolean {
  try {
    unlinkSync(p);
    return true;
  } catch (e) {
    if (errno(e) === "ENOENT") return false;
    throw ioError(p, "delete", e);
  }
}

/** Empty directories named for the session, from a deleted file upward, never a root itself nor above one. */
function removeSessionDirs(file: string, sessionId: string, roots: readonly string[]): string[] {
  const out: string[] = [];
  const root = roots.find((r) => file.startsWith(r.endsWith(sep) ? r : r + sep));
  if (!root) return out;
  let d = dirname(file);
  // A directory named for the session, or one inside such a directory (subagents/ …); never the
  // project directory every session of a feed shares, nor the root.
  const named = (dir: string): boolean => {
    const rel = relative(root, dir);
    return rel !== "" && !rel.startsWith("..") && rel.split(sep).some((seg) => seg.includes(sessionId));
  };
  while (d !== root && named(d)) {
    try {
      rmdirSync(d);
      out.push(d);
    } catch (e) {
      if (errno(e) === "ENOENT") {
        d = dirname(d);
        continue;
      }
      break; // not empty: another session's or the vendor's files remain
    }
    d = dirname(d);
  }
  return out;
}

function writeRecord(root: string, rec: ForgetRecord, step: StepHook | undefined, sync: boolean): void {
  const dir = join(root, FORGET_DIR);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  replaceAtomic(recordPath(root, rec.session), dir, encodeForgetRecord(rec), step, "forget:record", sync);
}

async function run(root: string, rec: ForgetRecord, started: boolean, options: RemovalOptions): Promise<RemovalResult> {
  {
    const step = options.onStep;
    const sync = options.fsync ?? true;
    const id = rec.session;
    // 2. The source files: the cursors live in the session directory, so a source that outlived them
    //    would be read again from byte 0.
    const sources: string[] = [];
    const sourceDirs: string[] = [];
    for (const f of rec.sources) {
      if (unlinkIfThere(f)) {
        sources.push(f);
        step?.("forget:source-deleted");
      }
    }
    for (const f of rec.sources) sourceDirs.push(...removeSessionDirs(f, id, rec.source_roots));
    if (sourceDirs.length > 0) step?.("forget:source-dirs-removed");
    const removed = removedDir(root, true)!;
    // 3. The session directory, whole, in one rename (under its lock: a pass in it finishes first).
    let sessionDir: string | undefined;
    const sdir = join(root, id);
    if (isDir(sdir)) {
      await acquireLock(sdir, { waitMs: options.waitMs ?? 10_000, ...(step ? { step } : {}) });
      // The lock file moves with the directory and is deleted with it.
      if (renameAway(removed, sdir, id, step, "session", sync)) sessionDir = sdir;
    } else if (existsAny(join(removed, id))) {
      deleteMoved(join(removed, id), step);
    }
    // 4. The chain directory, after the landed files: with them gone nothing parses the session again.
    let chainDir: string | undefined;
    const cdir = join(root, CONVERSATIONS_DIR, id);
    if (renameAway(removed, cdir, `${id}.chain`, step, "chain", sync)) chainDir = cdir;
    else if (existsAny(join(removed, `${id}.chain`))) deleteMoved(join(removed, `${id}.chain`), step);
    // 5. The spool files the session owns.
    const spool: string[] = [];
    for (const f of rec.spool) {
      if (unlinkIfThere(f)) {
        spool.push(f);
        step?.("forget:spool-deleted");
      }
    }
    // 5b. Its derived metrics in `_metrics/` and its line in metrics.state (the receipts went with
    //     the session directory): what push would still export of it.
    const metrics = await forgetMetrics(root, id, { ...(step ? { onStep: step } : {}), ...(options.waitMs !== undefined ? { waitMs: options.waitMs } : {}), fsync: sync });
    // 6. The state lines, once every file they name is gone.
    if (options.dropState) {
      options.dropState(id);
      step?.("forget:state-dropped");
    }
    // 7. The record says removed; it stays as the exclusion.
    writeRecord(root, { ...rec, state: "removed" }, step, sync);
    return { session: id, sources, sourceDirs, ...(sessionDir ? { sessionDir } : {}), ...(chainDir ? { chainDir } : {}), spool, metrics, started };
  }
}

/**
 * Forget a session in the root, in the order of docs/spec/storage-root.md: (1) the forget record is
 * written, saying removing (from then on every pass finishes the removal without deciding again,
 * and the record keeps discovery from landing the session); (2) the source files named in the
 * request, then the empty directories named for the session; (3) `<root>/<id>/` renamed to
 * `_removed/<id>/` and deleted there; (4) `_conversations/<id>/` renamed to `_removed/<id>.chain/`
 * and deleted there; (5) the spool files, then the session's derived metrics in `_metrics/` and its
 * `metrics.state` line; (6) the caller's state lines (`dropState`); (7) the record
 * rewritten to say removed. A record already saying removing is finished as it is (the request is
 * ignored); whatever a stopped removal left in `_removed/` is deleted first.
 */
export async function forgetSession(root: string, sessionId: string, request: ForgetRequest = {}, options: RemovalOptions = {}): Promise<RemovalResult> {
  checkId("session id", sessionId);
  removedDir(root, false);
  clearRemoved(root, options.onStep);
  const existing = readForgetRecord(root, sessionId);
  if (existing?.state === "removing") return run(root, existing, false, options);
  const rec: ForgetRecord = {
    schema: 1,
    session: sessionId,
    state: "removing",
    requested_at: request.now ?? new Date().toISOString(),
    sources: [...(request.sources ?? [])].sort(),
    source_roots: [...(request.sourceRoots ?? [])].sort(),
    spool: [...(request.spool ?? [])].sort(),
  };
  writeRecord(root, rec, options.onStep, options.fsync ?? true);
  return run(root, rec, true, options);
}

/**
 * Finish every removal a stopped run left: `_removed/` is emptied first, then each session whose
 * record still says removing goes through the remaining steps. A pass calls this before it lands,
 * parses or sends anything. Throws StoreError `Corrupt` when `_removed` is a symbolic link or not a
 * directory (no session is removed then).
 */
export async function finishRemovals(root: string, options: RemovalOptions = {}): Promise<RemovalResult[]> {
  const ids = listForgotten(root);
  if (ids.length === 0 && !existsAny(join(root, REMOVED_DIR))) return [];
  clearRemoved(root, options.onStep);
  const out: RemovalResult[] = [];
  for (const id of ids) {
    const rec = readForgetRecord(root, id);
    if (rec?.state === "removing") out.push(await run(root, rec, false, options));
  }
  return out;
}

/**
 * Undo a forget: delete the session's record, so discovery lands the session again. Refused
 * (`InvalidArgument`) while the removal is still in progress. Returns false when there was none.
 */
export function undoForget(root: string, sessionId: string): boolean {
  checkId("session id", sessionId);
  const rec = readForgetRecord(root, sessionId);
  if (!rec) return false;
  if (rec.state === "removing") {
    throw new StoreError("InvalidArgument", `${recordPath(root, sessionId)}: the removal of ${sessionId} is not finished; run it again before undoing it`, { data: { file: recordPath(root, sessionId) } });
  }
  unlinkSync(recordPath(root, sessionId));
  return true;
}

/**
 * Delete a derived directory crash-safely: one rename into `_removed/`, then delete there (a stop
 * leaves the directory whole or gone from its place, never half). Used by `clean`.
 */
export function discardDerived(root: string, path: string, name: string, onStep?: StepHook): boolean {
  const removed = removedDir(root, true)!;
  return renameAway(removed, path, name, onStep, "derived", false);
}

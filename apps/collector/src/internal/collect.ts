// collect: one pass over every discovered source. Discovery, pass.state and each session's cursor
// check decide which sessions need a pass (@lake/adapters/discover, @lake/store/pass: no record
// schema, no redactor, no session store); only then is collect-pass.ts loaded, which per session,
// under its lock, reads windows (@lake/store) → canonicalizes (@lake/adapters) → masks
// (@lake/redact) → lands → commits cursors → updates the index → publishes rounds (@lake/chain).
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { isAbsolute, join, resolve as resolvePath, sep } from "node:path";
import { listDiscoverers, type Discoverer, type DiscoveredSource, type DiscoverOptions, type DiscoveryProblem } from "@lake/adapters/discover";
import type { Redactor } from "@lake/redact";
import type { SessionOptions } from "@lake/store";
import { emptyPassState, isStoreError, listForgotten, lostToCheck, LostSessionTracker, readPassState, checkSession, listConversations, writePassState, type PassState } from "@lake/store/pass";
import { spoolDir } from "./spool.js";
import { finishPending } from "./pending.js";
import { errorFile, ioErrno } from "@lake/cli";
import { CollectorError, ioFailure } from "./errors.js";
import type { ConvertPool } from "./collect-pool.js";

/** Where each runtime's sources are looked for. */
export interface SourceRoots {
  /** runtime → roots. A runtime not listed uses its adapter's default roots when they exist. */
  readonly roots: ReadonlyMap<string, readonly string[]>;
  /** Only the runtimes in `roots` (no default roots). */
  readonly only: boolean;
}

/**
 * Options of one collect pass. `include`, `exclude` and `home` go to each runtime's discovery;
 * `waitMs` (a session still locked by another collector after that long is reported and skipped) and
 * `maxDeltaBytes` to each session the pass opens.
 */
export interface CollectOptions extends Pick<DiscoverOptions, "include" | "exclude" | "home">, Pick<SessionOptions, "waitMs" | "maxDeltaBytes"> {
  readonly root: string;
  readonly sources: SourceRoots;
  /** Publish rounds after landing (default true). */
  readonly parse?: boolean;
  /** Where conflicts and problems are named, one line each (default stderr). */
  readonly logger?: (line: string) => void;
  /** Progress: called after each session with the totals so far. */
  readonly onProgress?: (p: { sessions: number; totalSessions: number; bytes: number; totalBytes: number }) => void;
  readonly tracker?: LostSessionTracker;
  readonly env?: NodeJS.ProcessEnv;
  /** Asked at each safe point (after a source's cursors are saved, after a session): true stops the pass there. */
  readonly shouldStop?: () => boolean;
  /**
   * Only these sessions, with the sources an earlier pass discovered (a watcher's pass after file
   * events): no discovery and no check of sessions discovery no longer finds.
   */
  readonly only?: { readonly discovered: Discovered; readonly sessions: ReadonlySet<string> };
  /** Called after each session with its sources pending and in conflict (0 and 0 for an unchanged one). */
  readonly onSession?: (sessionId: string, r: { readonly pending: number; readonly conflicts: number }) => void;
  /** What a watcher keeps from pass to pass (the pass state, the redactor), so a pass does not rebuild it. */
  readonly cache?: PassCache;
  /** Called with what discovery found (a full pass), so a later pass can reuse it with `only`. */
  readonly onDiscovered?: (d: Discovered) => void;
  /**
   * Convert worker threads (`--jobs`; else `LAKE_COLLECT_JOBS`; else the machine's cores). 1: every
   * record is converted on the main thread and no worker is started. Given (here or in the
   * environment), the pool starts with the first lines to convert; by default only once a pass
   * has converted {@link POOL_THRESHOLD} bytes, so small passes start no worker.
   */
  readonly jobs?: number;
}

/** The most convert workers `--jobs` and `LAKE_COLLECT_JOBS` accept. */
export const MAX_JOBS = 1024;

/** Bytes a pass converts on the main thread before it starts its convert pool (unless `jobs` is given). */
export const POOL_THRESHOLD = 4 * 1024 * 1024;

/** The pass's convert workers: `jobs`, else `LAKE_COLLECT_JOBS`, else the cores; `forced` when given. */
export function convertJobs(options: Pick<CollectOptions, "jobs" | "env">): { jobs: number; forced: boolean } {
  if (options.jobs !== undefined) return { jobs: options.jobs, forced: true };
  const raw = (options.env ?? process.env).LAKE_COLLECT_JOBS;
  if (raw !== undefined && raw !== "") {
    if (!/^[1-9][0-9]{0,3}$/.test(raw) || Number(raw) > MAX_JOBS) throw new CollectorError("Usage", `LAKE_COLLECT_JOBS=${raw}: expected a whole number of worker threads, 1 to ${MAX_JOBS}`);
    return { jobs: Number(raw), forced: true };
  }
  return { jobs: availableParallelism(), forced: false };
}

/** Kept by a watcher between passes; filled by the first pass. */
export interface PassCache {
  passState?: PassState;
  redactor?: Redactor;
  tracker?: LostSessionTracker;
}

/** What discovery found: the sources by session, the problems, the roots. */
export interface Discovered {
  readonly planned: readonly Planned[];
  readonly problems: readonly DiscoveryProblem[];
  readonly roots: Map<string, string[]>;
  /** Absolute source path → session id. */
  readonly bySource: ReadonlyMap<string, string>;
}

/** What one collect pass did. */
export interface CollectSummary {
  root: string;
  sessions: number;
  sources: number;
  landed_files: number;
  records: number;
  bytes_read: number;
  pending: number;
  conflicts: number;
  new_conflicts: { file: string; reason: string }[];
  gone: number;
  locked: string[];
  rounds: number;
  /**
   * Every source or session this pass could not take (unreadable, not a regular file, a dangling
   * link, not a transcript of its runtime, a damaged landed file, a conflict found now), with the
   * reason. The pass went on with everything else.
   */
  problems: { path: string; reason: string }[];
  /** True when the pass completed with problems, pending sources or conflicts (exit 3). */
  failed: boolean;
  /** The pass stopped at a safe point when asked to (`shouldStop`); `sessions` counts the ones done. */
  interrupted: boolean;
  /** Sessions found unchanged from their cursors alone (nothing else of them opened). */
  unchanged_sessions: number;
  /** Convert worker threads that converted lines (0: every record was made on the main thread). */
  convert_workers: number;
  /** Pieces a convert worker failed or lost (each window converted again on the main thread; 0 in a healthy pass). */
  convert_failed: number;
}

/** A discovered source with the adapter that reads it and the cursor's name for it. */
export interface Planned {
  /** The runtime's discoverer (collect-pass.ts converts with the runtime's full adapter). */
  readonly adapter: Discoverer;
  readonly src: DiscoveredSource;
  readonly framed: boolean;
}

/** The cursor's record of a source: `<runtime>:<path relative to its root>`. */
export function cursorSource(runtime: string, rel: string): string {
  return `${runtime}:${rel}`;
}

/**
 * Map a cursor's source (`<runtime>:<path relative to its root>`) back to the file the adapter
 * would read, or undefined for a runtime this collector does not read (the cursor is left alone).
 */
export function sourceResolver(roots: ReadonlyMap<string, readonly string[]>): (sessionId: string, source: string) => string | undefined {
  return (_sid, source) => {
    const i = source.indexOf(":");
    if (i <= 0) return undefined;
    const rs = roots.get(source.slice(0, i));
    if (!rs || rs.length === 0) return undefined;
    const rel = source.slice(i + 1);
    for (const r of rs) if (existsSync(join(r, rel))) return join(r, rel);
    return join(rs[0]!, rel);
  };
}

/** Every root to scan per runtime. */
export function runtimeRoots(root: string, sources: SourceRoots, env: NodeJS.ProcessEnv = process.env, home?: string): Map<string, string[]> {
  const known = listDiscoverers().map((a) => a.runtime);
  for (const [rt, paths] of sources.roots) {
    if (!known.includes(rt)) throw new CollectorError("Usage", `--source ${rt}=${paths[0] ?? ""}: unknown runtime "${rt}" (known: ${known.join(", ")})`);
  }
  const out = new Map<string, string[]>();
  for (const a of listDiscoverers()) {
    const given = sources.roots.get(a.runtime);
    if (a.runtime === "hook") {
      out.set("hook", [...(given ?? []), spoolDir(root)]);
      continue;
    }
    if (given) out.set(a.runtime, [...given]);
    else if (!sources.only) out.set(a.runtime, a.defaultRoots(env, home).filter((r) => existsSync(r)));
  }
  return out;
}

/** Discover every source. The hook spool (WAL files) is listed here; the other runtimes by their adapters. */
async function discoverAll(root: string, options: CollectOptions): Promise<Discovered> {
  const roots = runtimeRoots(root, options.sources, options.env, options.home);
  const planned: Planned[] = [];
  const problems: DiscoveryProblem[] = [];
  for (const a of listDiscoverers()) {
    const rs = roots.get(a.runtime);
    if (!rs || rs.length === 0) continue;
    if (a.runtime === "hook") {
      for (const dir of rs) {
        let names: string[] = [];
        try {
          names = readdirSync(dir).filter((n) => n.endsWith(".wal") && !n.startsWith("."));
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "ENOENT") problems.push({ path: dir, reason: (e as Error).message });
        }
        for (const n of names.sort()) {
          const path = join(dir, n);
          let st;
          try {
            st = statSync(path);
          } catch (e) {
            problems.push({ path, reason: `cannot read (${(e as NodeJS.ErrnoException).code ?? String(e)})`, scope: "file" });
            continue;
          }
          const session = n.slice(0, -4);
          const src: DiscoveredSource = { runtime: "hook", path, rel: n, root: dir, session_id: session, stream: "main", kind: "hooks", mode: "append", size: st.size, mtimeMs: st.mtimeMs, ino: st.ino };
          planned.push(plan(a, src, true));
        }
      }
      continue;
    }
    let d;
    try {
      d = await a.discover({ roots: rs, ...(options.include ? { include: options.include } : {}), ...(options.exclude ? { exclude: options.exclude } : {}), ...(options.env ? { env: options.env } : {}), ...(options.home ? { home: options.home } : {}) });
    } catch (e) {
      problems.push({ path: rs.join(", "), reason: `${a.runtime} discovery failed: ${(e as Error).message}` });
      continue;
    }
    problems.push(...d.problems);
    for (const src of d.sources) {
      if (a.runtime === "broca" && src.mode !== "append") {
        // An archived WAL lives inside a fold container shared with other sessions; the store's
        // snapshot cursor would take the container for the source. Not collected yet: reported.
        problems.push({ path: src.path, reason: `archived broca session ${src.session_id} is not collected (restore it to wal/ to collect it)` });
        continue;
      }
      planned.push(plan(a, src, a.runtime === "broca"));
    }
  }
  return { planned, problems, roots, bySource: new Map(planned.map((p) => [p.src.path, p.src.session_id])) };
}

/** A planned source as it is now: size and mtime from a fresh stat (kept as discovered when the stat fails). */
function restat(p: Planned): Planned {
  try {
    const st = statSync(p.src.path);
    return { ...p, src: { ...p.src, size: st.size, mtimeMs: st.mtimeMs, ino: st.ino } };
  } catch {
    return p;
  }
}

function plan(adapter: Discoverer, src: DiscoveredSource, framed: boolean): Planned {
  return { adapter, src, framed };
}

/**
 * The errno of an I/O failure that is the root's (writing or reading under the storage root: it
 * stops the pass, exit 7), else undefined (a source's failure: recorded for that source).
 */
export function rootIo(e: unknown, root: string): string | undefined {
  const code = ioErrno(e);
  if (code === undefined) return undefined;
  const file = errorFile(e);
  if (file !== undefined && isAbsolute(file) && file !== root && !file.startsWith(root + sep)) return undefined;
  return code;
}

/** One line for a failure: the message without a leading copy of the file name. */
export function reasonOf(e: unknown, path: string): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.startsWith(`${path}: `) ? m.slice(path.length + 2) : m;
}

/** One collect pass over every discovered source. */
export async function collect(options: CollectOptions): Promise<CollectSummary> {
  try {
    return await collectPass(options);
  } catch (e) {
    const code = rootIo(e, resolvePath(options.root));
    if (code !== undefined) throw ioFailure(e, code);
    throw e;
  }
}

/** pass.state, or an empty one when it is absent or unreadable (a cache: the pass then checks everything). */
function loadPassState(root: string): PassState {
  try {
    return readPassState(root);
  } catch (e) {
    if (isStoreError(e)) return emptyPassState();
    throw e;
  }
}

/** What a session's pass (collect-pass.ts) shares with the pass over all sessions. */
export interface PassContext {
  readonly root: string;
  readonly absRoot: string;
  readonly options: CollectOptions;
  readonly summary: CollectSummary;
  readonly passState: PassState;
  readonly tracker: LostSessionTracker;
  readonly resolve: (sessionId: string, source: string) => string | undefined;
  readonly log: (line: string) => void;
  /** Made by the first session that needs one (or the watcher's). */
  redactor?: Redactor;
  problem(path: string, reason: string): void;
  /** Asked at each safe point: true stops the pass there (and marks the summary interrupted). */
  stop(): boolean;
  /** pass.state changed: it is written at the end of the pass. */
  changed(): void;
  /** A session was taken (progress). */
  done(sources: readonly Planned[]): void;
  /** Convert workers this pass may start (1: none) and whether they were asked for (no threshold). */
  readonly jobs: { readonly jobs: number; readonly forced: boolean };
  /** Bytes of lines handed to convert so far (the pool starts past {@link POOL_THRESHOLD}). */
  converted: number;
  /** The convert pool, once started (collect-pass.ts starts it). */
  pool?: ConvertPool;
  /** Sessions of the pass its cursors did not find unchanged (set before the first is taken). */
  changedSessions: number;
  /** Of those, the sessions whose sources the pass has read (collect-pass.ts counts them; the pool closes at the last). */
  collectedSessions: number;
}

type PassModule = typeof import("./collect-pass.js");

/** The session pass, once a pass of this process has loaded it. */
let passLoaded: PassModule | undefined;

/**
 * As a one-shot collect ends: V8's flags that a pass which landed set for its heap, put back
 * (heap-flags.ts). Loads nothing: a process whose passes landed nothing set none.
 */
export function restoreHeapFlags(): void {
  passLoaded?.restoreHeapFlags();
}

async function collectPass(options: CollectOptions): Promise<CollectSummary> {
  const root = options.root;
  const absRoot = resolvePath(root);
  const log = options.logger ?? ((l: string) => process.stderr.write(l + "\n"));
  // The root is made by the first pass (on a machine no agent has written to yet, nothing lands to make
  // it, and the pass is still recorded in it). A root that cannot be made is the root's I/O error.
  mkdirSync(root, { recursive: true });
  // A removal a stopped run left is finished before anything lands; a forgotten session is not collected.
  await finishPending(root, { warn: (l) => log(`lake-collector: ${l}`) });
  const forgotten = new Set(listForgotten(root));
  const targeted = options.only;
  const discovered = targeted ? targeted.discovered : await discoverAll(root, options);
  if (!targeted) options.onDiscovered?.(discovered);
  const { roots } = discovered;
  const found = targeted ? [] : discovered.problems;
  const wanted = (p: Planned) => !forgotten.has(p.src.session_id) && (!targeted || targeted.sessions.has(p.src.session_id));
  const planned = (forgotten.size === 0 && !targeted ? discovered.planned : discovered.planned.filter(wanted)).map((p) => (targeted ? restat(p) : p));
  const cache = options.cache;
  const passState = cache?.passState ?? loadPassState(root);
  if (cache) cache.passState = passState;
  let passStateChanged = false;
  const tracker = options.tracker ?? cache?.tracker ?? new LostSessionTracker(passState.lostChecked);
  if (cache) cache.tracker = tracker;
  const bySession = new Map<string, Planned[]>();
  for (const p of planned) {
    let l = bySession.get(p.src.session_id);
    if (!l) bySession.set(p.src.session_id, (l = []));
    l.push(p);
  }
  if (!targeted) {
    // Marks of sessions discovery no longer finds are dropped (the pass state stays the size of what is found).
    for (const id of passState.sessions.keys()) {
      if (!bySession.has(id)) {
        passState.sessions.delete(id);
        passStateChanged = true;
      }
    }
  }
  const problems: { path: string; reason: string }[] = [];
  const problem = (path: string, reason: string) => {
    problems.push({ path, reason });
    log(`lake-collector: ${path}: ${reason}`);
  };
  for (const p of found) problem(p.path, p.reason);
  const summary: CollectSummary = {
    root, sessions: 0, sources: planned.length, landed_files: 0, records: 0, bytes_read: 0, pending: 0, conflicts: 0, new_conflicts: [], gone: 0, locked: [], rounds: 0, problems, failed: false, interrupted: false,
    unchanged_sessions: 0, convert_workers: 0, convert_failed: 0,
  };
  const totalBytes = planned.reduce((a, p) => a + p.src.size, 0);
  let doneBytes = 0;
  let doneSessions = 0;
  const ctx: PassContext = {
    root, absRoot, options, summary, passState, tracker, log, problem, jobs: convertJobs(options), converted: 0, changedSessions: 0, collectedSessions: 0,
    ...(cache?.redactor ? { redactor: cache.redactor } : {}),
    resolve: sourceResolver(roots),
    stop: () => (summary.interrupted ||= options.shouldStop?.() === true),
    changed: () => void (passStateChanged = true),
    done: (sources) => {
      doneSessions++;
      doneBytes += sources.reduce((a, p) => a + p.src.size, 0);
      options.onProgress?.({ sessions: doneSessions, totalSessions: bySession.size, bytes: doneBytes, totalBytes });
    },
  };
  // The session pass is loaded by the first session that needs one.
  const load = async (): Promise<PassModule> => (passLoaded ??= await import("./collect-pass.js"));
  const savePassState = () => {
    const lost = tracker.checkedIds();
    if (lost.length !== passState.lostChecked.size || lost.some((id) => !passState.lostChecked.has(id))) {
      passState.lostChecked.clear();
      for (const id of lost) passState.lostChecked.add(id);
      passStateChanged = true;
    }
    if (passStateChanged) writePassState(root, passState);
  };
  try {
    await eachSession(ctx, bySession, load);
  } finally {
    if (ctx.pool) await (await load()).closePool(ctx);
  }
  if (summary.interrupted || targeted) {
    savePassState();
    summary.failed = summary.pending > 0 || summary.conflicts > 0 || problems.length > 0;
    return sortProblems(summary);
  }
  // Sessions discovery no longer finds: their cursors become source_gone (once per rediscovery).
  // Only a directory discovery could not read hides files the way pruning does. Which they are is
  // one listing of the root; the check itself is loaded only when there is one.
  const foundIds = new Set(bySession.keys());
  if (!found.some((p) => p.scope !== "file")) {
    if (lostToCheck(root, foundIds, tracker).length > 0) summary.gone += await (await load()).checkLost(ctx, foundIds);
  } else tracker.noteFound(foundIds);
  savePassState();
  summary.failed = summary.pending > 0 || summary.conflicts > 0 || problems.length > 0;
  return sortProblems(summary);
}

/** The summary's problems by path (two sessions may run at once: the order they were met in varies). */
function sortProblems(summary: CollectSummary): CollectSummary {
  summary.problems.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0));
  return summary;
}

/**
 * The sessions of a pass in id order: an unchanged one is only counted; the others go to the
 * session pass two at once, started in id order (each session still has its one writer under its
 * lock): while one waits — for its records from the convert pool, or for its chain's reads — the
 * other lands.
 */
async function eachSession(ctx: PassContext, bySession: Map<string, Planned[]>, load: () => Promise<PassModule>): Promise<void> {
  const { root, summary, passState, options } = ctx;
  const running = new Set<Promise<void>>();
  let stopped = false;
  let failure: { e: unknown } | undefined;
  // Which sessions have a round chain: one listing for the pass, not one check per session.
  const listing = { conversations: listConversations(root) };
  // Unchanged since its last complete pass (by its cursors and discovery's stat): no lock, no
  // index, no chain. A mark whose cursors had to be read gains their stats (pass.state is written
  // once for it). Every session is checked first: the convert pool is sized by how many changed.
  const checked: Array<{ sessionId: string; sources: Planned[]; unchanged: boolean }> = [];
  // Sorted as ids, not as [id, sources] pairs: a comparator that destructures its two pairs makes
  // two iterators per comparison, some ten thousand over a thousand sessions.
  for (const sessionId of [...bySession.keys()].sort()) {
    const sources = bySession.get(sessionId)!;
    const foundSources = sources.map((p) => ({ source: cursorSource(p.src.runtime, p.src.rel), path: p.src.path, mode: p.src.mode, size: p.src.size, mtimeMs: p.src.mtimeMs, ino: p.src.ino }));
    const check = checkSession(root, sessionId, passState.sessions.get(sessionId), foundSources, listing);
    if (check.mark) {
      passState.sessions.set(sessionId, check.mark);
      ctx.changed();
    }
    if (!check.unchanged) ctx.changedSessions++;
    checked.push({ sessionId, sources, unchanged: check.unchanged });
  }
  for (const { sessionId, sources, unchanged } of checked) {
    if (stopped || ctx.stop()) break;
    if (unchanged) {
      summary.sessions++;
      summary.unchanged_sessions++;
      options.onSession?.(sessionId, { pending: 0, conflicts: 0 });
      ctx.done(sources);
      continue;
    }
    while (running.size >= SESSIONS_AT_ONCE) await Promise.race(running);
    // A session's landing and publishing may not turn the event loop (their file calls are
    // synchronous): one turn before each, so a Ctrl-C that came meanwhile is heard here.
    await new Promise<void>((turn) => setImmediate(turn));
    if (stopped || ctx.stop()) break;
    const work = load()
      .then((m) => m.passSession(ctx, sessionId, sources))
      .then(
        (go) => void (stopped ||= !go),
        (e: unknown) => {
          failure ??= { e };
          stopped = true;
        },
      )
      .finally(() => running.delete(work));
    running.add(work);
  }
  await Promise.all(running);
  if (failure) throw failure.e;
}

/** Sessions a pass takes at once. */
const SESSIONS_AT_ONCE = 2;

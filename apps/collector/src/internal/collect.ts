// collect: one pass over every discovered source. Per session, under its lock: read windows
// (@lake/store) → canonicalize (@lake/adapters) → mask (@lake/redact) → land → commit cursors →
// update the index → publish rounds (@lake/chain).
import { existsSync, readdirSync, statSync } from "node:fs";
import { isAbsolute, join, resolve as resolvePath, sep } from "node:path";
import { canonicalize, type CanonicalRecord, type RawRecord } from "@lake/events";
import { listAdapters, readLines, type Adapter, type AdapterState, type DiscoveredSource, type DiscoveryProblem, type SourceLine as AdapterLine } from "@lake/adapters";
import { createRedactor, loadOrCreateKey, QUARANTINE_TYPE, type Redactor } from "@lake/redact";
import {
  checkLostSessions, emptyPassState, isStoreError, listForgotten, LostSessionTracker, openSession, readPassState, sessionUnchanged, writePassState,
  type Convert, type PassState, type PassStateSource, type SourceOutcome, type SourceRef as StoreSource,
} from "@lake/store";
import { parse as parseChain } from "@lake/chain";
import { spoolDir } from "./hook.js";
import { crashTesting, step } from "./crash.js";
import { finishPending } from "./forget.js";
import { WalSource, type WalLineValue } from "./wal-source.js";
import { CollectorError, errorFile, ioErrno, ioFailure } from "./errors.js";
import { brocaRecords, type BrocaState } from "@lake/adapters";

/** Where each runtime's sources are looked for. */
export interface SourceRoots {
  /** runtime → roots. A runtime not listed uses its adapter's default roots when they exist. */
  readonly roots: ReadonlyMap<string, readonly string[]>;
  /** Only the runtimes in `roots` (no default roots). */
  readonly only: boolean;
}

/** Options of one collect pass. */
export interface CollectOptions {
  readonly root: string;
  readonly sources: SourceRoots;
  readonly include?: readonly string[];
  readonly exclude?: readonly string[];
  /** How long to wait for a session locked by another collector (ms; default 0: report and skip). */
  readonly waitMs?: number;
  /** Publish rounds after landing (default true). */
  readonly parse?: boolean;
  readonly maxDeltaBytes?: number;
  /** Where conflicts and problems are named, one line each (default stderr). */
  readonly logger?: (line: string) => void;
  /** Progress: called after each session with the totals so far. */
  readonly onProgress?: (p: { sessions: number; totalSessions: number; bytes: number; totalBytes: number }) => void;
  readonly tracker?: LostSessionTracker;
  readonly env?: NodeJS.ProcessEnv;
  readonly home?: string;
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
}

/** Fields of a record that identify or locate it; never masked (a false positive would break joins). */
const ID_FIELDS = new Set([
  "runtime", "session_id", "stream", "record_id", "parent_id", "ts", "kind", "tool_call_id", "message_id", "request_id",
  "usage_key", "usage_mode", "child_stream", "source_path", "adapter", "adapter_version", "content_hash",
]);

/** Mask one adapter record and make it canonical; a record a quarantine rule fires on is withheld whole. */
export function maskRecord(redactor: Redactor, raw: RawRecord): CanonicalRecord {
  const content: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) if (typeof v === "string" && !ID_FIELDS.has(k)) content[k] = v;
  const r = redactor.redactRecord(content);
  if (r.status === "quarantined") {
    const kept: RawRecord = {
      runtime: raw.runtime, session_id: raw.session_id, stream: raw.stream, kind: raw.kind, source_path: raw.source_path, adapter: raw.adapter, adapter_version: raw.adapter_version,
      vendor_type: QUARANTINE_TYPE,
      attrs: JSON.stringify({ status: r.status, rules_fired: r.rules_fired, hash: r.hash }),
    };
    for (const k of ["record_id", "parent_id", "ts", "tool_call_id", "message_id", "request_id", "usage", "usage_key", "usage_mode", "model", "source_offset", "source_line", "is_sidechain", "replayed", "child_stream"] as const) {
      if (raw[k] !== undefined) (kept as unknown as Record<string, unknown>)[k] = raw[k];
    }
    return canonicalize(kept, r.rules_fired);
  }
  return canonicalize({ ...raw, ...(r.value as Record<string, string>) }, r.rules);
}

/** A discovered source with the adapter that reads it and the cursor's name for it. */
export interface Planned {
  readonly adapter: Adapter;
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
  const known = listAdapters().map((a) => a.runtime);
  for (const [rt, paths] of sources.roots) {
    if (!known.includes(rt)) throw new CollectorError("Usage", `--source ${rt}=${paths[0] ?? ""}: unknown runtime "${rt}" (known: ${known.join(", ")})`);
  }
  const out = new Map<string, string[]>();
  for (const a of listAdapters()) {
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
  for (const a of listAdapters()) {
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
          const src: DiscoveredSource = { runtime: "hook", path, rel: n, root: dir, session_id: session, stream: "main", kind: "hooks", mode: "append", size: st.size, mtimeMs: st.mtimeMs };
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
    return { ...p, src: { ...p.src, size: st.size, mtimeMs: st.mtimeMs } };
  } catch {
    return p;
  }
}

/** Outcomes after which a source is drained to its last complete line. */
const SETTLED = new Set<SourceOutcome["status"]>(["landed", "unchanged", "waiting"]);

function plan(adapter: Adapter, src: DiscoveredSource, framed: boolean): Planned {
  return { adapter, src, framed };
}

/** The store's view of a planned source, with what carries its state across windows and passes. */
function storeSource(p: Planned, carry: LineState | WalSource | undefined): StoreSource {
  const { src, adapter } = p;
  return {
    path: src.path,
    source: cursorSource(src.runtime, src.rel),
    stream: src.stream,
    kind: src.kind,
    runtime: src.runtime,
    adapter: adapter.name,
    adapterVersion: adapter.version,
    ...(carry instanceof WalSource ? { framing: carry } : { accept: acceptor(src.runtime) }),
    ...(carry ? { carry } : {}),
  };
}

/**
 * A line-based source whose first window holds no record of its runtime (every line unknown: not
 * JSON, or JSON the adapter does not know) is not a transcript: it is reported and not landed.
 */
function acceptor(runtime: string): (records: readonly CanonicalRecord[]) => string | undefined {
  return (records) => (records.some((r) => r.kind !== "unknown") ? undefined : `not a ${runtime} transcript (no ${runtime} record in its first ${records.length} lines)`);
}

/**
 * The errno of an I/O failure that is the root's (writing or reading under the storage root: it
 * stops the pass, exit 7), else undefined (a source's failure: recorded for that source).
 */
function rootIo(e: unknown, root: string): string | undefined {
  const code = ioErrno(e);
  if (code === undefined) return undefined;
  const file = errorFile(e);
  if (file !== undefined && isAbsolute(file) && file !== root && !file.startsWith(root + sep)) return undefined;
  return code;
}

/** One line for a failure: the message without a leading copy of the file name. */
function reasonOf(e: unknown, path: string): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.startsWith(`${path}: `) ? m.slice(path.length + 2) : m;
}

/**
 * The cross-line state of a line-based source (Codex, Gemini), carried in its cursor: restored at
 * the cursor's offset, saved with every window, so a pass reads only the new bytes. A cursor with
 * no saved state (saved before state was kept) is caught up once by re-reading the lines before it.
 */
class LineState {
  state: AdapterState;
  constructor(private readonly p: Planned) {
    this.state = p.adapter.initialState(p.src);
  }

  async restore(saved: string | undefined, offset: number): Promise<void> {
    this.state = this.p.adapter.initialState(this.p.src);
    if (saved !== undefined) {
      try {
        const v = JSON.parse(saved) as { offset?: number; state?: AdapterState };
        if (v.offset === offset && v.state && typeof v.state === "object") {
          this.state = v.state;
          return;
        }
      } catch {
        /* unreadable: rebuilt below */
      }
    }
    if (offset === 0) return;
    const before: AdapterLine[] = [];
    for await (const l of readLines(this.p.src.path)) {
      if (l.offset >= offset) break;
      before.push(l);
    }
    this.p.adapter.parseLines(this.p.src, before, this.state);
  }

  save(offset: number): string | undefined {
    return JSON.stringify({ offset, state: this.state });
  }
}

/** Build the store's convert callback for one source: adapter → mask → canonical, and its carried state. */
function converter(p: Planned, redactor: Redactor): { convert: Convert; carry: LineState | WalSource | undefined } {
  if (p.framed) {
    const broca = p.src.runtime === "broca";
    const ws = new WalSource(p.src.path, broca ? (entries, st) => void brocaRecords(p.src, entries, st as BrocaState, Number.MAX_SAFE_INTEGER) : undefined);
    const convert: Convert = (lines) => {
      if (broca) return brocaRecords(p.src, lines.map((l) => l.value as WalLineValue), ws.adapter as BrocaState).map((r) => maskRecord(redactor, r));
      const st = p.adapter.initialState(p.src);
      return p.adapter.parseLines(p.src, lines.map((l) => ({ bytes: l.bytes, offset: l.offset, line: l.line })), st).map((r) => maskRecord(redactor, r));
    };
    return { convert, carry: ws };
  }
  // Adapters without cross-line state (Claude Code) carry nothing.
  const carry = Object.keys(p.adapter.initialState(p.src)).length > 0 ? new LineState(p) : undefined;
  let st = carry ? undefined : p.adapter.initialState(p.src);
  const convert: Convert = (lines) => {
    const state = carry ? carry.state : (st ??= p.adapter.initialState(p.src));
    return p.adapter.parseLines(p.src, lines.map((l) => ({ bytes: l.bytes, offset: l.offset, line: l.line })), state).map((r) => maskRecord(redactor, r));
  };
  return { convert, carry };
}

function snapshotConverter(p: Planned, redactor: Redactor): Convert {
  return (lines) => {
    const out: CanonicalRecord[] = [];
    for (const l of lines) for (const r of p.adapter.parseSnapshot(p.src, l.bytes)) out.push(maskRecord(redactor, r));
    return out;
  };
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

async function collectPass(options: CollectOptions): Promise<CollectSummary> {
  const root = options.root;
  const absRoot = resolvePath(root);
  const log = options.logger ?? ((l: string) => process.stderr.write(l + "\n"));
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
  // Built when a session needs a pass (its keyword matcher costs more than a pass over unchanged sessions).
  const cache = options.cache;
  const key = cache?.redactor ? undefined : loadOrCreateKey(root);
  let redactorMade: Redactor | undefined = cache?.redactor;
  const redactor = () => {
    redactorMade ??= createRedactor({ key: key! });
    if (cache) cache.redactor = redactorMade;
    return redactorMade;
  };
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
    unchanged_sessions: 0,
  };
  const totalBytes = planned.reduce((a, p) => a + p.src.size, 0);
  let doneBytes = 0;
  let doneSessions = 0;
  const resolve = sourceResolver(roots);
  const maskUnknown = (text: string) => {
    const r = redactor().redactString(text);
    return { text: r.value, rules: r.rules };
  };
  // A failure belongs to the smallest unit that has it: a source, else its session. Only an I/O
  // failure of the root itself (read-only, full, permission) stops the pass.
  const contain = (e: unknown, path: string): void => {
    if (rootIo(e, absRoot) !== undefined) throw e;
    if (process.env.LAKE_DEBUG) process.stderr.write(`${(e as Error)?.stack ?? ""}\n`);
    problem(errorFile(e) ?? path, reasonOf(e, errorFile(e) ?? path));
  };
  const stop = () => (summary.interrupted ||= options.shouldStop?.() === true);
  const done = (sources: readonly Planned[]) => {
    doneSessions++;
    doneBytes += sources.reduce((a, p) => a + p.src.size, 0);
    options.onProgress?.({ sessions: doneSessions, totalSessions: bySession.size, bytes: doneBytes, totalBytes });
  };
  const savePassState = () => {
    const lost = tracker.checkedIds();
    if (lost.length !== passState.lostChecked.size || lost.some((id) => !passState.lostChecked.has(id))) {
      passState.lostChecked.clear();
      for (const id of lost) passState.lostChecked.add(id);
      passStateChanged = true;
    }
    if (passStateChanged) writePassState(root, passState);
  };
  for (const [sessionId, sources] of [...bySession].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (stop()) break;
    const foundSources = sources.map((p) => ({ source: cursorSource(p.src.runtime, p.src.rel), path: p.src.path, mode: p.src.mode, size: p.src.size, mtimeMs: p.src.mtimeMs }));
    // Unchanged since its last complete pass (by its cursors): no lock, no index, no chain.
    if (sessionUnchanged(root, sessionId, passState.sessions.get(sessionId), foundSources)) {
      summary.sessions++;
      summary.unchanged_sessions++;
      options.onSession?.(sessionId, { pending: 0, conflicts: 0 });
      done(sources);
      continue;
    }
    if (passState.sessions.delete(sessionId)) passStateChanged = true;
    let s;
    try {
      s = await openSession(root, sessionId, { waitMs: options.waitMs ?? 0, maskUnknown, ...(crashTesting ? { onStep: (n: string) => step(`store:${n}`) } : {}), logger: log, ...(options.maxDeltaBytes ? { maxDeltaBytes: options.maxDeltaBytes } : {}) });
    } catch (e) {
      if ((e as { code?: string }).code === "Locked") {
        summary.locked.push(sessionId);
        continue;
      }
      // A session id the store refuses (not one path segment), for instance: every source of it is reported.
      if (rootIo(e, absRoot) !== undefined) throw e;
      for (const p of sources) problem(p.src.path, reasonOf(e, p.src.path));
      continue;
    }
    let published = 0;
    // The session's mark for pass.state: set only when every source settled and index and chain are current.
    let settled = true;
    const marks: PassStateSource[] = [];
    let seq = 0;
    try {
      const pass = s.beginPass();
      for (const p of sources.sort((a, b) => (a.src.path < b.src.path ? -1 : 1))) {
        if (stop()) break;
        try {
          let out;
          if (p.src.mode === "snapshot") out = await pass.collectSnapshot(storeSource(p, undefined), snapshotConverter(p, redactor()));
          else {
            const { convert, carry } = converter(p, redactor());
            out = await pass.collectAppend(storeSource(p, carry), convert);
          }
          summary.bytes_read += out.bytesRead;
          if ((out.status === "problem" || out.status === "rejected") && out.reason !== undefined) problem(p.src.path, out.reason);
          if (out.status === "conflict" && out.reason !== undefined) problems.push({ path: p.src.path, reason: `conflict: ${out.reason}` });
          if (SETTLED.has(out.status) && out.cursor !== undefined) {
            marks.push({ source: cursorSource(p.src.runtime, p.src.rel), cursor: out.cursor, mode: p.src.mode, ...(p.src.mode === "snapshot" ? { size: p.src.size, mtimeMs: p.src.mtimeMs } : {}) });
          } else settled = false;
        } catch (e) {
          settled = false;
          contain(e, p.src.path);
        }
      }
      try {
        // An interrupted session's other sources were not read: nothing of it is pruned.
        if (!summary.interrupted) pass.pruneUnseen((source) => resolve(sessionId, source));
        const r = pass.finish();
        summary.landed_files += r.landed;
        summary.records += r.records;
        summary.pending += r.pending;
        summary.conflicts += r.conflicts;
        summary.new_conflicts.push(...r.newConflicts);
        summary.gone += r.gone;
        options.onSession?.(sessionId, { pending: r.pending, conflicts: r.conflicts });
        for (const d of r.index?.damaged ?? []) problem(d.file, d.reason);
        if (r.index?.damaged?.length || (!r.index && r.seq > 0)) settled = false;
        seq = r.seq;
      } catch (e) {
        settled = false;
        contain(e, s.dir);
      }
    } finally {
      s.close();
    }
    if (summary.interrupted) break; // its landed files are indexed; the next pass reads the rest and publishes
    if (options.parse !== false) {
      try {
        const pr = await parseChain(root, sessionId, crashTesting ? { onStep: (n) => step(`chain:${n}`) } : {});
        if (pr.published) published++;
      } catch (e) {
        settled = false;
        contain(e, join(root, "_conversations", sessionId));
      }
    } else settled = false;
    summary.rounds += published;
    // A session none of whose sources is a transcript (refused, empty) left no directory: not counted.
    if (existsSync(join(root, sessionId))) {
      summary.sessions++;
      if (settled && marks.length === sources.length) {
        passState.sessions.set(sessionId, { seq, chain: seq > 0 && existsSync(join(root, "_conversations", sessionId)), sources: marks });
        passStateChanged = true;
      }
    }
    done(sources);
  }
  if (summary.interrupted || targeted) {
    savePassState();
    summary.failed = summary.pending > 0 || summary.conflicts > 0 || problems.length > 0;
    return summary;
  }
  // Sessions discovery no longer finds: their cursors become source_gone (once per rediscovery).
  // Only a directory discovery could not read hides files the way pruning does.
  const lost = await checkLostSessions(root, {
    found: new Set(bySession.keys()),
    resolve: (sid, source) => resolve(sid, source),
    discoveryProblem: found.some((p) => p.scope !== "file"),
    tracker,
  });
  summary.gone += lost.gone;
  savePassState();
  summary.failed = summary.pending > 0 || summary.conflicts > 0 || problems.length > 0;
  return summary;
}

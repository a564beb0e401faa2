// A collect pass's work on one session that is not unchanged (collect.ts decides): under its lock,
// read windows (@lake/store) → canonicalize (@lake/adapters) → mask (@lake/redact) → land → commit
// cursors → update the index → publish rounds (@lake/chain); and the check of sessions discovery no
// longer finds. Loaded only when a pass has such work, so a pass over unchanged sessions loads none
// of these packages. Line sources convert with @lake/adapters/discover's adapters; the WAL decoder
// (@lake/wal, its record schemas: zod) and broca's adapter are loaded only for a session with a
// framed source (the hook spool, broca).
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { CanonicalRecord } from "@lake/events/record";
import type { BrocaState } from "@lake/adapters";
import { lineAdapter, readLines, type Adapter, type AdapterState, type SourceLine as AdapterLine } from "@lake/adapters/discover";
import type { Redactor } from "@lake/redact";
import { maskRecord, maskUnknownText, passRedactor } from "./collect-mask.js";
import { checkLostSessions, openSession, releaseIndex, type Convert, type SourceOutcome, type SourceRef as StoreSource } from "@lake/store/session";
import { confirmSource, type PassStateSource } from "@lake/store/pass";
import { parse as parseChain, releaseFold } from "@lake/chain";
import { crashTesting, step } from "./crash.js";
import { keepOldGenerationNearLive, keepYoungGenerationSmall } from "./heap-flags.js";
import type { WalSource, WalLineValue } from "./wal-source.js";
import { errorFile } from "@lake/cli";
import { CollectorError } from "./errors.js";
import { cursorSource, POOL_THRESHOLD, reasonOf, rootIo, type PassContext, type Planned } from "./collect.js";
import type { ConvertPool } from "./collect-pool.js";

export { restoreHeapFlags } from "./heap-flags.js";

/** The store's hook that converts a window elsewhere. */
type Encode = NonNullable<StoreSource["encode"]>;

/** The adapter that converts a planned source's lines (discovery planned it with its discoverer). */
function adapterOf(p: Planned): Adapter {
  const a = lineAdapter(p.src.runtime);
  if (!a) throw new CollectorError("Internal", `${p.src.path}: no line adapter for runtime ${p.src.runtime}`);
  return a;
}

/** What a framed source (a WAL: the hook spool, broca) is read and converted with. */
interface Framed {
  readonly WalSource: typeof WalSource;
  readonly brocaRecords: typeof import("@lake/adapters").brocaRecords;
}

/** The WAL reader and broca's records, loaded by the first session with a framed source (a failed load is tried again by the next). */
let framedModules: Promise<Framed> | undefined;
function loadFramed(): Promise<Framed> {
  return (framedModules ??= Promise.all([import("./wal-source.js"), import("@lake/adapters")]).then(
    ([w, a]) => ({ WalSource: w.WalSource, brocaRecords: a.brocaRecords }),
    (e: unknown) => {
      framedModules = undefined;
      throw e;
    },
  ));
}

/**
 * The convert pool's module (and node:worker_threads), loaded by the first pass that starts a pool:
 * most passes convert too little to start one (a failed load is tried again by the next).
 */
let poolModule: Promise<typeof import("./collect-pool.js")> | undefined;
function loadPool(): Promise<typeof import("./collect-pool.js")> {
  return (poolModule ??= import("./collect-pool.js").catch((e: unknown) => {
    poolModule = undefined;
    throw e;
  }));
}

/** The pass's redactor: the watcher's, else made once (its keyword matcher is built here). */
function redactor(ctx: PassContext): Redactor {
  const cache = ctx.options.cache;
  ctx.redactor ??= cache?.redactor ?? passRedactor(ctx.root);
  if (cache) cache.redactor = ctx.redactor;
  return ctx.redactor;
}

/**
 * A failure belongs to the smallest unit that has it: a source, else its session. Only an I/O
 * failure of the root itself (read-only, full, permission) stops the pass.
 */
function contain(ctx: PassContext, e: unknown, path: string): void {
  if (rootIo(e, ctx.absRoot) !== undefined) throw e;
  if (process.env.LAKE_DEBUG) process.stderr.write(`${(e as Error)?.stack ?? ""}\n`);
  ctx.problem(errorFile(e) ?? path, reasonOf(e, errorFile(e) ?? path));
}

/** Outcomes after which a source is drained to its last complete line. */
const SETTLED = new Set<SourceOutcome["status"]>(["landed", "unchanged", "waiting"]);


/** The store's view of a planned source, with what carries its state across windows and passes. */
function storeSource(p: Planned, carry: LineState | WalSource | undefined, encode?: Encode): StoreSource {
  const framing = p.framed && carry !== undefined && !(carry instanceof LineState) ? carry : undefined;
  const { src, adapter } = p;
  return {
    path: src.path,
    source: cursorSource(src.runtime, src.rel),
    stream: src.stream,
    kind: src.kind,
    runtime: src.runtime,
    adapter: adapter.name,
    adapterVersion: adapter.version,
    ...(framing ? { framing } : { accept: acceptor(src.runtime) }),
    ...(carry ? { carry } : {}),
    ...(encode ? { encode } : {}),
  };
}

/**
 * A line-based source whose first window holds no record of its runtime (every line unknown: not
 * JSON, or JSON the adapter does not know) is not a transcript: it is reported and not landed.
 */
function acceptor(runtime: string): (records: readonly { readonly kind: string }[]) => string | undefined {
  return (records) => (records.some((r) => r.kind !== "unknown") ? undefined : `not a ${runtime} transcript (no ${runtime} record in its first ${records.length} lines)`);
}


/**
 * The cross-line state of a line-based source (Codex, Gemini), carried in its cursor: restored at
 * the cursor's offset, saved with every window, so a pass reads only the new bytes. A cursor with
 * no saved state (saved before state was kept) is caught up once by re-reading the lines before it.
 */
class LineState {
  state: AdapterState;
  constructor(private readonly p: Planned) {
    this.state = adapterOf(p).initialState(p.src);
  }

  async restore(saved: string | undefined, offset: number): Promise<void> {
    this.state = adapterOf(this.p).initialState(this.p.src);
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
    adapterOf(this.p).parseLines(this.p.src, before, this.state);
  }

  save(offset: number): string | undefined {
    return JSON.stringify({ offset, state: this.state });
  }
}

/** Build the store's convert callback for one source: adapter → mask → canonical, and its carried state. */
function converter(ctx: PassContext, p: Planned, redactor: Redactor, framed: Framed | undefined): { convert: Convert; carry: LineState | WalSource | undefined; encode?: Encode } {
  if (p.framed) {
    if (!framed) throw new CollectorError("Internal", `${p.src.path}: a framed source without the WAL reader loaded`);
    const { WalSource, brocaRecords } = framed;
    const broca = p.src.runtime === "broca";
    const ws = new WalSource(p.src.path, broca ? (entries, st) => void brocaRecords(p.src, entries, st as BrocaState, Number.MAX_SAFE_INTEGER) : undefined);
    const convert: Convert = (lines) => {
      if (broca) return brocaRecords(p.src, lines.map((l) => l.value as WalLineValue), ws.adapter as BrocaState).map((r) => maskRecord(redactor, r));
      const st = adapterOf(p).initialState(p.src);
      return adapterOf(p).parseLines(p.src, lines.map((l) => ({ bytes: l.bytes, offset: l.offset, line: l.line })), st).map((r) => maskRecord(redactor, r));
    };
    return { convert, carry: ws };
  }
  // Adapters without cross-line state (Claude Code) carry nothing.
  const carry = Object.keys(adapterOf(p).initialState(p.src)).length > 0 ? new LineState(p) : undefined;
  let st = carry ? undefined : adapterOf(p).initialState(p.src);
  const local = (lines: readonly AdapterLine[]): CanonicalRecord[] => {
    const state = carry ? carry.state : (st ??= adapterOf(p).initialState(p.src));
    // The store's lines carry their text and JSON value: the adapter parses nothing again.
    return adapterOf(p).parseLines(p.src, lines, state).map((r) => maskRecord(redactor, r));
  };
  // Every line of a stateless adapter (it says so) converts on its own: its windows may go to the convert pool.
  if (carry || adapterOf(p).stateless !== true || ctx.jobs.jobs <= 1) return { convert: local, carry };
  const encode: Encode = async (text, at, cc) => {
    const pool = await poolFor(ctx, text.length);
    if (!pool) return undefined;
    const s = cc.source;
    return pool.encode(p.src, cc.sessionId, { path: s.path, source: s.source, stream: s.stream, kind: s.kind, runtime: s.runtime, adapter: s.adapter, adapterVersion: s.adapterVersion }, text, at);
  };
  return { convert: local, carry, encode };
}

/**
 * The pass's convert pool when it is ready, else undefined (the window is converted on the main
 * thread). It is started by the first window once the pass has converted POOL_THRESHOLD bytes (at
 * once when the jobs were given).
 */
async function poolFor(ctx: PassContext, bytes: number): Promise<ConvertPool | undefined> {
  ctx.converted += bytes;
  if (!ctx.pool && (ctx.jobs.forced || ctx.converted >= POOL_THRESHOLD)) {
    const { ConvertPool } = await loadPool();
    // A pass of one session lands its windows one after another on the main thread, which one
    // worker keeps fed: a second converted no faster and added its heap to the peak RSS.
    if (!ctx.pool) keepOldGenerationNearLive();
    ctx.pool ??= ConvertPool.start(ctx.changedSessions <= 1 ? 1 : ctx.jobs.jobs, ctx.root);
  }
  // Asked-for workers are waited for (their start-up is the price asked for); else windows go on
  // converting here until one is ready. A worker says it is ready in a message, which only a turn
  // of the event loop delivers: a pass that lands window after window without waiting on I/O (one
  // long session) yields one turn per window until then, or it never hears from its workers.
  if (ctx.pool && ctx.jobs.forced) await ctx.pool.whenReady();
  else if (ctx.pool && !ctx.pool.ready) await new Promise<void>((turn) => setImmediate(turn));
  return ctx.pool?.ready ? ctx.pool : undefined;
}

function snapshotConverter(p: Planned, redactor: Redactor): Convert {
  return (lines) => {
    const out: CanonicalRecord[] = [];
    for (const l of lines) for (const r of adapterOf(p).parseSnapshot(p.src, l.bytes)) out.push(maskRecord(redactor, r));
    return out;
  };
}


/**
 * Stop the pass's convert pool and count in the summary what it did. A pass closes it once the
 * last session it found changed has been read (its chain is yet to be published; a worker's heap no
 * longer sits beside the chain's in the peak RSS), or as it ends.
 */
export async function closePool(ctx: PassContext): Promise<void> {
  const pool = ctx.pool;
  if (!pool) return;
  delete ctx.pool;
  ctx.summary.convert_workers = Math.max(ctx.summary.convert_workers, pool.used);
  ctx.summary.convert_failed += pool.failed;
  await pool.close();
  step("collect:pool-closed");
}

/** A session's sources are read (landed, or given up): the pool closes after the pass's last. */
async function collected(ctx: PassContext): Promise<void> {
  if (++ctx.collectedSessions >= ctx.changedSessions) await closePool(ctx);
}

/**
 * One session's pass. False when the pass was interrupted in it (the caller stops); true otherwise,
 * with `ctx.done` called for a session that was taken (not for a locked or refused one).
 */
export async function passSession(ctx: PassContext, sessionId: string, sources: Planned[]): Promise<boolean> {
  const { root, absRoot, options, summary, passState, problem } = ctx;
  keepYoungGenerationSmall();
  if (passState.sessions.delete(sessionId)) ctx.changed();
  let s;
  try {
    s = await openSession(root, sessionId, { waitMs: options.waitMs ?? 0, maskUnknown: (text: string) => maskUnknownText(redactor(ctx))(text), ...(crashTesting ? { onStep: (n: string) => step(`store:${n}`) } : {}), logger: ctx.log, ...(options.maxDeltaBytes ? { maxDeltaBytes: options.maxDeltaBytes } : {}) });
  } catch (e) {
    if ((e as { code?: string }).code === "Locked") {
      summary.locked.push(sessionId);
      await collected(ctx);
      return true;
    }
    // A session id the store refuses (not one path segment), for instance: every source of it is reported.
    if (rootIo(e, absRoot) !== undefined) throw e;
    for (const p of sources) problem(p.src.path, reasonOf(e, p.src.path));
    await collected(ctx);
    return true;
  }
  let published = 0;
  // The session's mark for pass.state: set only when every source settled and index and chain are current.
  let settled = true;
  const marks: PassStateSource[] = [];
  let seq = 0;
  try {
    const framed = sources.some((p) => p.framed) ? await loadFramed() : undefined;
    const pass = s.beginPass();
    for (const p of sources.sort((a, b) => (a.src.path < b.src.path ? -1 : 1))) {
      if (ctx.stop()) break;
      try {
        let out;
        if (p.src.mode === "snapshot") out = await pass.collectSnapshot(storeSource(p, undefined), snapshotConverter(p, redactor(ctx)));
        else {
          const { convert, carry, encode } = converter(ctx, p, redactor(ctx), framed);
          out = await pass.collectAppend(storeSource(p, carry, encode), convert);
        }
        summary.bytes_read += out.bytesRead;
        if ((out.status === "problem" || out.status === "rejected") && out.reason !== undefined) problem(p.src.path, out.reason);
        if (out.status === "conflict" && out.reason !== undefined) summary.problems.push({ path: p.src.path, reason: `conflict: ${out.reason}` });
        if (SETTLED.has(out.status) && out.cursor !== undefined) {
          marks.push({ source: cursorSource(p.src.runtime, p.src.rel), cursor: out.cursor, mode: p.src.mode, ...(p.src.mode === "snapshot" ? { size: p.src.size, mtimeMs: p.src.mtimeMs } : {}) });
        } else settled = false;
      } catch (e) {
        settled = false;
        contain(ctx, e, p.src.path);
      }
    }
    try {
      // An interrupted session's other sources were not read: nothing of it is pruned.
      if (!summary.interrupted) pass.pruneUnseen((source) => ctx.resolve(sessionId, source));
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
      // Still under the lock: each mark takes its cursor as the pass left it, so the next pass checks it by a stat.
      if (settled) for (let i = 0; i < marks.length; i++) marks[i] = confirmSource(root, sessionId, marks[i]!, seq);
    } catch (e) {
      settled = false;
      contain(ctx, e, s.dir);
    }
  } finally {
    s.close();
    // A one-shot pass is done with the session's index: the dedupe keys it kept (for a next update here)
    // go before the chain is parsed, which reads the index by range. A watcher keeps them.
    if (!options.cache) releaseIndex(root, sessionId);
  }
  await collected(ctx);
  if (summary.interrupted) return false; // its landed files are indexed; the next pass reads the rest and publishes
  if (options.parse !== false) {
    try {
      const pr = await parseChain(root, sessionId, crashTesting ? { onStep: (n) => step(`chain:${n}`) } : {});
      if (pr.published) published++;
    } catch (e) {
      settled = false;
      contain(ctx, e, join(root, "_conversations", sessionId));
    }
  } else settled = false;
  // A one-shot pass is done with the session: what this process kept of its chain (for a next pass
  // here) goes too, so memory follows the sessions in hand. A watcher keeps it.
  if (!options.cache) releaseFold(root, sessionId);
  summary.rounds += published;
  // A session none of whose sources is a transcript (refused, empty) left no directory: not counted.
  if (existsSync(join(root, sessionId))) {
    summary.sessions++;
    if (settled && marks.length === sources.length) {
      passState.sessions.set(sessionId, { seq, chain: seq > 0 && existsSync(join(root, "_conversations", sessionId)), sources: marks });
      ctx.changed();
    }
  }
  ctx.done(sources);
  return true;
}

/**
 * Sessions discovery no longer finds: their cursors become source_gone (once per rediscovery).
 * Returns the cursors moved.
 */
export async function checkLost(ctx: PassContext, found: ReadonlySet<string>): Promise<number> {
  const lost = await checkLostSessions(ctx.root, { found, resolve: (sid, source) => ctx.resolve(sid, source), tracker: ctx.tracker });
  return lost.gone;
}

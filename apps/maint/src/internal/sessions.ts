// `digest` and `seal`: per (dt, fleet) partition, under that partition's lease.
import { digestKey, encodeDigest, encodeSealed, sealedKey, type ObjectStore } from "@lake/layout";
import { readSegment, type FleetRow } from "@lake/segments";
import { DuckDBInstance } from "@duckdb/node-api";
import { sqlString } from "@lake/segments";
import { withLease, scratch, testHook, type MaintContext } from "./context.js";
import { computeDigest } from "./digest.js";
import { MaintError, isMaintError } from "./errors.js";
import { downloadSegments, readSealed, scanSessions, sealedMismatch, sealedOnly, sessionId, type SessionDir } from "./scan.js";

/** Partition filter of the session commands. */
export interface PartitionFilter {
  readonly dt?: string | undefined;
  readonly fleet?: string | undefined;
}

/** What a per-partition run did. */
export interface PartitionReport {
  readonly dt: string;
  readonly fleet: string;
  /** done: processed under the lease; held: another run holds the lease (nothing written). */
  readonly status: "done" | "held";
  readonly epoch?: number;
  readonly held_by?: string;
  readonly written: string[];
  readonly skipped: { key: string; reason: string }[];
}

/** What `seal` did, and what it left and why: the counts its "nothing to seal" line gives. */
export interface SealRun {
  readonly partitions: PartitionReport[];
  /** Session directories looked at. */
  readonly sessions: number;
  /** Of them, sealed already (by a collector or an earlier seal). */
  readonly already_sealed: number;
  /** Unsealed ones whose newest segment is younger than `idle_seconds`: left alone. */
  readonly not_idle: number;
  readonly idle_seconds: number;
}

/** What `digest` did, and the counts its "nothing to write" line gives. */
export interface DigestRun {
  readonly partitions: PartitionReport[];
  readonly sessions: number;
  /** Sealed sessions that had digest.json already. */
  readonly with_digest: number;
  /** Sessions not sealed yet (digest waits for the seal). */
  readonly unsealed: number;
}

/** Group session dirs by (dt, fleet). */
export function byPartition(sessions: readonly SessionDir[]): Map<string, { dt: string; fleet: string; sessions: SessionDir[] }> {
  const m = new Map<string, { dt: string; fleet: string; sessions: SessionDir[] }>();
  for (const s of sessions) {
    const k = `dt=${s.part.dt}/fleet=${s.part.fleet}`;
    let g = m.get(k);
    if (!g) m.set(k, (g = { dt: s.part.dt, fleet: s.part.fleet, sessions: [] }));
    g.sessions.push(s);
  }
  return m;
}

/** Read all rows of a session's segments (downloaded into `dir`), in segment order. */
export async function readSessionRows(store: ObjectStore, d: SessionDir, dir: string): Promise<FleetRow[]> {
  const paths = await downloadSegments(store, d, dir, "s");
  const rows: FleetRow[] = [];
  for (let i = 0; i < paths.length; i++) {
    try {
      rows.push(...(await readSegment(paths[i]!, "bronze", { runtime: d.part.runtime, agent: d.part.agent })));
    } catch (e) {
      throw new MaintError("Corrupt", `${d.segments[i]!.key}: unreadable segment (${e instanceof Error ? e.message : String(e)})`, { key: d.segments[i]!.key, store: store.url }, { cause: e });
    }
  }
  return rows;
}

/**
 * `digest`: write digest.json (create-only) for every sealed session that has none, computed from
 * that session's own sealed segments only.
 */
export async function runDigest(ctx: MaintContext, filter: PartitionFilter = {}): Promise<DigestRun> {
  const scan = await scanSessions(ctx.store, filter);
  const out: PartitionReport[] = [];
  const run: DigestRun = { partitions: out, sessions: scan.sessions.length, with_digest: scan.sessions.filter((s) => s.sealed && s.digest).length, unsealed: scan.sessions.filter((s) => !s.sealed).length };
  for (const g of byPartition(scan.sessions).values()) {
    if (ctx.shouldStop()) break;
    const todo = g.sessions.filter((s) => s.sealed && !s.digest);
    if (todo.length === 0) continue;
    const r = await withLease(ctx, `digest/dt=${g.dt}/fleet=${g.fleet}`, async (lease) => {
      const written: string[] = [];
      const skipped: { key: string; reason: string }[] = [];
      for (const s of todo) {
        const key = digestKey(s.part);
        const sealed = await readSealed(ctx.store, s.part);
        const bad = sealedMismatch(s, sealed);
        if (bad !== undefined) {
          skipped.push({ key: sealedKey(s.part), reason: bad });
          continue;
        }
        const tmp = scratch("digest");
        try {
          // The sealed segments only: a late one (past _SEALED's count) is not in the digest.
          const rows = await readSessionRows(ctx.store, sealedOnly(s, sealed), tmp.dir);
          const body = encodeDigest(computeDigest(s.part, sealed.segments, rows));
          await lease.check();
          const w = await ctx.store.putIfAbsent(key, body);
          if (w.status === "written") written.push(key);
          else if (w.status !== "conflict") throw new MaintError("Store", `${key}: write outcome unknown`, { key, store: ctx.store.url });
        } catch (e) {
          // A damaged segment (its content hash does not match) stops this session only.
          if (!isMaintError(e, "Corrupt")) throw e;
          skipped.push({ key: e.data.key ?? key, reason: e.message });
        } finally {
          tmp.done();
        }
      }
      return { written, skipped, epoch: lease.epoch };
    });
    out.push(
      r.held
        ? { dt: g.dt, fleet: g.fleet, status: "done", epoch: r.value.epoch, written: r.value.written, skipped: r.value.skipped }
        : { dt: g.dt, fleet: g.fleet, status: "held", held_by: r.owner, written: [], skipped: [] },
    );
  }
  return run;
}

/** Total rows of local Parquet files (from their footers). */
export async function parquetRows(paths: readonly string[]): Promise<number> {
  if (paths.length === 0) return 0;
  const db = await DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  try {
    const r = await conn.runAndReadAll(`SELECT coalesce(sum(num_rows), 0)::BIGINT AS n FROM parquet_file_metadata([${paths.map(sqlString).join(", ")}])`);
    return Number(r.getRowObjectsJS()[0]!.n);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/**
 * `seal`: a fallback for sessions whose collector never sealed them. A session directory without
 * `_SEALED` whose segments are contiguous from seg-000000 and whose newest segment is older than
 * `idleSeconds` gets `_SEALED` (create-only) with the segment and row counts and `"sealed_by": "lake-maint"`.
 */
export async function runSeal(ctx: MaintContext, idleSeconds: number, filter: PartitionFilter = {}): Promise<SealRun> {
  const scan = await scanSessions(ctx.store, filter);
  const out: PartitionReport[] = [];
  const now = ctx.now();
  const idle = (s: SessionDir) => now - Math.max(...s.segments.map((x) => x.lastModified?.getTime() ?? Number.POSITIVE_INFINITY)) >= idleSeconds * 1000;
  const open = scan.sessions.filter((s) => !s.sealed && s.segments.length > 0);
  const run: SealRun = { partitions: out, sessions: scan.sessions.length, already_sealed: scan.sessions.filter((s) => s.sealed).length, not_idle: open.filter((s) => !idle(s)).length, idle_seconds: idleSeconds };
  for (const g of byPartition(scan.sessions).values()) {
    if (ctx.shouldStop()) break;
    // A session whose newest segment is younger than idleSeconds may still be appended to.
    const todo = g.sessions.filter((s) => !s.sealed && s.segments.length > 0 && idle(s));
    if (todo.length === 0) continue;
    const r = await withLease(ctx, `seal/dt=${g.dt}/fleet=${g.fleet}`, async (lease) => {
      const written: string[] = [];
      const skipped: { key: string; reason: string }[] = [];
      for (const s of todo) {
        const key = sealedKey(s.part);
        const gap = s.segments.findIndex((x, i) => x.seq !== i);
        if (gap >= 0) {
          skipped.push({ key, reason: `segment seq ${gap} missing` });
          continue;
        }
        const tmp = scratch("seal");
        try {
          const rows = await parquetRows(await downloadSegments(ctx.store, s, tmp.dir, "s"));
          await testHook(ctx, "seal:before-write");
          await lease.check();
          const w = await ctx.store.putIfAbsent(key, encodeSealed({ sealed_at: new Date(ctx.now()).toISOString(), segments: s.segments.length, rows, sealed_by: "lake-maint" }));
          if (w.status === "written") written.push(key);
          else if (w.status === "unknown") skipped.push({ key, reason: "write outcome unknown" });
        } catch (e) {
          // A damaged segment (its content hash does not match) is not sealed over; the rest go on.
          if (!isMaintError(e, "Corrupt")) throw e;
          skipped.push({ key: e.data.key ?? key, reason: e.message });
        } finally {
          tmp.done();
        }
      }
      return { written, skipped, epoch: lease.epoch };
    });
    out.push(
      r.held
        ? { dt: g.dt, fleet: g.fleet, status: "done", epoch: r.value.epoch, written: r.value.written, skipped: r.value.skipped }
        : { dt: g.dt, fleet: g.fleet, status: "held", held_by: r.owner, written: [], skipped: [] },
    );
  }
  return run;
}

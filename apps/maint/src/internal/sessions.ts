// `digest` and `seal`: per (dt, fleet) partition, under that partition's lease.
import { digestKey, encodeDigest, encodeSealed, sealedKey, type ObjectStore } from "@lake/layout";
import { readSegment, type FleetRow } from "@lake/segments";
import { DuckDBInstance } from "@duckdb/node-api";
import { sqlString } from "@lake/segments";
import { withLease, scratch, testHook, type HeldLease, type MaintContext } from "./context.js";
import { computeDigest } from "./digest.js";
import { MaintError, isMaintError } from "./errors.js";
import { downloadSegments, readSealed, scanSessions, sealedMismatch, sealedOnly, type SessionDir } from "./scan.js";

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
      throw new MaintError("Corrupt", `${d.segments[i]!.key}: unreadable segment (${e instanceof Error ? e.message : String(e)})`, { data: { key: d.segments[i]!.key, store: store.url }, cause: e });
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
  const partitions = await perPartition(ctx, "digest", scan.sessions, (s) => s.sealed && !s.digest, (s) => digestKey(s.part), async (s, lease, dir) => {
    const key = digestKey(s.part);
    const sealed = await readSealed(ctx.store, s.part);
    const bad = sealedMismatch(s, sealed);
    if (bad !== undefined) return { skipped: { key: sealedKey(s.part), reason: bad } };
    // The sealed segments only: a late one (past _SEALED's count) is not in the digest.
    const rows = await readSessionRows(ctx.store, sealedOnly(s, sealed), dir);
    const body = encodeDigest(computeDigest(s.part, sealed.segments, rows));
    await lease.check();
    const w = await ctx.store.putIfAbsent(key, body);
    if (w.status === "written") return { written: key };
    if (w.status !== "conflict") throw new MaintError("Store", `${key}: write outcome unknown`, { data: { key, store: ctx.store.url } });
    return undefined;
  });
  return { partitions, sessions: scan.sessions.length, with_digest: scan.sessions.filter((s) => s.sealed && s.digest).length, unsealed: scan.sessions.filter((s) => !s.sealed).length };
}

/** What one session's step did: wrote a key, skipped one (with the reason), or nothing. */
type SessionOutcome = { readonly written: string } | { readonly skipped: { key: string; reason: string } } | undefined;

/**
 * The per-partition loop `digest` and `seal` share: for each (dt, fleet) with sessions to do, take
 * the partition's `kind` lease and run `one` on each session in a scratch directory. A damaged
 * segment (a `Corrupt` error) stops that session only: it is reported as skipped, the rest go on.
 */
async function perPartition(
  ctx: MaintContext,
  kind: "digest" | "seal",
  sessions: readonly SessionDir[],
  wanted: (s: SessionDir) => boolean,
  keyOf: (s: SessionDir) => string,
  one: (s: SessionDir, lease: HeldLease, dir: string) => Promise<SessionOutcome>,
): Promise<PartitionReport[]> {
  const out: PartitionReport[] = [];
  for (const g of byPartition(sessions).values()) {
    if (ctx.shouldStop()) break;
    const todo = g.sessions.filter(wanted);
    if (todo.length === 0) continue;
    const r = await withLease(ctx, `${kind}/dt=${g.dt}/fleet=${g.fleet}`, async (lease) => {
      const written: string[] = [];
      const skipped: { key: string; reason: string }[] = [];
      for (const s of todo) {
        const tmp = scratch(kind);
        try {
          const o = await one(s, lease, tmp.dir);
          if (o && "written" in o) written.push(o.written);
          else if (o) skipped.push(o.skipped);
        } catch (e) {
          if (!isMaintError(e, "Corrupt")) throw e;
          skipped.push({ key: e.data.key ?? keyOf(s), reason: e.message });
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
  return out;
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
  const now = ctx.now();
  const idle = (s: SessionDir) => now - Math.max(...s.segments.map((x) => x.lastModified?.getTime() ?? Number.POSITIVE_INFINITY)) >= idleSeconds * 1000;
  const open = scan.sessions.filter((s) => !s.sealed && s.segments.length > 0);
  // A session whose newest segment is younger than idleSeconds may still be appended to.
  const partitions = await perPartition(ctx, "seal", scan.sessions, (s) => !s.sealed && s.segments.length > 0 && idle(s), (s) => sealedKey(s.part), async (s, lease, dir) => {
    const key = sealedKey(s.part);
    const gap = s.segments.findIndex((x, i) => x.seq !== i);
    if (gap >= 0) return { skipped: { key, reason: `segment seq ${gap} missing` } };
    // A damaged segment (its content hash does not match) is not sealed over (perPartition reports it).
    const rows = await parquetRows(await downloadSegments(ctx.store, s, dir, "s"));
    await testHook(ctx, "seal:before-write");
    await lease.check();
    const w = await ctx.store.putIfAbsent(key, encodeSealed({ sealed_at: new Date(ctx.now()).toISOString(), segments: s.segments.length, rows, sealed_by: "lake-maint" }));
    if (w.status === "written") return { written: key };
    if (w.status === "unknown") return { skipped: { key, reason: "write outcome unknown" } };
    return undefined;
  });
  return { partitions, sessions: scan.sessions.length, already_sealed: scan.sessions.filter((s) => s.sealed).length, not_idle: open.filter((s) => !idle(s)).length, idle_seconds: idleSeconds };
}

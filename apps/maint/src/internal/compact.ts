// `compact`: per (dt, fleet) partition, the sealed sessions' bronze segments → one deduplicated
// generation of compacted parts under gen=<hash of the sealed-session set>/, then _COMPACTED swapped
// by compare-and-swap to name it. Bronze is only read; a live generation's files are never written.
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { COMPACTED_COLUMNS, duckdbType } from "@lake/events";
import {
  COMPACTED_FORMAT,
  casUpdate,
  compactedMarkerKey,
  compactedPartKey,
  compactedUsageKey,
  compactedValue,
  compactionGen,
  decodeCompacted,
  sealedKey,
  type CompactedMarker,
  type CompactedPart,
  type CompactedSession,
  type CompactedUsage,
  type ObjectStore,
} from "@lake/layout";
import { averageRowBytes, copyParquet, parquetSource, rowGroupRowsFor, sqlString, writeUsageRollup } from "@lake/segments";
import { scratch, testHook, withLease, type MaintContext } from "./context.js";
import { MaintError, isMaintError, reasonOf } from "./errors.js";
import { decoded, downloadSegments, lateSegments, readSealed, scanSessions, sealedMismatch, type SessionDir } from "./scan.js";
import { byPartition, parquetRows, type PartitionFilter } from "./sessions.js";

/** Version of the _COMPACTED format and the compaction rules (@lake/layout's COMPACTED_FORMAT). */
export const COMPACTION_FORMAT = COMPACTED_FORMAT;

/** Default rows per compacted part. */
export const DEFAULT_PART_ROWS = 1_000_000;

export type { CompactedMarker, CompactedPart, CompactedSession, CompactedUsage };

/** The generation name of a sealed-session set (@lake/layout's compactionGen). */
export const generationOf = compactionGen;

/** Read and decode a _COMPACTED marker (@lake/layout's strict decoder); Corrupt when it is not one. */
export async function readMarker(store: ObjectStore, dt: string, fleet: string): Promise<{ value: CompactedMarker; etag: string } | undefined> {
  const key = compactedMarkerKey({ dt, fleet });
  const r = await store.get(key);
  if (r === undefined) return undefined;
  return { value: decoded(store, () => decodeCompacted(key, r.body)), etag: r.etag };
}

/** What compact did to one partition. */
export interface CompactReport {
  readonly dt: string;
  readonly fleet: string;
  /**
   * compacted: a new generation is live; unchanged: the marker already names this set; held: another
   * run holds the lease; empty: no sealed session; skipped: its _COMPACTED does not decode (left as it
   * is, named in `skipped`; readers read the partition from bronze).
   */
  readonly status: "compacted" | "unchanged" | "held" | "empty" | "skipped";
  readonly gen?: string;
  readonly previous_gen?: string | undefined;
  readonly rows?: number;
  readonly source_rows?: number;
  readonly parts?: number;
  readonly epoch?: number;
  readonly held_by?: string;
  readonly skipped: { key: string; reason: string }[];
  /** With status empty: the partition's session directories not sealed yet (compaction waits for their seal). */
  readonly unsealed?: number;
  /** Late segments (numbered past their session's `_SEALED` count) this partition's generation includes; absent when none. */
  readonly late?: string[];
}

/** Options of {@link runCompact}. */
export interface CompactOptions extends PartitionFilter, CompactResources {
  readonly partRows?: number;
  /** zstd level of the part files (1-22; default: DuckDB's, 3). Higher is smaller and much slower. */
  readonly zstdLevel?: number;
}

/** `compact` over every (dt, fleet) partition (or the filtered ones). */
export async function runCompact(ctx: MaintContext, options: CompactOptions = {}): Promise<CompactReport[]> {
  const scan = await scanSessions(ctx.store, options);
  const out: CompactReport[] = [];
  for (const g of byPartition(scan.sessions).values()) {
    if (ctx.shouldStop()) break;
    try {
      out.push(await compactPartition(ctx, g.dt, g.fleet, g.sessions, options.partRows ?? DEFAULT_PART_ROWS, options.zstdLevel, options));
    } catch (e) {
      // A damaged marker affects its partition only; the other partitions are compacted.
      const key = compactedMarkerKey({ dt: g.dt, fleet: g.fleet });
      if (!isMaintError(e, "Corrupt") || e.data.key !== key) throw e;
      out.push({ dt: g.dt, fleet: g.fleet, status: "skipped", skipped: [{ key, reason: `${reasonOf(e.message, key)}; partition not compacted (fix or delete the marker)` }] });
    }
  }
  return out;
}

async function sealedSet(ctx: MaintContext, sessions: readonly SessionDir[]): Promise<{ sessions: { dir: SessionDir; meta: CompactedSession }[]; skipped: { key: string; reason: string }[]; late: string[] }> {
  const ok: { dir: SessionDir; meta: CompactedSession }[] = [];
  const skipped: { key: string; reason: string }[] = [];
  const late: string[] = [];
  for (const s of sessions) {
    if (!s.sealed) continue;
    let sealed;
    try {
      sealed = await readSealed(ctx.store, s.part);
    } catch (e) {
      skipped.push({ key: sealedKey(s.part), reason: e instanceof Error ? e.message : String(e) });
      continue;
    }
    const bad = sealedMismatch(s, sealed);
    if (bad !== undefined) {
      skipped.push({ key: sealedKey(s.part), reason: bad });
      continue;
    }
    // Late segments (past _SEALED's count) are compacted with their session; their rows are
    // counted from their footers, so the generation's hash changes when one arrives.
    const extra = lateSegments(s, sealed);
    let rows = sealed.rows;
    if (extra.length > 0) {
      const tmp = scratch("late");
      try {
        rows += await parquetRows(await downloadSegments(ctx.store, { ...s, segments: extra }, tmp.dir, "l"));
      } catch (e) {
        // A damaged late segment leaves its session out, like any damaged segment.
        if (!isMaintError(e, "Corrupt")) throw e;
        skipped.push({ key: e.data.key ?? sealedKey(s.part), reason: `${e.message}; session left out of the generation` });
        continue;
      } finally {
        tmp.done();
      }
      for (const x of extra) late.push(x.key);
    }
    ok.push({ dir: s, meta: { runtime: s.part.runtime, agent: s.part.agent, session: s.part.session, segments: s.segments.length, rows } });
  }
  return { sessions: ok, skipped, late };
}

async function compactPartition(ctx: MaintContext, dt: string, fleet: string, sessions: readonly SessionDir[], partRows: number, zstdLevel: number | undefined, resources: CompactResources): Promise<CompactReport> {
  const set = await sealedSet(ctx, sessions);
  let r = await compactSet(ctx, dt, fleet, set, partRows, zstdLevel, resources);
  if (r.status === "empty") r = { ...r, unsealed: sessions.filter((s) => !s.sealed).length };
  return set.late.length > 0 ? { ...r, late: set.late } : r;
}

async function compactSet(ctx: MaintContext, dt: string, fleet: string, set: Awaited<ReturnType<typeof sealedSet>>, partRows: number, zstdLevel: number | undefined, resources: CompactResources): Promise<CompactReport> {
  if (set.sessions.length === 0) return { dt, fleet, status: "empty", skipped: set.skipped };
  let gen = generationOf(dt, fleet, set.sessions.map((s) => s.meta));
  const before = await readMarker(ctx.store, dt, fleet);
  if (before?.value.gen === gen) return { dt, fleet, status: "unchanged", gen, skipped: set.skipped };
  const r = await withLease(ctx, `compact/dt=${dt}/fleet=${fleet}`, async (lease): Promise<CompactReport> => {
    // Re-read under the lease: another run may have compacted this set meanwhile.
    const cur = await readMarker(ctx.store, dt, fleet);
    if (cur?.value.gen === gen) return { dt, fleet, status: "unchanged", gen, skipped: set.skipped };
    const prevGen = cur?.value.gen;
    const tmp = scratch("compact");
    try {
      // Every segment is checked against its content hash as it is downloaded: a session with a
      // damaged segment is left out of the generation (named in `skipped`; its bronze stays the
      // only copy, which readers check too), the partition's other sessions go on.
      const skipped = [...set.skipped];
      const ok: { dir: SessionDir; meta: CompactedSession; paths: string[] }[] = [];
      for (const [i, s] of set.sessions.entries()) {
        try {
          ok.push({ ...s, paths: await downloadSegments(ctx.store, s.dir, tmp.dir, `s${i}`) });
        } catch (e) {
          if (!isMaintError(e, "Corrupt")) throw e;
          skipped.push({ key: e.data.key ?? sealedKey(s.dir.part), reason: `${e.message}; session left out of the generation` });
        }
      }
      if (ok.length === 0) return { dt, fleet, status: "empty", skipped };
      if (ok.length < set.sessions.length) {
        gen = generationOf(dt, fleet, ok.map((s) => s.meta));
        if (cur?.value.gen === gen) return { dt, fleet, status: "unchanged", gen, skipped };
      }
      const built = await buildGeneration(dt, fleet, gen, ok, tmp.dir, partRows, zstdLevel, resources);
      const parts: CompactedPart[] = [];
      for (const p of built.parts) {
        // gen != the live generation (checked above, under the lease): these keys are not live.
        await lease.check();
        const w = await ctx.store.upload(p.key, { path: p.path });
        if (w.status !== "written") throw new MaintError("Store", `${p.key}: upload did not complete (${w.status})`, { data: { key: p.key, store: ctx.store.url } });
        parts.push({ key: p.key, rows: p.rows, bytes: p.bytes, sha256: p.sha256 });
      }
      for (const f of [built.usage.keys, built.usage]) {
        await lease.check();
        const u = await ctx.store.upload(f.key, { path: f.path });
        if (u.status !== "written") throw new MaintError("Store", `${f.key}: upload did not complete (${u.status})`, { data: { key: f.key, store: ctx.store.url } });
      }
      const { path: _json, ...usageJson } = built.usage;
      const { path: _keys, ...usageKeys } = built.usage.keys;
      const usage: CompactedUsage = { ...usageJson, keys: usageKeys };
      await testHook(ctx, "compact:after-parts");
      const sourceRows = ok.reduce((n, s) => n + s.meta.rows, 0);
      const marker: CompactedMarker = {
        format: COMPACTION_FORMAT,
        dt,
        fleet,
        gen,
        sessions: ok.map((s) => s.meta),
        parts,
        usage,
        rows: built.rows,
        source_rows: sourceRows,
        epoch: lease.epoch,
        lease_owner: ctx.owner,
        compacted_at: new Date(ctx.now()).toISOString(),
      };
      await lease.check();
      const key = compactedMarkerKey({ dt, fleet });
      const swapped = await casUpdate<CompactedMarker & Record<string, unknown>>(ctx.store, key, (m) => {
        if ((m?.gen ?? undefined) !== prevGen) return undefined; // changed under us: refuse
        if (m !== undefined && typeof m.epoch === "number" && m.epoch > lease.epoch) return undefined; // a newer lease holder wrote it
        return compactedValue(marker);
      });
      if (!swapped.changed) {
        throw new MaintError("Refused", `${key}: changed by another writer (now gen ${String(swapped.value?.gen)}, epoch ${String(swapped.value?.epoch)}); generation ${gen} not published`, { data: { key, store: ctx.store.url } });
      }
      return { dt, fleet, status: "compacted", gen, previous_gen: prevGen, rows: built.rows, source_rows: sourceRows, parts: parts.length, epoch: lease.epoch, skipped };
    } finally {
      tmp.done();
    }
  });
  if (!r.held) return { dt, fleet, status: "held", held_by: r.owner, skipped: set.skipped };
  return r.value;
}

/** How compaction reads segments: each row's file (`file_index`) and row number, columns by name. */
export const READ_OPTIONS = "file_row_number = true, hive_partitioning = false, union_by_name = true";

/** Runs of consecutive row numbers `[from, to]` of one file, ascending. */
export type RowRuns = readonly (readonly [from: number, to: number])[];

/**
 * The filter that leaves out the dropped rows of files `a`..`b` (`_ord`, `rn` of a part's rows, the
 * part starting at row `rnA` of file `a` and ending at row `rnB` of file `b`): for each file that has
 * some, its runs of dropped rows — a push that sent rows again drops one run, however long — so the
 * rows are filtered in the order they are read (a join on a table of dropped rows does not keep it).
 * Empty when none of them has one.
 */
function notDropped(dropped: ReadonlyMap<number, RowRuns>, a: number, rnA: number, b: number, rnB: number): string {
  const cases: string[] = [];
  for (let f = a; f <= b; f++) {
    const runs = (dropped.get(f) ?? []).filter(([from, to]) => (f !== a || to >= rnA) && (f !== b || from <= rnB));
    if (runs.length > 0) cases.push(`WHEN ${f} THEN ${runs.map(([from, to]) => (from === to ? `rn = ${from}` : `rn BETWEEN ${from} AND ${to}`)).join(" OR ")}`);
  }
  return cases.length === 0 ? "" : ` AND NOT (CASE _ord ${cases.join(" ")} ELSE false END)`;
}

/**
 * The SELECT a part is copied from: the rows of `files[a..b]` from row `rnA` of file `a` to row `rnB`
 * of file `b`, less the `dropped` runs, in the order DuckDB reads them (no ORDER BY, no join: see
 * buildGeneration), with runtime and agent from each file's path. `files` is the generation's whole
 * list, in segment order.
 */
export function partSelect(files: readonly { path: string; runtime: string; agent: string }[], a: number, rnA: number, b: number, rnB: number, dropped: ReadonlyMap<number, RowRuns>): string {
  const cases = (col: "runtime" | "agent") => `CASE CAST(file_index AS INTEGER) ${files.slice(a, b + 1).map((f, i) => `WHEN ${i} THEN ${sqlString(f[col])}`).join(" ")} END`;
  const src =
    `SELECT s.* EXCLUDE (file_index, file_row_number), ${cases("runtime")} AS runtime, ${cases("agent")} AS agent, CAST(file_index AS INTEGER) + ${a} AS _ord, file_row_number AS rn ` +
    `FROM ${parquetSource(files.slice(a, b + 1).map((f) => f.path), READ_OPTIONS, ["file_index"])} s`;
  const range = `(_ord > ${a} OR rn >= ${rnA}) AND (_ord < ${b} OR rn <= ${rnB})`;
  return `SELECT ${COLS} FROM (${src}) x WHERE ${range}${notDropped(dropped, a, rnA, b, rnB)}`;
}

/** Casts every column to its COMPACTED_COLUMNS type, in that order. */
const COLS = COMPACTED_COLUMNS.map((c) => `CAST("${c.name}" AS ${duckdbType(c)}) AS "${c.name}"`).join(", ");

/** Default DuckDB memory limit of a compaction (MiB): peak RSS stays under 1 GiB on a small machine. */
export const DEFAULT_MEMORY_LIMIT_MB = 384;

/** Default DuckDB threads of a compaction: the machine's cores, at most 2. */
export function defaultThreads(): number {
  return Math.max(1, Math.min(2, availableParallelism()));
}

/** DuckDB settings of one compaction (what runs it, not what it writes). */
export interface CompactResources {
  /** DuckDB `memory_limit` in MiB (default DEFAULT_MEMORY_LIMIT_MB); past it DuckDB spills to the scratch directory. */
  readonly memoryLimitMb?: number | undefined;
  /** DuckDB `threads` (default defaultThreads()). */
  readonly threads?: number | undefined;
}

/**
 * Build a generation's part files locally from the sessions' downloaded, checked segments
 * (downloadSegments; runtime and agent from their paths become columns), keep the first row per (session_id, content_hash) in segment order — rows
 * whose content_hash is "" (no content) are all kept — and write parts of `partRows` rows in that order,
 * then the usage rollup of those parts (countUsage over their rows, read as a reader reads them).
 *
 * Memory is bounded whatever the partition's size: DuckDB runs under `memory_limit` with its
 * database and spill files in `dir`; the dedupe reads only (file, row, session_id, content_hash),
 * and each part is copied straight from the segments that hold its rows.
 */
export async function buildGeneration(
  dt: string,
  fleet: string,
  gen: string,
  sessions: readonly { readonly dir: SessionDir; readonly paths: readonly string[] }[],
  dir: string,
  partRows: number,
  zstdLevel?: number,
  resources: CompactResources = {},
): Promise<{
  rows: number;
  parts: { key: string; path: string; rows: number; bytes: number; sha256: string }[];
  usage: { key: string; path: string; bytes: number; sha256: string; rows: number; keys: { key: string; path: string; bytes: number; sha256: string; count: number } };
}> {
  const files: { path: string; runtime: string; agent: string }[] = [];
  for (const { dir: s, paths } of sessions) for (const p of paths) files.push({ path: p, runtime: s.part.runtime, agent: s.part.agent });
  const mem = resources.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB;
  const db = await DuckDBInstance.create(join(dir, "compact.duckdb"), {
    temp_directory: join(dir, "duckdb.tmp"),
    memory_limit: `${mem}MiB`,
    threads: String(resources.threads ?? defaultThreads()),
    preserve_insertion_order: "false",
  });
  const conn = await db.connect();
  const label = `sessions/dt=${dt}/fleet=${fleet}`;
  const read = async (sql: string): Promise<Record<string, unknown>[]> => (await conn.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
  let built: { total: number; parts: { key: string; path: string; rows: number; bytes: number; sha256: string }[] };
  try {
    // A file's order is its index in `files` (segment order); runtime and agent come from its path.
    // Every row's rank in its (session_id, content_hash) group, from the narrow columns only; the
    // rows kept (rank 1) get their place in the generation (_o); the others are copies, dropped.
    try {
      await conn.run(
        `CREATE TABLE ranked AS SELECT CAST(file_index AS INTEGER) AS _ord, file_row_number AS rn, row_number() OVER (PARTITION BY session_id, CASE WHEN content_hash = '' THEN '#' || file_index || ':' || file_row_number ELSE content_hash END ORDER BY file_index, file_row_number) AS _rn ` +
          `FROM read_parquet([${files.map((f) => sqlString(f.path)).join(", ")}], ${READ_OPTIONS})`,
      );
    } catch (e) {
      throw new MaintError("Corrupt", `${label}: unreadable segment (${e instanceof Error ? e.message : String(e)})`, { cause: e });
    }
    await conn.run(`CREATE TABLE keep AS SELECT _ord, rn, row_number() OVER (ORDER BY _ord, rn) - 1 AS _o FROM ranked WHERE _rn = 1`);
    // The rows dropped (copies of rows kept), as each file's runs of consecutive row numbers.
    const dropped = new Map<number, [number, number][]>();
    for (const d of await read(
      `SELECT _ord, min(rn)::BIGINT AS lo, max(rn)::BIGINT AS hi FROM (SELECT _ord, rn, rn - row_number() OVER (PARTITION BY _ord ORDER BY rn) AS g FROM ranked WHERE _rn > 1) GROUP BY _ord, g ORDER BY _ord, lo`,
    )) {
      const runs = dropped.get(Number(d._ord)) ?? [];
      runs.push([Number(d.lo), Number(d.hi)]);
      dropped.set(Number(d._ord), runs);
    }
    await conn.run(`DROP TABLE ranked`);
    const total = Number((await read(`SELECT count(*)::BIGINT AS n FROM keep`))[0]!.n);
    const parts: { key: string; path: string; rows: number; bytes: number; sha256: string }[] = [];
    const nParts = Math.max(1, Math.ceil(total / partRows));
    // A row group is written from memory, whole: sized from the rows' size to fit under memory_limit.
    const rowGroupRows = rowGroupRowsFor(await averageRowBytes(conn, files.map((f) => f.path)), mem * 1024 * 1024);
    // A part's rows are written in the order they are read — its files in segment order, each
    // file's rows in order — which DuckDB keeps for a scan, its WHERE filters and projections, a
    // UNION ALL (parquetSource's) and COPY (https://duckdb.org/docs/stable/sql/dialect/order_preservation)
    // while preserve_insertion_order is on, set for the database (COPY's own PRESERVE_ORDER would
    // not cover the UNION ALL): no ORDER BY, so the wide rows are never sorted, and no join
    // (partSelect; test/compact-plan.test.ts holds the plan to that). Sorting them held more than
    // memory_limit allows: sorted with two threads, one day of 139,685 generated rows failed at 128
    // MiB and passed at 192, and a 5.5 GB fleet's compaction failed once at the default 384 MiB
    // ("failed to pin block"); unsorted, that day compacts under 48 MiB.
    await conn.run(`SET preserve_insertion_order = true`);
    for (let p = 0; p < nParts; p++) {
      const path = join(dir, `part-${String(p).padStart(6, "0")}.parquet`);
      const lo = p * partRows;
      const hi = Math.min(total, lo + partRows);
      // A part is a run of rows in (file, row) order: from its first kept row to its last, less
      // the dropped ones. Only the files it spans are read, with no join on the wide rows (nor on
      // the dropped ones: a join does not keep the order), and no sort.
      const ends = await read(`SELECT _o, _ord, rn FROM keep WHERE _o IN (${lo}, ${Math.max(lo, hi - 1)}) ORDER BY _o`);
      const [a, rnA, b, rnB] = ends.length === 0 ? [0, 0, -1, -1] : [Number(ends[0]!._ord), Number(ends[0]!.rn), Number(ends.at(-1)!._ord), Number(ends.at(-1)!.rn)];
      const select =
        b < a
          ? `SELECT ${COLS} FROM (${parquetSource([files[0]!.path], READ_OPTIONS)} LIMIT 0) CROSS JOIN (SELECT '' AS runtime, '' AS agent)`
          : partSelect(files, a, rnA, b, rnB, dropped);
      // copyParquet records the part's content hash in its footer, as push's segments do.
      const info = await copyParquet(conn, select, path, { zstdLevel, rowGroupRows });
      if (info.rows !== hi - lo) throw new MaintError("Corrupt", `${path}: part ${p} of ${label} holds ${info.rows} rows, where the generation's plan has ${hi - lo}`, { data: { key: path } });
      parts.push({ key: compactedPartKey({ dt, fleet }, gen, p), path, rows: hi - lo, bytes: info.bytes, sha256: info.sha256 });
    }
    built = { total, parts };
  } finally {
    conn.closeSync();
    db.closeSync();
  }
  // Part files sort as their keys do (zero-padded), so this is a reader's read order.
  const w = await writeUsageRollup(built.parts.map((p) => ({ path: p.path, layout: "compacted" as const })), dir, { label: `sessions/compacted/dt=${dt}/fleet=${fleet}/gen=${gen}` });
  const keys = { key: compactedUsageKey({ dt, fleet }, gen, "usage.keys"), path: w.keys.path, bytes: w.keys.bytes, sha256: w.keys.sha256, count: w.keys.count };
  const usage = { key: compactedUsageKey({ dt, fleet }, gen), path: w.json.path, bytes: w.json.bytes, sha256: w.json.sha256, rows: w.rows, keys };
  return { rows: built.total, parts: built.parts, usage };
}

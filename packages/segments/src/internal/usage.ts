// Usage rows straight from Parquet segments: the rows @lake/events countUsage reads (projection and
// filter pushed into read_parquet, no views, no window functions), handed to JS in columns. The
// reader counts un-compacted bronze with it, and maint counts each compacted generation for its
// usage rollup, so both read exactly the same rows.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Usage, UsageRecord, UsageRollup } from "@lake/events/usage";
import { USAGE_KEYS, USAGE_ROLLUP_FILES, buildUsageRollup, encodeUsageRollup, isoTime } from "@lake/events/usage";
import { duckdb } from "./duckdb.js";
import { SegmentError } from "./errors.js";
import { parquetSource, sqlString, type FleetRow, type SegmentLayout } from "./segments.js";

/** A Parquet file to read usage from: a bronze segment (runtime from its path) or a compacted part. */
export interface UsageFile {
  readonly path: string;
  readonly layout: SegmentLayout;
  /** A bronze segment's runtime (its Hive path's `runtime=`); compacted parts carry it as a column. */
  readonly runtime?: string;
}

/** Options of {@link readUsageRecords}. */
export interface ReadUsageOptions {
  /** Main-thread work to run while DuckDB reads the files (e.g. loading the report code). */
  readonly meanwhile?: (() => Promise<unknown>) | undefined;
  /** Names the data in an error message (a store URL); default: the first file. */
  readonly label?: string;
}

function firstLine(s: string): string {
  return s.split("\n")[0]!.trim();
}

/** Rows countUsage can count something from: a reported usage key, or a `latest` copy that voids earlier ones. */
const CARRIES_USAGE = `(${USAGE_KEYS.map((k) => `${k} IS NOT NULL`).join(" OR ")} OR (usage_mode = 'latest' AND usage_key IS NOT NULL)) AND NOT coalesce(replayed, false)`;

/** Low-cardinality columns, handed over as DuckDB ENUMs (one JS string per distinct value). */
const ENUM_COLS = ["session_id", "runtime", "stream", "model", "usage_mode"] as const;

const SEP = "\u001e";

/** A DuckDB result vector, read value by value. */
interface Col<T> {
  getItem(i: number): T;
}

/** Byte-wise (UTF-8) order, as DuckDB orders VARCHAR: the order rows are read in. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

function list(values: readonly (string | number)[]): string {
  return `[${values.map((v) => (typeof v === "number" ? String(v) : sqlString(v))).join(", ")}]`;
}

/**
 * Read the rows of `files` that countUsage reads — only its columns (session_id, runtime, stream,
 * record_id, content_hash, ts, model, the usage keys, usage_mode, usage_key, is_sidechain, cost_usd) of
 * rows carrying usage — as UsageRecords, in read order: files by path (bytewise: callers name
 * files so that they sort as their store keys), rows in file order (the order a reader keeps the
 * first copy in). Nothing is deduplicated here: countUsage does that.
 * Dropped beforehand are only rows countUsage skips before looking at anything else: `replayed`
 * rows and rows with no usage (unless a `latest` copy with a usage_key). `content_hash` is read only
 * for rows without a record_id (the only rows countUsage keys on it); other rows carry "".
 * Throws SegmentError `ReadFailed` (naming `label`) when a file cannot be read.
 */
export async function readUsageRecords(files: readonly UsageFile[], options: ReadUsageOptions = {}): Promise<UsageRecord[]> {
  const bronze = files.filter((f) => f.layout === "bronze");
  const compacted = files.filter((f) => f.layout === "compacted");
  const meanwhile = options.meanwhile ?? (async () => undefined);
  const label = options.label ?? files[0]?.path ?? "";
  for (const b of bronze) if (b.runtime === undefined) throw new SegmentError("ReadFailed", `${b.path}: a bronze segment needs its runtime`, { data: { file: b.path } });
  if (bronze.length === 0 && compacted.length === 0) {
    await meanwhile();
    return [];
  }
  const rank = new Map([...bronze, ...compacted].map((f) => f.path).sort(byteOrder).map((p, i) => [p, i]));
  const cols = `session_id, stream, record_id, CASE WHEN record_id IS NULL THEN content_hash END AS content_hash, CAST(epoch_ms(ts) AS DOUBLE) AS ts, model, ${USAGE_KEYS.map((k) => `CAST(${k} AS DOUBLE) AS ${k}`).join(", ")}, usage_mode, usage_key, is_sidechain, CAST(cost_usd AS DOUBLE) AS cost_usd`;
  const opts = "hive_partitioning = false, union_by_name = true, file_row_number = true";
  const at = "[CAST(file_index AS BIGINT) + 1]";
  const parts: string[] = [];
  if (bronze.length) {
    // Bronze files carry runtime in their path (SEGMENT_COLUMNS), not as a column.
    parts.push(
      `SELECT CAST(${list(bronze.map((b) => rank.get(b.path)!))}${at} AS INTEGER) AS fo, file_row_number AS rn, ${list(bronze.map((b) => b.runtime!))}${at} AS runtime, ${cols}
       FROM ${parquetSource(bronze.map((b) => b.path), opts, ["file_index"])} WHERE ${CARRIES_USAGE}`,
    );
  }
  if (compacted.length) {
    parts.push(
      `SELECT CAST(${list(compacted.map((c) => rank.get(c.path)!))}${at} AS INTEGER) AS fo, file_row_number AS rn, runtime, ${cols}
       FROM ${parquetSource(compacted.map((c) => c.path), opts, ["file_index"])} WHERE ${CARRIES_USAGE}`,
    );
  }
  const db = await duckdb().DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  try {
    const scan = conn.run(`CREATE TEMP TABLE u AS ${parts.join("\nUNION ALL\n")}`);
    const [done] = await Promise.allSettled([scan, meanwhile()]);
    if (done.status === "rejected") throw done.reason;
    for (const c of ENUM_COLS) await conn.run(`CREATE TYPE e_${c} AS ENUM (SELECT DISTINCT ${c} FROM u WHERE ${c} IS NOT NULL ORDER BY 1)`);
    // The two high-cardinality strings of every row (record_id, else content_hash; usage_key) as
    // one text, split in JS: far cheaper than converting 2 values per row one by one.
    const agg = await conn.run(`SELECT count(*), string_agg(concat(coalesce(record_id, content_hash, ''), chr(30), coalesce(usage_key, '')), chr(30) ORDER BY fo, rn) FROM u`);
    const [[count], [text]] = (await agg.getColumnsJS()) as [[bigint], [string | null]];
    const n = Number(count);
    if (n === 0) return [];
    let ids = (text ?? "").split(SEP);
    if (ids.length !== 2 * n) {
      // A value holds the separator: take the strings one by one instead.
      const res = await conn.run(`SELECT coalesce(record_id, content_hash, ''), coalesce(usage_key, '') FROM u ORDER BY fo, rn`);
      const [a, b] = (await res.getColumnsJS()) as [string[], string[]];
      ids = new Array<string>(2 * n);
      for (let i = 0; i < n; i++) {
        ids[2 * i] = a[i]!;
        ids[2 * i + 1] = b[i]!;
      }
    }
    const res = await conn.run(
      `SELECT ${ENUM_COLS.map((c) => `CAST(${c} AS e_${c})`).join(", ")}, record_id IS NULL, usage_key IS NULL, ts, ${USAGE_KEYS.join(", ")}, is_sidechain, cost_usd FROM u ORDER BY fo, rn`,
    );
    const out: UsageRecord[] = new Array(n);
    let row = 0;
    for (const chunk of await res.fetchAllChunks()) {
      const col = <T>(c: number) => chunk.getColumnVector(c) as unknown as Col<T>;
      const [sid, rt, st, model, mode] = [0, 1, 2, 3, 4].map((c) => col<string | null>(c)) as [Col<string | null>, Col<string | null>, Col<string | null>, Col<string | null>, Col<string | null>];
      const [noId, noKey, ts] = [col<boolean>(5), col<boolean>(6), col<number | null>(7)];
      const nums = USAGE_KEYS.map((_, k) => col<number | null>(8 + k));
      if (nums.length !== 6) throw new Error("six usage columns expected");
      const side = col<boolean | null>(8 + USAGE_KEYS.length);
      const cost = col<number | null>(9 + USAGE_KEYS.length);
      const [n0, n1, n2, n3, n4, n5] = nums as [Col<number | null>, Col<number | null>, Col<number | null>, Col<number | null>, Col<number | null>, Col<number | null>];
      for (let i = 0; i < chunk.rowCount; i++, row++) {
        // Every record gets the same properties in the same order (absent = undefined, which is
        // how countUsage reads a missing optional field): one object shape for the whole pass.
        const usage: Usage = {};
        const x0 = n0.getItem(i);
        if (x0 !== null) usage.input_tokens = x0;
        const x1 = n1.getItem(i);
        if (x1 !== null) usage.cached_input_tokens = x1;
        const x2 = n2.getItem(i);
        if (x2 !== null) usage.cache_write_tokens = x2;
        const x3 = n3.getItem(i);
        if (x3 !== null) usage.output_tokens = x3;
        const x4 = n4.getItem(i);
        if (x4 !== null) usage.reasoning_tokens = x4;
        const x5 = n5.getItem(i);
        if (x5 !== null) usage.cache_write_1h_tokens = x5;
        const id = ids[2 * row]!;
        const noRecordId = noId.getItem(i);
        const t = ts.getItem(i);
        out[row] = {
          session_id: sid.getItem(i),
          runtime: rt.getItem(i),
          stream: st.getItem(i),
          content_hash: noRecordId ? id : "",
          record_id: noRecordId ? undefined : id,
          ts: t === null ? undefined : new Date(t).toISOString(),
          model: model.getItem(i) ?? undefined,
          usage,
          usage_mode: mode.getItem(i) ?? undefined,
          usage_key: noKey.getItem(i) ? undefined : ids[2 * row + 1],
          is_sidechain: side.getItem(i) ?? undefined,
          cost_usd: cost.getItem(i) ?? undefined,
        } as UsageRecord;
      }
    }
    return out;
  } catch (e) {
    throw new SegmentError("ReadFailed", `${label}: cannot read usage: ${firstLine((e as Error).message)}`, { data: { file: label }, cause: e });
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** One written rollup object. */
export interface RollupFile {
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
}

/** What {@link writeUsageRollup} wrote. */
export interface WrittenRollup {
  readonly json: RollupFile;
  readonly keys: RollupFile & { readonly count: number };
  /** Rollup rows. */
  readonly rows: number;
}

/**
 * The usage rollup (@lake/events buildUsageRollup, encodeUsageRollup) of what countUsage counts in
 * `files`, read as a reader reads them (readUsageRecords), written as `usage.json` and `usage.keys`
 * into `dir`. Maint writes one per compacted generation, push one beside each segment.
 */
export async function writeUsageRollup(files: readonly UsageFile[], dir: string, options: ReadUsageOptions = {}): Promise<WrittenRollup> {
  return writeUsageRollupOf(await readUsageRecords(files, options), dir);
}

/** One rollup object's bytes, and the file name it is written under. */
export interface RollupBody {
  readonly name: string;
  readonly body: Uint8Array;
  readonly sha256: string;
}

/** What {@link usageRollupOf} encodes. */
export interface UsageRollupBodies {
  readonly json: RollupBody;
  readonly keys: RollupBody & { readonly count: number };
  /** Rollup rows. */
  readonly rows: number;
}

/**
 * The usage rollup of `records` as the bytes {@link writeUsageRollupOf} writes, not written: push
 * uploads them as they are (no file to write, read back and remove beside each segment).
 */
export function usageRollupOf(records: readonly UsageRecord[]): UsageRollupBodies {
  return usageRollupBodies(buildUsageRollup(records));
}

/** A counted rollup as the bytes {@link writeUsageRollupOf} writes (push continues one from its carry: @lake/events continueUsageRollup). */
export function usageRollupBodies(rollup: UsageRollup): UsageRollupBodies {
  const enc = encodeUsageRollup(rollup);
  const body = (name: string, b: string | Uint8Array): RollupBody => {
    const buf = typeof b === "string" ? Buffer.from(b) : b;
    return { name, body: buf, sha256: createHash("sha256").update(buf).digest("hex") };
  };
  const keys = body(USAGE_ROLLUP_FILES.keys, enc.keys);
  return { json: body(USAGE_ROLLUP_FILES.json, enc.json), keys: { ...keys, count: rollup.keys.length }, rows: rollup.rows.length };
}

/**
 * The usage rollup of `records` (UsageRecords in read order: what readUsageRecords or
 * usageRecordsOfRows give, after an earlier rollup's carry), written as writeUsageRollup writes it.
 * A growing directory's next rollup is `writeUsageRollupOf([...decodeUsageCarry(carry), ...new])`
 * (@lake/events): the same bytes as writeUsageRollup over every file of it.
 */
export function writeUsageRollupOf(records: readonly UsageRecord[], dir: string): WrittenRollup {
  const r = usageRollupOf(records);
  const out = (f: RollupBody): RollupFile => {
    const path = join(dir, f.name);
    writeFileSync(path, f.body);
    return { path, bytes: f.body.length, sha256: f.sha256 };
  };
  return { json: out(r.json), keys: { ...out(r.keys), count: r.keys.count }, rows: r.rows };
}

/** Milliseconds of an ISO time as a segment stores it (the writer's Date.parse; NaN: NULL). */
function storedTs(ts: string | undefined): string | undefined {
  if (ts === undefined || ts === null) return undefined;
  return isoTime(String(ts));
}

/**
 * The UsageRecords readUsageRecords reads from a bronze segment of `runtime` that SegmentWriter
 * wrote from `rows` — the same records, values and order — without writing or reading the file:
 * what push counts for the rollup beside the segment it has just written. (Times as the segment
 * stores them: milliseconds, ISO; strings as written; `content_hash` only without a record_id.)
 */
export function usageRecordsOfRows(rows: Iterable<FleetRow>, runtime: string): UsageRecord[] {
  const out: UsageRecord[] = [];
  for (const r of rows) {
    const u = usageRecordOfRow(r, runtime);
    if (u !== undefined) out.push(u);
  }
  return out;
}

/** The one UsageRecord usageRecordsOfRows makes of `r` (undefined: none), from that row alone. */
export function usageRecordOfRow(r: FleetRow, runtime: string): UsageRecord | undefined {
  if (r.replayed) return undefined;
  const src = r.usage as Record<string, number | null | undefined> | undefined;
  const usage: Usage = {};
  let any = false;
  if (src) {
    for (const k of USAGE_KEYS) {
      const x = src[k];
      if (x === undefined || x === null) continue;
      usage[k] = Number(x);
      any = true;
    }
  }
  const key = r.usage_key === undefined || r.usage_key === null ? undefined : String(r.usage_key);
  const mode = r.usage_mode === undefined || r.usage_mode === null ? undefined : String(r.usage_mode);
  if (!any && !(mode === "latest" && key !== undefined)) return undefined;
  const hasId = r.record_id !== undefined && r.record_id !== null;
  return {
    session_id: String(r.session_id),
    runtime,
    stream: String(r.stream),
    content_hash: hasId ? "" : r.content_hash === undefined || r.content_hash === null ? "" : String(r.content_hash),
    record_id: hasId ? String(r.record_id) : undefined,
    ts: storedTs(r.ts),
    model: r.model === undefined || r.model === null ? undefined : String(r.model),
    usage,
    usage_mode: mode,
    usage_key: key,
    is_sidechain: r.is_sidechain === undefined || r.is_sidechain === null ? undefined : Boolean(r.is_sidechain),
    cost_usd: r.cost_usd === undefined || r.cost_usd === null ? undefined : Number(r.cost_usd),
  } as UsageRecord;
}

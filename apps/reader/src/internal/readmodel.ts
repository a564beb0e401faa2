// The DuckDB read model over the files resolveFleet found: `fleet_rows` (every followed row),
// `_sealed`, `_labels_raw`, then the compiled views of sql/views.ts.
import { existsSync, readFileSync } from "node:fs";
import type { DuckDBConnection, DuckDBInstance, DuckDBMaterializedResult } from "@duckdb/node-api";
import { COMPACTED_COLUMNS, FLEET_COLUMNS, SEGMENT_COLUMNS, duckdbCreateTable, duckdbType } from "@lake/events";
import { duckdb, parquetSource } from "@lake/segments";
import { ReaderError } from "./errors.js";
import type { Damage, FleetFiles } from "./fleet.js";
import { VIEWS } from "./sql/views.js";

import { firstLine, sqlString } from "./sqltext.js";

export { firstLine, sqlString };

const q = (name: string) => `"${name}"`;

/** Columns of `fleet_rows` beyond FLEET_COLUMNS. */
export const FLEET_ROW_EXTRA = [
  { name: "fleet", type: "VARCHAR", doc: "fleet id (Hive partition)" },
  { name: "dt", type: "VARCHAR", doc: "the partition date the row was pushed under (Hive partition)" },
  { name: "source_file", type: "VARCHAR", doc: "the Parquet file the row was read from" },
  { name: "file_row", type: "BIGINT", doc: "the row's number in that file" },
] as const;

/** The SELECT producing `fleet_rows` (FLEET_COLUMNS, then FLEET_ROW_EXTRA) from bronze and compacted files. */
export function fleetRowsSql(files: Pick<FleetFiles, "bronze" | "compacted">): string | undefined {
  const parts: string[] = [];
  const opts = "hive_partitioning = true, hive_types_autocast = false, union_by_name = true, filename = true, file_row_number = true";
  const inFile = (cols: readonly { name: string }[], name: string) => cols.some((c) => c.name === name);
  const select = (fileCols: readonly { name: string }[]) =>
    FLEET_COLUMNS.map((c) => (inFile(fileCols, c.name) ? q(c.name) : `CAST(${q(c.name)} AS ${duckdbType(c)}) AS ${q(c.name)}`)).join(", ") +
    `, CAST(fleet AS VARCHAR) AS fleet, CAST(dt AS VARCHAR) AS dt, filename AS source_file, CAST(file_row_number AS BIGINT) AS file_row`;
  // parquetSource: segments of an older writer lack the later columns; they read as NULL.
  if (files.bronze.length > 0) parts.push(`SELECT ${select(SEGMENT_COLUMNS)} FROM ${parquetSource(files.bronze.map((b) => b.path), opts)}`);
  if (files.compacted.length > 0) parts.push(`SELECT ${select(COMPACTED_COLUMNS)} FROM ${parquetSource(files.compacted.map((c) => c.path), opts)}`);
  return parts.length ? parts.join("\nUNION ALL\n") : undefined;
}

/** Options of {@link openReadModel}. */
export interface ReadModelOptions {
  /** The labels file (`labels.ndjson`); absent → an empty `labels` view. */
  readonly labelsFile?: string | undefined;
  /** Materialize `fleet_rows` as a table (faster for several queries in one run). */
  readonly materialize?: boolean;
  /** Create the public views (default true); `usage` reads `fleet_rows` only. */
  readonly views?: boolean;
  /** The local root whose metrics spool (`_metrics/`) fills the `metrics` table; absent → an empty one. */
  readonly metricsRoot?: string | undefined;
  /** Where a spool file that does not decode is recorded (it is left out, the rest is read). */
  readonly damaged?: Damage[] | undefined;
}

/** Columns of the `metrics` table: one row per OTLP data point in the local metrics spool. */
export const METRICS_COLUMNS = [
  { name: "source_file", type: "VARCHAR", doc: "the spool file (`metrics-<received-at>-<seq>-otlp.pb` or `metrics-<session-id>-<seq>-local.pb`)" },
  { name: "origin", type: "VARCHAR", doc: "`otlp` (received) or `local` (derived from a landed file)" },
  { name: "spool_seq", type: "BIGINT", doc: "the file's sequence number (per root for otlp, the landed file's for local)" },
  { name: "session_id", type: "VARCHAR", doc: "the local file's session, else the point's or resource's `session.id` attribute" },
  { name: "metric", type: "VARCHAR", doc: "metric name (`claude_code.token.usage`, `gen_ai.client.token.usage` …)" },
  { name: "unit", type: "VARCHAR", doc: "unit" },
  { name: "type", type: "VARCHAR", doc: "sum, gauge, histogram, exponential_histogram or summary" },
  { name: "temporality", type: "VARCHAR", doc: "cumulative or delta (NULL for gauges and summaries)" },
  { name: "monotonic", type: "BOOLEAN", doc: "a sum's monotonicity" },
  { name: "scope", type: "VARCHAR", doc: "instrumentation scope name" },
  { name: "resource", type: "JSON", doc: "resource attributes" },
  { name: "attributes", type: "JSON", doc: "point attributes" },
  { name: "start_time_unix_nano", type: "BIGINT", doc: "start of the point's interval (ns since the epoch)" },
  { name: "time_unix_nano", type: "BIGINT", doc: "the point's time (ns since the epoch)" },
  { name: "value", type: "DOUBLE", doc: "value of a sum or gauge point; sum of a histogram or summary" },
  { name: "count", type: "BIGINT", doc: "count of a histogram or summary point" },
] as const;

async function loadMetrics(conn: DuckDBConnection, root: string | undefined, damaged: Damage[] | undefined): Promise<void> {
  await conn.run(`CREATE TABLE metrics (${METRICS_COLUMNS.map((c) => `${q(c.name)} ${c.type}`).join(", ")})`);
  if (root === undefined) return;
  // The codec loads only when there is a spool to read.
  if (!existsSync(`${root}/_metrics`)) return;
  const { listSpool, decodeMetricsRequest, metricPoints } = await import("@lake/store/metrics");
  const rows: string[] = [];
  const lit = (v: unknown) => (v === undefined || v === null ? "NULL" : typeof v === "string" ? sqlString(v) : typeof v === "boolean" ? String(v) : typeof v === "bigint" ? String(v) : Number.isFinite(v) ? String(v) : "NULL");
  for (const e of listSpool(root)) {
    let points;
    try {
      points = metricPoints(decodeMetricsRequest(readFileSync(e.path), e.path));
    } catch (err) {
      damaged?.push({ key: e.path, reason: firstLine((err as Error).message) });
      continue;
    }
    for (const p of points) {
      const session = e.parsed.kind === "local" ? e.parsed.sessionId : (p.attributes["session.id"] ?? p.resource["session.id"]);
      rows.push(`(${[
        lit(e.name), lit(e.parsed.kind), lit(e.parsed.seq), lit(typeof session === "string" ? session : undefined), lit(p.metric), lit(p.unit), lit(p.type),
        lit(p.temporality), lit(p.monotonic), lit(p.scope), `${sqlString(JSON.stringify(p.resource))}::JSON`, `${sqlString(JSON.stringify(p.attributes))}::JSON`,
        lit(p.startTimeUnixNano), lit(p.timeUnixNano), lit(p.value), lit(p.count),
      ].join(", ")})`);
    }
  }
  for (let i = 0; i < rows.length; i += 500) await conn.run(`INSERT INTO metrics VALUES ${rows.slice(i, i + 500).join(", ")}`);
}

/** A DuckDB connection with the read model's views. */
export class ReadModel {
  private constructor(
    private readonly db: DuckDBInstance,
    readonly conn: DuckDBConnection,
    readonly files: FleetFiles,
  ) {}

  /** Create the views over `files`. */
  static async open(files: FleetFiles, options: ReadModelOptions = {}): Promise<ReadModel> {
    const db = await duckdb().DuckDBInstance.create(":memory:");
    const conn = await db.connect();
    const rm = new ReadModel(db, conn, files);
    try {
      await conn.run("SET TimeZone = 'UTC'");
      const rows = fleetRowsSql(files);
      if (rows === undefined) {
        await conn.run(duckdbCreateTable("fleet_rows", FLEET_ROW_EXTRA.map((e) => ({ name: e.name, type: e.type })), FLEET_COLUMNS));
      } else {
        await conn.run(`CREATE ${options.materialize ? "TABLE" : "VIEW"} fleet_rows AS ${rows}`);
      }
      await conn.run("CREATE TABLE _sealed (session_id VARCHAR, runtime VARCHAR, agent VARCHAR, dt VARCHAR, fleet VARCHAR)");
      if (files.sealed.length > 0) {
        await conn.run(
          `INSERT INTO _sealed VALUES ${files.sealed.map((s) => `(${[s.session, s.runtime, s.agent, s.dt, s.fleet].map(sqlString).join(", ")})`).join(", ")}`,
        );
      }
      const labelCols = "{ts: 'VARCHAR', session_id: 'VARCHAR', runtime: 'VARCHAR', aspect: 'VARCHAR', value: 'VARCHAR', note: 'VARCHAR', source: 'VARCHAR'}";
      if (options.labelsFile && existsSync(options.labelsFile)) {
        await conn.run(`CREATE VIEW _labels_raw AS SELECT * FROM read_json(${sqlString(options.labelsFile)}, format = 'newline_delimited', columns = ${labelCols})`);
      } else {
        await conn.run("CREATE TABLE _labels_raw (ts VARCHAR, session_id VARCHAR, runtime VARCHAR, aspect VARCHAR, value VARCHAR, note VARCHAR, source VARCHAR)");
      }
      await loadMetrics(conn, options.metricsRoot, options.damaged);
      if (options.views !== false) for (const v of VIEWS) await conn.run(v);
    } catch (e) {
      rm.close();
      if (e instanceof ReaderError) throw e;
      throw new ReaderError("Corrupt", `${files.storeUrl}: cannot build the read model: ${firstLine((e as Error).message)}`, { data: { file: files.storeUrl }, cause: e });
    }
    return rm;
  }

  /** Run a query; rows as objects of JS values (BIGINT as number when safe, timestamps as Date). */
  async query(sql: string): Promise<{ columns: string[]; rows: Record<string, unknown>[] }> {
    let res: DuckDBMaterializedResult;
    try {
      res = await this.conn.run(sql);
    } catch (e) {
      throw new ReaderError("Query", `query failed: ${firstLine((e as Error).message)}`, { cause: e });
    }
    const reader = await materialize(res);
    return reader;
  }

  /** Close the database. */
  close(): void {
    try {
      this.conn.closeSync();
    } finally {
      this.db.closeSync();
    }
  }
}

async function materialize(res: DuckDBMaterializedResult): Promise<{ columns: string[]; rows: Record<string, unknown>[] }> {
  const columns = res.columnNames();
  const cols = await res.getColumnsJS();
  const n = cols[0]?.length ?? 0;
  const rows: Record<string, unknown>[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const row: Record<string, unknown> = {};
    for (let c = 0; c < columns.length; c++) row[columns[c]!] = jsValue(cols[c]![i]);
    rows[i] = row;
  }
  return { columns, rows };
}

/** A DuckDB JS value made plain: safe BigInts become numbers; lists and structs recursively. */
export function jsValue(v: unknown): unknown {
  if (typeof v === "bigint") return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  if (Array.isArray(v)) return v.map(jsValue);
  if (v instanceof Date || v === null || typeof v !== "object") return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = jsValue(x);
  return out;
}

import { createHash } from "node:crypto";
import { createReadStream, statSync } from "node:fs";
import type { DuckDBAppender, DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { COLUMNS, COMPACTED_COLUMNS, SEGMENT_COLUMNS, duckdbCreateTable, duckdbType, rowToRecord, type Column } from "@lake/events/columns";
import type { CanonicalRecord } from "@lake/events/record";
import { USAGE_KEYS } from "@lake/events/usage";
import { duckdb } from "./duckdb.js";
import { SegmentError } from "./errors.js";
import { CONTENT_HASH_COPY_OPTION, sealContentHash } from "./hash.js";

/** A canonical record as a row of the fleet table. */
export type FleetRow = CanonicalRecord & {
  /** The fleet agent (collector) that pushed the record. */
  agent: string;
  landed_seq?: number;
  landed_row?: number;
};

/** `bronze`: a session segment (runtime and agent are in its Hive path); `compacted`: a compacted part (all columns). */
export type SegmentLayout = "bronze" | "compacted";

/** The columns a file of the given layout stores. */
export function segmentColumns(layout: SegmentLayout): readonly Column[] {
  return layout === "bronze" ? SEGMENT_COLUMNS : COMPACTED_COLUMNS;
}

/** What a written segment holds. */
export interface SegmentInfo {
  readonly path: string;
  readonly rows: number;
  readonly bytes: number;
  /** SHA-256 hex of the file's bytes (as written, content hash included). */
  readonly sha256: string;
  /** The content hash recorded in the file's footer (`lake.sha256`: see checkContentHash). */
  readonly contentHash: string;
}

/** What {@link copyParquet} wrote. */
export interface ParquetFileInfo {
  readonly path: string;
  readonly bytes: number;
  /** SHA-256 hex of the file's bytes (as written, content hash included). */
  readonly sha256: string;
  /** The content hash recorded in the file's footer. */
  readonly contentHash: string;
}

/**
 * Write the rows of a SELECT to a Parquet file with DuckDB (`COPY … (FORMAT parquet, COMPRESSION
 * zstd)`) and record its content hash in its footer (`lake.sha256`). Every Parquet file of the fleet
 * — a bronze segment (SegmentWriter), a compacted part (lake-maint compact) — is written here.
 */
export async function copyParquet(conn: DuckDBConnection, select: string, path: string, options: { zstdLevel?: number | undefined } = {}): Promise<ParquetFileInfo> {
  const level = options.zstdLevel === undefined ? "" : `, COMPRESSION_LEVEL ${options.zstdLevel}`;
  try {
    await conn.run(`COPY (${select}) TO ${sqlString(path)} (FORMAT parquet, COMPRESSION zstd${level}, ${CONTENT_HASH_COPY_OPTION})`);
  } catch (err) {
    throw new SegmentError("WriteFailed", `${path}: cannot write Parquet: ${(err as Error).message}`, { cause: err, data: { path } });
  }
  let contentHash: string;
  try {
    contentHash = sealContentHash(path);
  } catch (err) {
    throw new SegmentError("WriteFailed", `${path}: cannot record the content hash: ${(err as Error).message}`, { cause: err, data: { path } });
  }
  return { path, bytes: statSync(path).size, sha256: await sha256File(path), contentHash };
}

/** Quote a string as a SQL literal. */
export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

const USAGE = new Set<string>(USAGE_KEYS);

/**
 * Columns added to the record after segments were first written: files of an older writer do not
 * have them, and a reader selects them as NULL (never a guess: absent ≠ zero).
 */
export const LATER_COLUMNS: readonly Column[] = COLUMNS.filter((col) => col.name === "cache_write_1h_tokens" || col.name === "cost_usd");

/**
 * A DuckDB table expression over Parquet files (`read_parquet(paths, options)`) in which the
 * LATER_COLUMNS exist even when no file has them (NULL), so one query reads old and new segments
 * alike. Projection and filters still go down into read_parquet. `virtualColumns` (e.g.
 * `file_index`) are selected too (`*` leaves them out).
 */
export function parquetSource(paths: readonly string[], options: string, virtualColumns: readonly string[] = []): string {
  const later = LATER_COLUMNS.map((c) => `CAST(NULL AS ${duckdbType(c)}) AS "${c.name}"`).join(", ");
  const extra = virtualColumns.map((v) => `, ${v}`).join("");
  return `(SELECT *${extra} FROM read_parquet([${paths.map(sqlString).join(", ")}], ${options}) UNION ALL BY NAME SELECT ${later} WHERE false)`;
}

function appendCell(app: DuckDBAppender, col: Column, row: FleetRow): void {
  const { LIST, VARCHAR, listValue, timestampValue } = duckdb();
  let v: unknown;
  if (USAGE.has(col.name)) v = (row.usage as Record<string, number | undefined> | undefined)?.[col.name];
  else v = (row as unknown as Record<string, unknown>)[col.name];
  if (v === undefined || v === null) {
    if (col.type === "varchar[]") app.appendList(listValue([]), LIST(VARCHAR));
    else if (!col.nullable) throw new SegmentError("InvalidRow", `column ${col.name} is required`, { data: { column: col.name } });
    else app.appendNull();
    return;
  }
  switch (col.type) {
    case "varchar":
      app.appendVarchar(String(v));
      return;
    case "boolean":
      app.appendBoolean(Boolean(v));
      return;
    case "integer":
      app.appendInteger(Number(v));
      return;
    case "bigint":
      app.appendBigInt(BigInt(v as number));
      return;
    case "double":
      app.appendDouble(Number(v));
      return;
    case "timestamp": {
      const ms = Date.parse(String(v));
      if (Number.isNaN(ms)) app.appendNull();
      else app.appendTimestamp(timestampValue(BigInt(ms) * 1000n));
      return;
    }
    case "varchar[]":
      app.appendList(listValue((v as unknown[]).map(String)), LIST(VARCHAR));
      return;
  }
}

/**
 * Writes Parquet segments with DuckDB: rows go through an Appender into a temporary table, then
 * `COPY … (FORMAT parquet, COMPRESSION zstd)`. One writer keeps one in-memory DuckDB; close it.
 */
export class SegmentWriter {
  #db: DuckDBInstance | undefined;
  #conn: DuckDBConnection | undefined;
  #n = 0;

  private constructor() {}

  /** Open a writer (an in-memory DuckDB). */
  static async open(): Promise<SegmentWriter> {
    const w = new SegmentWriter();
    w.#db = await duckdb().DuckDBInstance.create(":memory:");
    w.#conn = await w.#db.connect();
    return w;
  }

  /** Write `rows` to a Parquet file at `path` in the given layout. The file must not exist. */
  async write(path: string, rows: Iterable<FleetRow>, layout: SegmentLayout): Promise<SegmentInfo> {
    const conn = this.#conn;
    if (!conn) throw new SegmentError("WriteFailed", `${path}: segment writer is closed`);
    const table = `seg_${this.#n++}`;
    const cols = segmentColumns(layout);
    let count = 0;
    try {
      await conn.run(duckdbCreateTable(table, [], cols));
      const app = await conn.createAppender(table);
      try {
        for (const row of rows) {
          for (const col of cols) appendCell(app, col, row);
          app.endRow();
          count++;
        }
        app.flushSync();
      } finally {
        app.closeSync();
      }
      const info = await copyParquet(conn, `SELECT * FROM ${table}`, path);
      return { ...info, rows: count };
    } catch (err) {
      if (err instanceof SegmentError && err.code === "WriteFailed") throw err; // copyParquet named the file
      throw new SegmentError("WriteFailed", `${path}: cannot write segment: ${(err as Error).message}`, { cause: err, data: { path } });
    } finally {
      await conn.run(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
    }
  }

  /** Close the writer's DuckDB. */
  close(): void {
    this.#conn?.closeSync();
    this.#db?.closeSync();
    this.#conn = undefined;
    this.#db = undefined;
  }
}

/** Write one segment with a writer of its own. */
export async function writeSegment(path: string, rows: Iterable<FleetRow>, layout: SegmentLayout): Promise<SegmentInfo> {
  const w = await SegmentWriter.open();
  try {
    return await w.write(path, rows, layout);
  } finally {
    w.close();
  }
}

/**
 * Read a segment back as fleet rows, in file order. A bronze segment does not store runtime and
 * agent (its path does): pass them.
 */
export async function readSegment(path: string, layout: SegmentLayout, partition: { runtime?: string; agent?: string } = {}): Promise<FleetRow[]> {
  const db = await duckdb().DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  try {
    const reader = await conn.runAndReadAll(`SELECT * FROM read_parquet(${sqlString(path)}, hive_partitioning = false)`);
    const rows = reader.getRowObjectsJS();
    return rows.map((r) => {
      const rec = rowToRecord(r as Record<string, unknown>) as FleetRow;
      if (layout === "bronze") {
        if (partition.runtime !== undefined) rec.runtime = partition.runtime;
        if (partition.agent !== undefined) rec.agent = partition.agent;
      } else if (r.agent !== null && r.agent !== undefined) rec.agent = String(r.agent);
      if (r.landed_seq !== null && r.landed_seq !== undefined) rec.landed_seq = Number(r.landed_seq);
      if (r.landed_row !== null && r.landed_row !== undefined) rec.landed_row = Number(r.landed_row);
      return rec;
    });
  } catch (err) {
    throw new SegmentError("ReadFailed", `${path}: cannot read segment: ${(err as Error).message}`, { cause: err, data: { path } });
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** SHA-256 hex of a file, streamed. */
export async function sha256File(path: string): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest("hex");
}

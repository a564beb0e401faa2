import type { CanonicalRecord } from "./record-core.js";
import { USAGE_KEYS } from "./usage.js";

/** Logical column types, mapped to DuckDB/Parquet and Arrow. */
export type ColumnType = "varchar" | "timestamp" | "boolean" | "integer" | "bigint" | "double" | "varchar[]";

/** One column of the canonical record table. */
export interface Column {
  readonly name: string;
  readonly type: ColumnType;
  readonly nullable: boolean;
  readonly doc: string;
}

const c = (name: string, type: ColumnType, nullable: boolean, doc: string): Column => ({ name, type, nullable, doc });

/**
 * The canonical record as a table: the column list for Parquet, DuckDB and Arrow, in order.
 * `usage` is flattened into its keys (NULL = not reported).
 */
export const COLUMNS: readonly Column[] = [
  c("runtime", "varchar", false, "runtime id"),
  c("session_id", "varchar", false, "session id"),
  c("stream", "varchar", false, "main, or a child agent's id"),
  c("record_id", "varchar", true, "the vendor's record id (uuid)"),
  c("parent_id", "varchar", true, "parent record id"),
  c("ts", "timestamp", true, "UTC timestamp (millisecond precision)"),
  c("kind", "varchar", false, "user, assistant, tool_call, tool_result, system, summary, usage, meta, unknown"),
  c("vendor_type", "varchar", true, "the vendor's own type/subtype"),
  c("role", "varchar", true, "message role"),
  c("model", "varchar", true, "model id"),
  c("text", "varchar", true, "masked text"),
  c("tool_name", "varchar", true, "tool name"),
  c("tool_call_id", "varchar", true, "tool call id (on calls and results)"),
  c("tool_input", "varchar", true, "tool input, JSON text (masked)"),
  c("is_error", "boolean", true, "the tool result or response is an error"),
  c("exit_code", "integer", true, "a command's exit code"),
  ...USAGE_KEYS.map((k) => c(k, "bigint", true, `usage: ${k} (NULL = not reported)`)),
  c("usage_mode", "varchar", true, "delta or cumulative"),
  c("usage_key", "varchar", true, "records sharing it are one billed response"),
  c("cost_usd", "double", true, "the cost in USD the runtime recorded for the response (NULL = none recorded)"),
  c("is_sidechain", "boolean", true, "vendor sidechain flag"),
  c("replayed", "boolean", true, "replays history already recorded elsewhere"),
  c("message_id", "varchar", true, "provider message id"),
  c("request_id", "varchar", true, "provider request id"),
  c("child_stream", "varchar", true, "stream of the child agent this call launched"),
  c("cwd", "varchar", true, "working directory"),
  c("repo", "varchar", true, "repository"),
  c("branch", "varchar", true, "branch"),
  c("content_hash", "varchar", false, "SHA-256 of the content, '' for none"),
  c("redaction_rules", "varchar[]", false, "rule ids that fired"),
  c("attrs", "varchar", true, "other vendor fields, JSON object text"),
  c("raw", "varchar", true, "unknown records: the source line (masked)"),
  c("source_path", "varchar", false, "provenance: source file"),
  c("source_offset", "bigint", true, "provenance: byte offset of the source line"),
  c("source_line", "bigint", true, "provenance: line number (1-based)"),
  c("adapter", "varchar", false, "adapter name"),
  c("adapter_version", "varchar", false, "adapter version"),
];

/** Columns a fleet table adds to the record: who pushed it, and where it sat in the local root. */
export const FLEET_EXTRA_COLUMNS: readonly Column[] = [
  c("agent", "varchar", false, "fleet agent id: the collector that pushed the record"),
  c("landed_seq", "bigint", true, "sequence of the landed file the record came from"),
  c("landed_row", "integer", true, "0-based row of the record in that landed file"),
];

/** The logical fleet table: every record column plus the fleet columns. */
export const FLEET_COLUMNS: readonly Column[] = [...COLUMNS, ...FLEET_EXTRA_COLUMNS];

/** Hive partition keys of a bronze session directory, in path order (dt=/fleet=/runtime=/agent=/session=). */
export const SEGMENT_PARTITIONS = ["dt", "fleet", "runtime", "agent", "session"] as const;

/**
 * Columns stored in a bronze segment file: the fleet table minus the columns its Hive path
 * carries (runtime, agent), so engines that refuse a column in both the data and the partition
 * schema (Spark, Trino, Athena) read it. session_id stays: its partition key is named `session`.
 */
export const SEGMENT_COLUMNS: readonly Column[] = FLEET_COLUMNS.filter((col) => col.name !== "runtime" && col.name !== "agent");

/** Hive partition keys of a compacted part (sessions/compacted/dt=/fleet=/gen=). */
export const COMPACTED_PARTITIONS = ["dt", "fleet", "gen"] as const;

/** Columns stored in a compacted part: the whole fleet table (its path carries only dt, fleet, gen). */
export const COMPACTED_COLUMNS: readonly Column[] = FLEET_COLUMNS;

const DUCKDB: Record<ColumnType, string> = {
  varchar: "VARCHAR",
  timestamp: "TIMESTAMP",
  boolean: "BOOLEAN",
  integer: "INTEGER",
  bigint: "BIGINT",
  double: "DOUBLE",
  "varchar[]": "VARCHAR[]",
};

/** The DuckDB (and Parquet, through DuckDB) type of a column. */
export function duckdbType(col: Column): string {
  return DUCKDB[col.type];
}

/** `CREATE TABLE name (…)` for a column list (default: the canonical record), with `extra` columns appended. */
export function duckdbCreateTable(name: string, extra: readonly { name: string; type: string }[] = [], columns: readonly Column[] = COLUMNS): string {
  const cols = [
    ...columns.map((col) => `"${col.name}" ${duckdbType(col)}${col.nullable ? "" : " NOT NULL"}`),
    ...extra.map((e) => `"${e.name}" ${e.type}`),
  ];
  return `CREATE TABLE ${name} (${cols.join(", ")})`;
}

/** A column value as a plain JS value: string, number, boolean, string[], Date (timestamp) or null. */
export type CellValue = string | number | boolean | string[] | Date | null;

/** A record as a row of cells, in COLUMNS order. */
export function recordToRow(r: CanonicalRecord): CellValue[] {
  const u = r.usage;
  const row: CellValue[] = [];
  for (const col of COLUMNS) {
    let v: CellValue;
    if ((USAGE_KEYS as readonly string[]).includes(col.name)) v = (u as Record<string, number | undefined> | undefined)?.[col.name] ?? null;
    else if (col.name === "ts") {
      const d = r.ts ? new Date(r.ts) : null;
      v = d && !Number.isNaN(d.getTime()) ? d : null;
    } else v = ((r as unknown as Record<string, CellValue | undefined>)[col.name] ?? null);
    row.push(v);
  }
  return row;
}

/**
 * A row read back from a table (an object keyed by column name) as a canonical record: NULLs
 * become absent keys, the usage keys are folded back into `usage`, timestamps become ISO strings.
 */
export function rowToRecord(row: Readonly<Record<string, unknown>>): CanonicalRecord {
  const out: Record<string, unknown> = {};
  const usage: Record<string, number> = {};
  for (const col of COLUMNS) {
    const v = row[col.name];
    if (v === null || v === undefined) continue;
    if ((USAGE_KEYS as readonly string[]).includes(col.name)) usage[col.name] = Number(v);
    else if (col.type === "timestamp") out[col.name] = v instanceof Date ? v.toISOString() : String(v);
    else if (col.type === "bigint" || col.type === "integer" || col.type === "double") out[col.name] = Number(v);
    else if (col.type === "varchar[]") out[col.name] = Array.isArray(v) ? v.map(String) : [];
    else out[col.name] = v;
  }
  if (Object.keys(usage).length > 0) out.usage = usage;
  if (!out.redaction_rules) out.redaction_rules = [];
  return out as unknown as CanonicalRecord;
}

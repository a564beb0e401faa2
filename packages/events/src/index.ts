// The usage half (errors, usage arithmetic, countUsage, rollups) is the `@lake/events/usage` entry.
export * from "./usage.js";
export {
  RUNTIMES,
  KINDS,
  USAGE_MODES,
  MAIN_STREAM,
  RECORD_SCHEMA_VERSION,
  UsageSchema,
  CanonicalRecordSchema,
  contentHash,
  canonicalize,
  parseRecord,
  safeParseRecord,
} from "./internal/record.js";
export type { CanonicalRecord, RawRecord, Kind, Runtime, UsageMode } from "./internal/record.js";
export {
  COLUMNS,
  FLEET_EXTRA_COLUMNS,
  FLEET_COLUMNS,
  SEGMENT_PARTITIONS,
  SEGMENT_COLUMNS,
  COMPACTED_PARTITIONS,
  COMPACTED_COLUMNS,
  duckdbType, duckdbCreateTable, recordToRow, rowToRecord } from "./internal/columns.js";
export type { Column, ColumnType, CellValue } from "./internal/columns.js";

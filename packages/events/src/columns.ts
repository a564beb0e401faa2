// `@lake/events/columns`: the column lists, their DuckDB types and the record/row conversions,
// without the record schema, so a program that only writes or reads Parquet (lake-collector's push
// through @lake/segments) does not load zod. Everything here is also exported from the package root.
export {
  COLUMNS,
  FLEET_EXTRA_COLUMNS,
  FLEET_COLUMNS,
  SEGMENT_PARTITIONS,
  SEGMENT_COLUMNS,
  COMPACTED_PARTITIONS,
  COMPACTED_COLUMNS,
  duckdbType,
  duckdbCreateTable,
  recordToRow,
  rowToRecord,
} from "./internal/columns.js";
export type { Column, ColumnType, CellValue } from "./internal/columns.js";

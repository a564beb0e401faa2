export { EventsError, isEventsError } from "./internal/errors.js";
export type { EventsErrorCode } from "./internal/errors.js";
export {
  USAGE_KEYS,
  sumUsage,
  addUsageInto,
  totalTokens,
  isEmptyUsage,
  usageDelta,
  usageEquals,
} from "./internal/usage.js";
export type { Usage, UsageKey } from "./internal/usage.js";
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
  recordDay,
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
export { countUsage, groupUsage, usageBySession, usageByDay } from "./internal/accounting.js";
export type { UsageRecord, UsageContribution, UsageTotals } from "./internal/accounting.js";
export {
  USAGE_ROLLUP_FORMAT,
  USAGE_ROLLUP_VERSION,
  USAGE_ROLLUP_COLUMNS,
  USAGE_ROLLUP_FILES,
  usageKeyHash,
  usageIdentity,
  rollupRows,
  buildUsageRollup,
  encodeUsageRollup,
  decodeUsageRollup,
  rollupContributions,
  overlappingRollups,
} from "./internal/rollup.js";
export type { UsageRollup, UsageRollupRow, UsageIdentity, EncodedUsageRollup } from "./internal/rollup.js";

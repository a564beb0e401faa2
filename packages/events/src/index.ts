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
  canonicalizeInPlace,
  parseRecord,
  safeParseRecord,
} from "./internal/record.js";
export type { CanonicalRecord, RawRecord, Kind, Runtime, UsageMode } from "./internal/record.js";
// The columns and record/row conversions: the whole of `@lake/events/columns`.
export * from "./columns.js";
export { checkStoredRecord } from "./internal/record-check.js";

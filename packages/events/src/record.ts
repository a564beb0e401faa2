// `@lake/events/record`: the canonical record without its zod schema — the type, the kinds and
// usage modes, MAIN_STREAM, the content hash and canonicalize — so a program that builds records
// (the adapters) or only decides whether to (a collector pass with nothing new) does not load zod.
// Everything here is also exported from the package root; parseRecord and the schemas are there only.
export { RUNTIMES, KINDS, USAGE_MODES, MAIN_STREAM, RECORD_SCHEMA_VERSION, contentHash, canonicalize, canonicalizeInPlace, recordDay } from "./internal/record-core.js";
export type { CanonicalRecord, RawRecord, Kind, Runtime, UsageMode } from "./internal/record-core.js";
export { checkStoredRecord } from "./internal/record-check.js";

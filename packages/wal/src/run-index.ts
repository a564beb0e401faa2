/**
 * `@lake/wal/run-index`: the read-only reader of run-index.db's export lane (export_facts,
 * export_meta; spec sections 4.4–4.5).
 */
export { ExportSegmentSchema, RunIndexReader } from "./internal/run-index.js";
export type { ExportBatch, ExportCursor, ExportFact, ExportMeta, ExportSegment } from "./internal/run-index.js";
export { isWalError, WalError } from "./internal/errors.js";
export type { WalErrorCode, WalErrorData, WalErrorFacts } from "./internal/errors.js";

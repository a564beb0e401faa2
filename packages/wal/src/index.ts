/**
 * @lake/wal — the broca WAL data model: frames, lineage, gated records and the feature floor,
 * records (zod), torn tail versus corruption, the writer, usage sums, addresses, archive
 * containers, live-first resolution, and the read-only run-index.db export reader.
 */
export { isWalError, WalError } from "./internal/errors.js";
export type { WalErrorCode, WalErrorData, WalErrorFacts } from "./internal/errors.js";

export {
  encodeFrame,
  encodeLineageFrame,
  FRAME_HEADER_BYTES,
  frameDigest,
  LINEAGE_FRAME_BYTES,
  lineageIdToUuid,
  MAX_PAYLOAD_BYTES,
  mintLineageId,
  uuidToLineageId,
  VER_GATED,
  VER_LINEAGE,
  VER_RECORD,
} from "./internal/frame.js";
export type { RawFrame } from "./internal/frame.js";

export { decodeWal, encodeRecordFrame, prepareRecord, readWalFile } from "./internal/codec.js";
export type { EncodeRecordOptions, PreparedRecord } from "./internal/encode.js";

export { MAX_PASS_BYTES, walFrameExtent } from "./internal/decode.js";
export { WalScanner } from "./internal/codec.js";
export type {
  WalScannedFrame,
  WalScanResult,
  WalScanState,
  WalDecodeOptions,
  WalDecodeResult,
  WalDecodeSummary,
  WalEntry,
  WalLineageEntry,
  WalRecordEntry,
  WalSkippedEntry,
  WalTornTail,
} from "./internal/decode.js";

export { isFeatureName, isKnownFeature, KNOWN_FEATURES, recordRequirements } from "./internal/features.js";
export { FEATURE_FLOOR_FILE, raiseFeatureFloor, readFeatureFloor } from "./internal/floor.js";

export {
  AuthSelectionSchema,
  isKnownRecordType,
  ManifestSchema,
  parseRecordValue,
  ProviderErrorSchema,
  RECORD_SCHEMAS,
  RECORD_TYPES,
  RunConfigSchema,
  ScopeSchema,
  SessionTripleSchema,
  UsageSchema,
} from "./internal/records.js";
export type { Json, RecordParse, WalRecord, WalRecordInput, WalRecordOf, WalRecordType } from "./internal/records.js";

export { sumUsage, USAGE_KEYS } from "./internal/usage.js";
export type { Usage, UsageKey } from "./internal/usage.js";

export { isWalAddress, isWalFileName, sessionKey, walAddress } from "./internal/addr.js";
export type { SessionTriple } from "./internal/addr.js";

export { WalWriter } from "./internal/writer.js";
export { decodeWalTail, encodeWalTail, WAL_TAIL_FORMAT, WAL_TAIL_SCHEMA, type WalTail } from "./internal/tail.js";
export type { WalAppendOptions, WalAppendResult, WalFsyncPolicy, WalWriterOptions } from "./internal/writer.js";

// Archive containers and live-first session resolution: the whole of `@lake/wal/archive`.
export * from "./archive.js";

export { ExportSegmentSchema, RunIndexReader } from "./internal/run-index.js";
export type { ExportBatch, ExportCursor, ExportFact, ExportMeta, ExportSegment } from "./internal/run-index.js";

export { formatWalInspection, inspectWal } from "./internal/inspect.js";
export type { WalInspection, WalStatus } from "./internal/inspect.js";

export { SegmentError, isSegmentError } from "./internal/errors.js";
export type { SegmentErrorCode } from "./internal/errors.js";
export { SegmentWriter, writeSegment, readSegment, segmentColumns, sqlString, sha256File, copyParquet, LATER_COLUMNS, parquetSource } from "./internal/segments.js";
export type { FleetRow, SegmentLayout, SegmentInfo, ParquetFileInfo } from "./internal/segments.js";
export { readUsageRecords, writeUsageRollup } from "./internal/usage.js";
export type { UsageFile, ReadUsageOptions, RollupFile, WrittenRollup } from "./internal/usage.js";
export { CONTENT_HASH_KEY, CONTENT_HASH_PLACEHOLDER, CONTENT_HASH_COPY_OPTION, CheckedFiles, checkContentHash, checkFileSha256, sealContentHash } from "./internal/hash.js";
export type { ContentHashCheck } from "./internal/hash.js";

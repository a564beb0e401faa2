export { SegmentError, isSegmentError } from "./internal/errors.js";
export type { SegmentErrorCode } from "./internal/errors.js";
export { SegmentWriter, writeSegment, readSegment, segmentColumns, sqlString, sha256File, LATER_COLUMNS, parquetSource } from "./internal/segments.js";
export type { FleetRow, SegmentLayout, SegmentInfo } from "./internal/segments.js";
export { readUsageRecords } from "./internal/usage.js";
export type { UsageFile, ReadUsageOptions } from "./internal/usage.js";

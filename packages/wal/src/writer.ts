/**
 * `@lake/wal/writer`: the WAL writer alone. It loads the record schemas (zod) only when it writes,
 * or appends to a file holding, a record of a known type, so a program that writes skippable
 * records (lake-collector's hook) starts with node built-ins and this package's frame code only.
 */
export { WalWriter } from "./internal/writer.js";
export { decodeWalTail, encodeWalTail, WAL_TAIL_FORMAT, WAL_TAIL_SCHEMA, type WalTail } from "./internal/tail.js";
export type { WalAppendOptions, WalAppendResult, WalFsyncPolicy, WalWriterOptions } from "./internal/writer.js";
export { isWalError, WalError } from "./internal/errors.js";
export type { WalErrorCode, WalErrorData, WalErrorFacts } from "./internal/errors.js";

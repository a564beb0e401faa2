/**
 * `@lake/wal/archive`: archive containers (spec section 3) and live-first session resolution,
 * without the rest of the codec.
 */
export {
  ARCHIVE_FORMAT_VERSION,
  inspectArchive,
  listArchive,
  readArchiveMember,
  writeArchive,
} from "./internal/archive.js";
export type { ArchiveInput, ArchiveInspection, ArchiveListing, ArchiveMember } from "./internal/archive.js";
export { ARCHIVE_DIRS, findAddress, findSession, listArchiveContainers, LIVE_DIRS } from "./internal/resolve.js";
export type { ArchiveContainerRef, SessionLocation } from "./internal/resolve.js";
export { isWalAddress, isWalFileName, walAddress } from "./internal/addr.js";
export type { SessionTriple } from "./internal/addr.js";
export { isWalError, WalError } from "./internal/errors.js";
export type { WalErrorCode, WalErrorData, WalErrorFacts } from "./internal/errors.js";

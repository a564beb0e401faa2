/**
 * @lake/store/read — a session's index and landed files as a reader of a root takes them: the
 * index, each landed file parsed (its SHA-256 checked), a landed file's name. A subpath of its own
 * so lake-collector's push reads what it sends without loading the session store, verify, repack,
 * restore or clean.
 */
export { readIndex, releaseIndex } from "./internal/indexer.js";
export type { SessionIndex, IndexedFile, IndexEntry, IndexLookup, ReadIndexOptions } from "./internal/indexer.js";
export { readLanded, readLandedBytes } from "./internal/read.js";
export type { LandedFile, LandedBytes, LandedHeader, ParseLandedOptions } from "./internal/landed.js";
export { parseLandedName } from "./internal/names.js";
export { StoreError, isStoreError } from "./internal/errors.js";
export type { StoreErrorCode, StoreErrorData } from "./internal/errors.js";

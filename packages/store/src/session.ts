/**
 * @lake/store/session — one session's store: open it under its lock to land windows, commit cursors
 * and bring its index up to date; read its index; check the sessions discovery no longer finds. A
 * subpath of its own so a pass that lands (the collector's collect, the round chain's parse) loads
 * the session store without verify, repack, restore, clean or the root's status listings.
 */
export { openSession, SessionStore } from "./internal/session.js";
export { Pass } from "./internal/pass.js";
export type {
  SourceRef, SourceLine, Framing, CarriedState, ConvertContext, Convert, MaskUnknown, Logger, SessionOptions, SourceStatus, SourceOutcome, PassSummary, ResolveMode,
} from "./internal/contracts.js";
export { readIndex, releaseIndex } from "./internal/indexer.js";
export type { SessionIndex, IndexedFile, IndexEntry, IndexLookup, ReadIndexOptions } from "./internal/indexer.js";
export { checkLostSessions } from "./internal/sessions.js";
export type { ResolveSource, LostSessionOptions, LostSessionResult } from "./internal/sessions.js";
export { StoreError, isStoreError } from "./internal/errors.js";
export type { StoreErrorCode, StoreErrorData } from "./internal/errors.js";

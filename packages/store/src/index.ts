export { StoreError, isStoreError } from "./internal/errors.js";
export type { StoreErrorCode, StoreErrorData } from "./internal/errors.js";
export { defaultRoot, padSeq, landedName, parseLandedName, formatStamp } from "./internal/names.js";
export type { Area } from "./internal/names.js";
export { encodeCursor, decodeCursor, CURSOR_SCHEMA } from "./internal/cursor.js";
export type { Cursor, AppendCursor, SnapshotCursor, CursorState } from "./internal/cursor.js";
export { LANDED_FORMAT, LANDED_SCHEMA, parseLanded, parseLandedBytes, readLandedPath } from "./internal/landed.js";
export type { LandedHeader, LandedFile, LandedBytes, ParseLandedOptions } from "./internal/landed.js";
export { acquireLock, lockHolder } from "./internal/lock.js";
export type { LockHandle, LockHolder } from "./internal/lock.js";
export { openSession, SessionStore } from "./internal/session.js";
export { Pass } from "./internal/pass.js";
export { encodeWindow, windowPieces, joinEncoded } from "./internal/records.js";
export type { EncodedRecords, EncodedWindow, RecordFacts, WindowPiece } from "./internal/records.js";
export { TAIL_WINDOW, DEFAULT_MAX_DELTA_BYTES, DEFAULT_MAX_WINDOWS } from "./internal/contracts.js";
export type {
  SourceRef, SourceLine, Framing, CarriedState, ConvertContext, Convert, MaskUnknown, Logger, SessionOptions, SourceStatus, SourceOutcome, PassSummary, ResolveMode,
} from "./internal/contracts.js";
export { readIndex, releaseIndex, encodeBlock, encodeIndexHeader, decodeIndex, INDEX_SCHEMA, ENTRY_STRING_FIELDS } from "./internal/indexer.js";
export { indexedSeq, indexStamp } from "./internal/index-state.js";
export type { SessionIndex, IndexedFile, IndexEntry, IndexUpdate, IndexBlock, IndexLookup, ReadIndexOptions } from "./internal/indexer.js";
export { verify, formatProblem } from "./internal/verify.js";
export type { VerifyResult, VerifyProblem, VerifyCode } from "./internal/verify.js";
export { repack } from "./internal/repack.js";
export type { RepackOptions, RepackResult } from "./internal/repack.js";
export { listSessions, checkLostSessions, LostSessionTracker, status, listConflicts } from "./internal/sessions.js";
export { lostToCheck } from "./internal/lost.js";
export type { ResolveSource, LostSessionOptions, LostSessionResult, StoreStatus, ConflictEntry, PendingSource } from "./internal/sessions.js";
export { readLanded, readLandedBytes } from "./internal/read.js";
export {
  FORGET_DIR, REMOVED_DIR, CONVERSATIONS_DIR, FORGET_SCHEMA, encodeForgetRecord, decodeForgetRecord, readForgetRecord, isForgotten, listForgotten,
  previewRemoval, forgetSession, finishRemovals, clearRemoved, undoForget, discardDerived,
} from "./internal/removal.js";
export type { ForgetRecord, ForgetRequest, RemovalOptions, RemovalResult, RemovalPreview } from "./internal/removal.js";
// The spool's file names (the metrics codec itself is the `@lake/store/metrics` subpath): a caller's
// state that names spool files (push.state's OTLP answers) drops a forgotten session's with them.
export { parseSpoolName } from "./internal/metrics/spool.js";
export type { SpoolName } from "./internal/metrics/spool.js";
export { listDerived, cleanDerived } from "./internal/clean.js";
export type { DerivedItem, CleanOptions } from "./internal/clean.js";
export { restoreSession } from "./internal/restore.js";
export type { RestoredFile, RestoreResult } from "./internal/restore.js";
export {
  PASS_STATE_SCHEMA, PASS_STATE_FILE, emptyPassState, encodePassState, decodePassState, readPassState, readPassStateSessions, writePassState, sessionUnchanged, checkSession, confirmSource, listConversations,
} from "./internal/pass-state.js";
export type { PassState, SessionMark, PassStateSource, FoundSource, PassListing } from "./internal/pass-state.js";

/**
 * @lake/store/pass — what a pass decides from before it opens a session: pass.state and the cursor
 * check of an unchanged session, the index's watermark, the forget records, the root's sessions and
 * the lost-session tracker. A subpath of its own so a pass with nothing to do (the collector's no-op
 * collect and push) starts without loading the session store, the indexer's writer or the records.
 */
export {
  PASS_STATE_SCHEMA, PASS_STATE_FILE, emptyPassState, encodePassState, decodePassState, readPassState, readPassStateSessions, writePassState, sessionUnchanged, checkSession, confirmSource, listConversations,
} from "./internal/pass-state.js";
export type { PassState, SessionMark, PassStateSource, FoundSource, PassListing } from "./internal/pass-state.js";
export { indexedSeq, indexStamp } from "./internal/index-state.js";
export { decodeCursor } from "./internal/cursor.js";
export type { Cursor, CursorState } from "./internal/cursor.js";
export { FORGET_DIR, REMOVED_DIR, isForgotten, listForgotten, readForgetRecord } from "./internal/removal.js";
export type { ForgetRecord } from "./internal/removal.js";
export { listSessionIds as listSessions } from "./internal/scan.js";
export { LostSessionTracker, lostToCheck } from "./internal/lost.js";
export { StoreError, isStoreError } from "./internal/errors.js";
export type { StoreErrorCode, StoreErrorData } from "./internal/errors.js";

/**
 * @lake/store/records — a window's records encoded as they land (the landed line format's one
 * encoder), for a caller that converts windows in worker threads: {@link encodeWindow} there, the
 * result handed to the pass through `SourceRef.encode`. A subpath of its own so a worker loads the
 * encoder without the session store.
 */
export { encodeWindow, windowPieces, joinEncoded } from "./internal/records.js";
export type { EncodedRecords, EncodedWindow, RecordFacts, WindowPiece } from "./internal/records.js";

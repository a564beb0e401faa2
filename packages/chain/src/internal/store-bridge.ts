// The session index comes from @lake/store (its session and pass subpaths: the package root would also load
// verify, repack, restore and clean). Its shape is structurally the chain's `SessionIndex`; the assignment
// below is checked by the compiler, so a change in the store's index that the chain cannot read fails the build.
import { readIndex } from "@lake/store/session";
import { isForgotten } from "@lake/store/pass";
import type { SessionIndex } from "./types.js";

/**
 * @lake/store's `readIndex`: the session's derived index as far as indexed_seq — with `from`, by range: the entries
 * of the files from that seq on, every entry searched on demand (`lookup`).
 */
export function defaultReadIndex(root: string, sessionId: string, options: { from?: number } = {}): SessionIndex {
  const index: SessionIndex = readIndex(root, sessionId, { ...options, fields: CHAIN_FIELDS });
  return index;
}

/**
 * The optional fields a round built from a read by range takes from its entries: calls, launches and vendor types.
 * Ids and links (for the anchors) are asked of its lookup; message, request and usage ids are never needed.
 */
const CHAIN_FIELDS = ["tool_call_id", "child_stream", "vendor_type"] as const;

/** @lake/store's `isForgotten`: a forgotten session is never parsed (its removal may be under way). */
export function forgotten(root: string, sessionId: string): boolean {
  return isForgotten(root, sessionId);
}

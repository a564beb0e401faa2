// The session index comes from @lake/store (its session and pass subpaths: the package root would also load
// verify, repack, restore and clean). Its shape is structurally the chain's `SessionIndex`; the assignment
// below is checked by the compiler, so a change in the store's index that the chain cannot read fails the build.
import { readIndex } from "@lake/store/session";
import { isForgotten } from "@lake/store/pass";
import type { SessionIndex } from "./types.js";

/**
 * @lake/store's `readIndex`: the session's derived index as far as indexed_seq — with `from`, by range: the entries
 * of the files from that seq on, the ones before searched on demand (`earlier`).
 */
export function defaultReadIndex(root: string, sessionId: string, options: { from?: number } = {}): SessionIndex {
  const index: SessionIndex = readIndex(root, sessionId, { ...options, fields: CHAIN_FIELDS });
  return index;
}

/** The optional fields of the chain's `IndexEntry`: the only ones decoded for it (not message, request or usage ids). */
const CHAIN_FIELDS = ["record_id", "parent_id", "tool_call_id", "child_stream", "vendor_type"] as const;

/** @lake/store's `isForgotten`: a forgotten session is never parsed (its removal may be under way). */
export function forgotten(root: string, sessionId: string): boolean {
  return isForgotten(root, sessionId);
}

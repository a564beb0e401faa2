// The session index comes from @lake/store. Until its `readIndex` is exported, callers pass `readIndex` themselves.
import * as store from "@lake/store";
import { ChainError } from "./errors.js";
import type { SessionIndex } from "./types.js";

type ReadIndex = (root: string, sessionId: string) => SessionIndex | Promise<SessionIndex>;

/** @lake/store's `readIndex`, looked up at call time. */
export async function defaultReadIndex(root: string, sessionId: string): Promise<SessionIndex> {
  const fn = (store as unknown as { readIndex?: ReadIndex }).readIndex;
  if (typeof fn !== "function") {
    throw new ChainError("InvalidInput", `@lake/store exports no readIndex: pass options.readIndex to parse ${sessionId}`, { data: { root, sessionId } });
  }
  return await fn(root, sessionId);
}

import { buildRoundBody } from "./build.js";
import { foldState } from "./conversation.js";
import { DEFAULT_POLICY, type ChainPolicy } from "./policy.js";
import type { Round, RoundBody, SessionIndex } from "./types.js";

/**
 * Build the round that would follow `rounds` (a chain's decoded rounds, in order) from a session index, or null when
 * the index holds nothing new. Pure: the same rounds, index and policy always give the same round body, hence the
 * same bytes and commit digest once encoded (`encodeRound`).
 *
 * @example
 * const body = buildRound("s1", [], index);
 * if (body) console.log(encodeRound(body).fileName); // r000001-<12 hex>.sf
 */
export function buildRound(conversationId: string, rounds: readonly Round[], index: SessionIndex, policy: ChainPolicy = DEFAULT_POLICY): RoundBody | null {
  return buildRoundBody(foldState(conversationId, rounds), index, policy);
}

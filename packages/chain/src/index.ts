export { ChainError, isChainError } from "./internal/errors.js";
export type { ChainErrorCode, ChainErrorData } from "./internal/errors.js";
export { canonicalJson } from "./internal/canonical-json.js";
export type { Json } from "./internal/canonical-json.js";
export type {
  IndexEntry,
  IndexFile,
  IndexLookup,
  SessionIndex,
  RefTuple,
  Round,
  RoundBody,
  RoundFile,
  RoundTurn,
  RoundCall,
  RoundLaunch,
  RoundMessage,
  RoundCompaction,
  RoundTombstone,
  RoundVersions,
} from "./internal/types.js";
export { DEFAULT_POLICY, PARSER_NAME, PARSER_VERSION } from "./internal/policy.js";
export type { ChainPolicy } from "./internal/policy.js";
export { roundFileName, parseRoundFileName, commitDigest, encodeRound, decodeRound } from "./internal/round.js";
export type { EncodedRound } from "./internal/round.js";
export { foldRounds, compareRef } from "./internal/conversation.js";
export type {
  Conversation,
  Turn,
  ToolCall,
  StreamNode,
  Launch,
  Message,
  Compaction,
  Tombstone,
  FileBinding,
  RoundSummary,
  RecordRef,
} from "./internal/conversation.js";
export { buildRound } from "./internal/api.js";
export { RESERVATION_MAX_AGE_MS } from "./internal/lock.js";
export type { InstallMode } from "./internal/lock.js";
export {
  chainDir,
  listChain,
  readChain,
  foldChain,
  recoverHead,
  readConversationState,
  publishRound,
  parse,
  releaseFold,
  FOLD_MIN_BYTES,
} from "./internal/chain.js";
export type { PublishStep, PublishOptions, ParseOptions, ChainListing, ChainRead, HeadState, Published, ParseResult } from "./internal/chain.js";
export { verify, citedSeqs } from "./internal/verify.js";
export type { VerifyReport, RoundVerdict } from "./internal/verify.js";

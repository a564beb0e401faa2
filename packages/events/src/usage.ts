// `@lake/events/usage`: usage arithmetic, countUsage and rollups without the record schema, so a
// program that only counts (the reader's usage reports) does not load zod. Everything here is
// also exported from the package root.
export { EventsError, isEventsError } from "./internal/errors.js";
export type { EventsErrorCode, EventsErrorData } from "./internal/errors.js";
export { USAGE_KEYS, sumUsage, addUsageInto, totalTokens, isEmptyUsage, usageDelta, usageEquals, recordDay, isoTime, isIsoMillis } from "./internal/usage.js";
export type { Usage, UsageKey } from "./internal/usage.js";
export { RUNTIMES } from "./internal/runtimes.js";
export type { Runtime } from "./internal/runtimes.js";
export { countUsage, groupUsage, usageBySession, usageByDay } from "./internal/accounting.js";
export type { UsageRecord, UsageContribution, UsageTotals, UsageOutcome, CountUsageOptions } from "./internal/accounting.js";
export {
  USAGE_ROLLUP_FORMAT,
  USAGE_ROLLUP_VERSION,
  USAGE_ROLLUP_COLUMNS,
  USAGE_ROLLUP_FILES,
  PROMPT_CLASSES,
  promptClass,
  usageKeyHash,
  usageIdentity,
  rollupRows,
  buildUsageRollup,
  encodeUsageRollup,
  decodeUsageRollup,
  rollupContributions,
  overlappingRollups,
  USAGE_CARRY_FORMAT,
  USAGE_CARRY_VERSION,
  USAGE_CARRY_COLUMNS,
  encodeUsageCarry,
  decodeUsageCarry,
  usageIds,
  continueUsageRollup,
  USAGE_CARRY_STATE_FORMAT,
  USAGE_CARRY_STATE_VERSION,
  usageCarryState,
  growUsageCarry,
  usageCarryRecords,
  encodeUsageCarryState,
  decodeUsageCarryState,
} from "./internal/rollup.js";
export type { UsageRollup, UsageRollupRow, UsageIdentity, EncodedUsageRollup, UsageCarryState, UsageCarryChunk } from "./internal/rollup.js";

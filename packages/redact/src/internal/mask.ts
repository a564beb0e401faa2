/** Matches one mask in masked text: group 1 the rule id, group 2 the 8 hex keyed hash. */
export const MASK_PATTERN = /\[REDACTED:([a-z0-9][a-z0-9-]{0,63}):([0-9a-f]{8})\]/g;

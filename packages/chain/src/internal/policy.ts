// The classification policy: which vendor types mean what. Data, not runtime code, and versioned:
// a round names the policy id and version it was built with.

/** Rules that map index entries to roles the chain cannot read from `kind` alone. */
export interface ChainPolicy {
  /** Policy id, carried in every round. */
  id: string;
  /** Policy version, carried in every round; bump it whenever a rule changes. */
  version: number;
  /** Vendor types of compaction boundaries (exact, or a prefix followed by `/`). */
  compaction: readonly string[];
  /** Vendor types of queue operations (exact, or a prefix followed by `/`; the suffix is the operation). */
  queued: readonly string[];
  /** Kinds that start a new turn in their stream (unless they arrive while a call is open: then they steer). */
  turnStart: readonly string[];
}

/** The default policy (`lake-default` version 1). */
export const DEFAULT_POLICY: ChainPolicy = Object.freeze({
  id: "lake-default",
  version: 1,
  compaction: Object.freeze(["system/compact_boundary", "compacted", "event_msg/context_compacted"]),
  queued: Object.freeze(["queue-operation"]),
  turnStart: Object.freeze(["user"]),
});

/**
 * The main stream's name: the same value as @lake/events' `MAIN_STREAM` (a test holds them equal). Kept here so that
 * loading the chain does not load the record schema's dependencies (zod, apache-arrow).
 */
export const MAIN_STREAM = "main";

/** Version of the round-building algorithm (not the package version): bumped when the same input would give other bytes. */
export const PARSER_VERSION = 1;
/** Parser name carried in every round. */
export const PARSER_NAME = "@lake/chain";

/** Whether `vendorType` matches one of `patterns` (exactly, or as `pattern/…`); returns the suffix after the pattern. */
export function matchVendorType(vendorType: string | undefined, patterns: readonly string[]): { matched: boolean; suffix: string | null } {
  if (vendorType === undefined) return { matched: false, suffix: null };
  for (const p of patterns) {
    if (vendorType === p) return { matched: true, suffix: null };
    if (vendorType.startsWith(`${p}/`)) return { matched: true, suffix: vendorType.slice(p.length + 1) };
  }
  return { matched: false, suffix: null };
}

/**
 * The usage keys, in broca's meaning (WAL data model 2.5), then `cache_write_1h_tokens` (added
 * later: the part of cache_write_tokens written to the 1-hour cache).
 */
export const USAGE_KEYS = ["input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens", "cache_write_1h_tokens"] as const;
export type UsageKey = (typeof USAGE_KEYS)[number];

/**
 * Token usage in broca's meaning. Every key is optional: absent means "not reported", never zero.
 * - input_tokens: fresh, non-cached input (disjoint from cached_input_tokens)
 * - cached_input_tokens: cache reads
 * - cache_write_tokens: cache creation (5-minute and 1-hour writes together)
 * - output_tokens: output, including reasoning
 * - reasoning_tokens: a subset of output_tokens; never add the two
 * - cache_write_1h_tokens: the part of cache_write_tokens written with a 1-hour lifetime (billed
 *   higher than 5-minute writes); a subset, never added. Absent = not reported, not "no 1-hour writes".
 */
export type Usage = { [K in UsageKey]?: number };

/**
 * Sum usages with absent ≠ zero: a key stays absent only if no operand reported it; otherwise the
 * sum covers the operands that reported it (a lower bound).
 */
export function sumUsage(usages: Iterable<Usage | null | undefined>): Usage {
  const out: Usage = {};
  for (const u of usages) {
    if (!u) continue;
    for (const k of USAGE_KEYS) {
      const v = u[k];
      if (v !== undefined) out[k] = (out[k] ?? 0) + v;
    }
  }
  return out;
}

/** Add `u` into `acc` in place (absent ≠ zero). */
export function addUsageInto(acc: Usage, u: Usage | null | undefined): Usage {
  if (!u) return acc;
  for (const k of USAGE_KEYS) {
    const v = u[k];
    if (v !== undefined) acc[k] = (acc[k] ?? 0) + v;
  }
  return acc;
}

/**
 * Total tokens: input + cached input + cache writes + output (reasoning is inside output and is
 * not added). Null when none of those four keys was reported.
 */
export function totalTokens(u: Usage): number | null {
  let any = false;
  let t = 0;
  for (const k of ["input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens"] as const) {
    const v = u[k];
    if (v !== undefined) {
      any = true;
      t += v;
    }
  }
  return any ? t : null;
}

/** True when no key is reported. */
export function isEmptyUsage(u: Usage | null | undefined): boolean {
  return !u || USAGE_KEYS.every((k) => u[k] === undefined);
}

/**
 * Per-key difference `cur - prev` for running totals; a key absent in `cur` stays absent; a key
 * absent in `prev` counts from zero. A negative difference (a counter reset) counts `cur` whole.
 */
export function usageDelta(cur: Usage, prev: Usage | null | undefined): Usage {
  const out: Usage = {};
  for (const k of USAGE_KEYS) {
    const c = cur[k];
    if (c === undefined) continue;
    const p = prev?.[k] ?? 0;
    out[k] = c >= p ? c - p : c;
  }
  return out;
}

/** Per-key equality (absent equals only absent). */
export function usageEquals(a: Usage | null | undefined, b: Usage | null | undefined): boolean {
  return USAGE_KEYS.every((k) => a?.[k] === b?.[k]);
}

/** The UTC day (yyyy-mm-dd) of a record's timestamp, or "unknown". */
export function recordDay(r: { ts?: string | undefined }): string {
  const ts = r.ts;
  if (ts && /^\d{4}-\d{2}-\d{2}/.test(ts)) {
    const d = new Date(ts);
    if (!Number.isNaN(d.getTime())) return d.toISOString().slice(0, 10);
  }
  return "unknown";
}

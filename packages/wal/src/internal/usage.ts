/** The five usage keys (spec section 2.5), each an optional count. Absent is not zero. */
export const USAGE_KEYS = [
  "input_tokens",
  "cached_input_tokens",
  "cache_write_tokens",
  "output_tokens",
  "reasoning_tokens",
] as const;

/** One usage key name. */
export type UsageKey = (typeof USAGE_KEYS)[number];

/**
 * Token usage with broca's meaning: `input_tokens` fresh non-cached input, `cached_input_tokens`
 * cache reads, `cache_write_tokens` cache creation, `output_tokens` including reasoning,
 * `reasoning_tokens` a subset of output. A key left out means "not reported", never 0.
 */
export type Usage = { [K in UsageKey]?: number };

/**
 * Sum usages with the absent-versus-zero rule: a key stays absent only if no input reported it;
 * otherwise the sum covers the inputs that did (a lower bound). `sumUsage([])` is `{}`.
 */
export function sumUsage(usages: Iterable<{ readonly [K in UsageKey]?: number | undefined }>): Usage {
  const out: Usage = {};
  for (const u of usages) {
    for (const k of USAGE_KEYS) {
      const v = u[k];
      if (v === undefined) continue;
      out[k] = (out[k] ?? 0) + v;
    }
  }
  return out;
}

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
    const iso = isoTime(ts);
    if (iso !== undefined) return iso.slice(0, 10);
  }
  return "unknown";
}

/**
 * `ts` as `Date.prototype.toISOString` writes the time `Date.parse` reads in it (undefined: it
 * reads none). A time already in that form (`yyyy-mm-ddThh:mm:ss.sssZ`, every field in range, as
 * collected records carry) is itself, found without a Date: counting a push's usage parsed one
 * per usage line.
 */
export function isoTime(ts: string): string | undefined {
  if (isIsoMillis(ts)) return ts;
  const ms = Date.parse(ts);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** Days in each month of a common year. */
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The two-digit number at `i` of `s`, or -1. */
function twoDigits(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/**
 * True when `s` is `YYYY-MM-DDTHH:MM:SS.mmmZ` naming a real instant, so that Date would print it
 * back unchanged. (Date rolls an impossible day or hour over to a later one, `02-30` to `03-01`: such
 * a string is not taken here.) The adapters' time normalizer and isoTime share it.
 */
export function isIsoMillis(s: string): boolean {
  if (s.length !== 24 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58 || s.charCodeAt(19) !== 46 || s.charCodeAt(23) !== 90) return false;
  const hi = twoDigits(s, 0);
  const lo = twoDigits(s, 2);
  const month = twoDigits(s, 5);
  const day = twoDigits(s, 8);
  if (hi < 0 || lo < 0 || month < 1 || month > 12 || day < 1 || twoDigits(s, 20) < 0 || s.charCodeAt(22) < 48 || s.charCodeAt(22) > 57) return false;
  const hour = twoDigits(s, 11);
  const minute = twoDigits(s, 14);
  const second = twoDigits(s, 17);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return false;
  const year = hi * 100 + lo;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : MONTH_DAYS[month - 1]!);
}

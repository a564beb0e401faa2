/**
 * Canonical JSON, the one writer every digest and create-only file of lake uses: object keys sorted
 * by UTF-16 code unit (JavaScript's default sort), no whitespace, strings and numbers written exactly
 * as `JSON.stringify` writes them, undefined object members dropped. The same value always gives the
 * same text. What a caller refuses (numbers that are not safe integers) or caps (depth) is an option.
 */

/** What {@link canonicalJson} writes and refuses. */
export interface CanonicalJsonOptions {
  /**
   * `json` (default): every finite number as JavaScript writes it, NaN and ±Infinity as `null` (as
   * `JSON.stringify` does). `safe-integer`: any other number is refused.
   */
  readonly numbers?: "json" | "safe-integer";
  /**
   * Values nested deeper than this (the top value is depth 0) are written as the string
   * `"[depth]"` instead of themselves. Default: no cap.
   */
  readonly maxDepth?: number;
  /** The error thrown for a value the options refuse, made from the reason (default: a TypeError). */
  readonly refuse?: (reason: string) => Error;
}

const typeError = (reason: string): Error => new TypeError(reason);

/**
 * Write `value` as canonical JSON (no trailing newline). Throws `refuse(reason)` for what JSON cannot
 * hold (undefined outside an object member, a function, a bigint, a symbol) and for a number the
 * `numbers` option refuses.
 */
export function canonicalJson(value: unknown, options: CanonicalJsonOptions = {}): string {
  const safeOnly = options.numbers === "safe-integer";
  const max = options.maxDepth ?? Infinity;
  const refuse = options.refuse ?? typeError;
  const write = (v: unknown, depth: number): string => {
    if (depth > max) return '"[depth]"';
    if (v === null) return "null";
    switch (typeof v) {
      case "boolean":
        return v ? "true" : "false";
      case "number":
        if (safeOnly && !Number.isSafeInteger(v)) throw refuse(`canonical JSON holds safe integers only, got ${v}`);
        return Number.isFinite(v) ? String(v) : "null";
      case "string":
        return JSON.stringify(v);
      case "object": {
        if (Array.isArray(v)) {
          let out = "[";
          for (let i = 0; i < v.length; i++) out += (i === 0 ? "" : ",") + write(v[i], depth + 1);
          return out + "]";
        }
        const o = v as Record<string, unknown>;
        let out = "{";
        let first = true;
        for (const k of Object.keys(o).sort()) {
          const x = o[k];
          if (x === undefined) continue;
          out += (first ? "" : ",") + JSON.stringify(k) + ":" + write(x, depth + 1);
          first = false;
        }
        return out + "}";
      }
      default:
        throw refuse(`canonical JSON cannot hold a ${typeof v}`);
    }
  };
  return write(value, 0);
}

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
 * The text is written as UTF-8 into one growing buffer and decoded once at the end: a large value (a
 * round of 80,000 record addresses) leaves a few megabytes of short-lived garbage, where joining
 * strings piece by piece held a rope of every piece alive until the end (some 20 times the text).
 * Every string goes through `JSON.stringify`, which escapes lone surrogates, so the bytes decode back
 * to exactly the text the pieces make.
 */
class Writer {
  /** Reused between calls (a value's text is written to it, then decoded); dropped after a large one. */
  private static spare: Buffer | undefined;
  private buf: Buffer;
  private pos = 0;

  constructor() {
    this.buf = Writer.spare ?? Buffer.allocUnsafe(1 << 12);
    Writer.spare = undefined;
  }

  private need(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.pos + n, this.buf.length * 2));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  byte(c: number): void {
    this.need(1);
    this.buf[this.pos++] = c;
  }

  text(s: string): void {
    this.need(s.length * 3);
    this.pos += this.buf.write(s, this.pos, "utf8");
  }

  /**
   * A string (or key) as `JSON.stringify` writes it. One of printable ASCII without a quote or a backslash (an id, a
   * key, a stream name) needs no escape: it is copied as it is, without making the quoted string first.
   */
  string(s: string): void {
    const n = s.length;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return this.text(JSON.stringify(s));
    }
    this.need(n + 2);
    const b = this.buf;
    b[this.pos++] = 0x22;
    if (n > 32) this.pos += b.write(s, this.pos, "latin1");
    else for (let i = 0; i < n; i++) b[this.pos++] = s.charCodeAt(i);
    b[this.pos++] = 0x22;
  }

  /** A safe integer's digits, as `String(n)` writes them (`-0` as `0`). */
  integer(n: number): void {
    if (n === 0) return this.byte(0x30);
    this.need(17);
    if (n < 0) {
      this.buf[this.pos++] = 0x2d;
      n = -n;
    }
    const start = this.pos;
    while (n > 0) {
      const d = n % 10;
      this.buf[this.pos++] = 0x30 + d;
      n = (n - d) / 10;
    }
    for (let i = start, j = this.pos - 1; i < j; i++, j--) {
      const t = this.buf[i]!;
      this.buf[i] = this.buf[j]!;
      this.buf[j] = t;
    }
  }

  /** The text written, and the buffer kept for the next call when it is small. */
  done(): string {
    const out = this.buf.toString("utf8", 0, this.pos);
    if (this.buf.length <= 1 << 16) Writer.spare = this.buf;
    return out;
  }
}

/**
 * An object's keys in `sort()` order (UTF-16 code units). Most objects written come with their keys in
 * order already (parsed from canonical text, or built so): checked first, and a short list out of
 * order is sorted in place by insertion, without the work arrays `sort()` allocates for each call.
 */
function sortedKeys(o: object): string[] {
  const keys = Object.keys(o);
  const n = keys.length;
  let i = 1;
  while (i < n && keys[i - 1]! < keys[i]!) i++;
  if (i >= n) return keys;
  if (n > 32) return keys.sort();
  for (; i < n; i++) {
    const k = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > k) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = k;
  }
  return keys;
}

/**
 * Write `value` as canonical JSON (no trailing newline). Throws `refuse(reason)` for what JSON cannot
 * hold (undefined outside an object member, a function, a bigint, a symbol) and for a number the
 * `numbers` option refuses.
 */
export function canonicalJson(value: unknown, options: CanonicalJsonOptions = {}): string {
  const safeOnly = options.numbers === "safe-integer";
  const max = options.maxDepth ?? Infinity;
  const refuse = options.refuse ?? typeError;
  const w = new Writer();
  const write = (v: unknown, depth: number): void => {
    if (depth > max) return w.text('"[depth]"');
    if (v === null) return w.text("null");
    switch (typeof v) {
      case "boolean":
        return w.text(v ? "true" : "false");
      case "number":
        if (Number.isSafeInteger(v)) return w.integer(v);
        if (safeOnly) throw refuse(`canonical JSON holds safe integers only, got ${v}`);
        return w.text(Number.isFinite(v) ? String(v) : "null");
      case "string":
        return w.string(v);
      case "object": {
        if (Array.isArray(v)) {
          w.byte(0x5b);
          for (let i = 0; i < v.length; i++) {
            if (i > 0) w.byte(0x2c);
            write(v[i], depth + 1);
          }
          return w.byte(0x5d);
        }
        const o = v as Record<string, unknown>;
        w.byte(0x7b);
        let first = true;
        for (const k of sortedKeys(o)) {
          const x = o[k];
          if (x === undefined) continue;
          if (!first) w.byte(0x2c);
          w.string(k);
          w.byte(0x3a);
          write(x, depth + 1);
          first = false;
        }
        return w.byte(0x7d);
      }
      default:
        throw refuse(`canonical JSON cannot hold a ${typeof v}`);
    }
  };
  write(value, 0);
  return w.done();
}

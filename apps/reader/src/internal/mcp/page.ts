// Bounded answers for the MCP tools: a page holds at most `limit` rows (or turns) and `max_bytes`
// of JSON, and names the cursor of the next page. A cursor is opaque to the client: base64url JSON
// of the offset and a hash of the question (and of the fleet's state where the answer depends on
// it), so a cursor is refused for another question or after the fleet changed.
import { createHash } from "node:crypto";
import { canonicalJson } from "@lake/canonical-json";
import { ReaderError } from "../errors.js";

/** Default and largest `max_bytes` of an answer. */
export const DEFAULT_MAX_BYTES = 64 * 1024;
export const MAX_MAX_BYTES = 1024 * 1024;
/** Smallest `max_bytes` a client may ask for. */
export const MIN_MAX_BYTES = 1024;

/** How much one page may hold. */
export interface Bounds {
  /** Rows (or turns) per page. */
  readonly limit: number;
  /** Bytes of the page's rows as JSON (UTF-8). */
  readonly maxBytes: number;
}

/** Bytes of a value as compact JSON. */
export function jsonBytes(v: unknown): number {
  return Buffer.byteLength(JSON.stringify(v) ?? "null", "utf8");
}

/** The hash a cursor carries: the tool, its arguments (without paging ones), and the state it read. */
export function questionHash(tool: string, args: Record<string, unknown>, state = ""): string {
  const { cursor: _c, limit: _l, max_bytes: _m, turns: _t, ...rest } = args;
  return createHash("sha256").update(canonicalJson([tool, rest, state])).digest("hex").slice(0, 24);
}

/** A short hash of an answer's whole content: a cursor given for it is refused once it changed. */
export function stateOf(v: unknown): string {
  return createHash("sha256").update(JSON.stringify(v) ?? "").digest("hex").slice(0, 24);
}

/** Encode a cursor: where the next page starts, for which question. */
export function encodeCursor(offset: number, hash: string): string {
  return Buffer.from(JSON.stringify({ o: offset, q: hash }), "utf8").toString("base64url");
}

function parseCursor(cursor: string): { o: number; q: string } {
  let v: { o?: unknown; q?: unknown } | undefined;
  try {
    v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { o?: unknown; q?: unknown };
  } catch {
    v = undefined;
  }
  if (typeof v !== "object" || v === null || !Number.isSafeInteger(v.o) || (v.o as number) < 0 || typeof v.q !== "string") {
    throw new ReaderError("Usage", `cursor ${JSON.stringify(cursor.slice(0, 40))} is not one this server gave out`);
  }
  return { o: v.o as number, q: v.q };
}

/** The offset a cursor names (0 without one), before its question can be checked (for a tool that knows the fleet's state only after reading). */
export function peekOffset(cursor: string | undefined): number {
  return cursor ? parseCursor(cursor).o : 0;
}

/** The offset a cursor names (0 without one); a cursor of another question, or not one at all, is a Usage error. */
export function decodeCursor(cursor: string | undefined, hash: string): number {
  if (cursor === undefined || cursor === "") return 0;
  const v = parseCursor(cursor);
  if (v.q !== hash) throw new ReaderError("Usage", `the cursor belongs to another question, or the fleet changed since it was given: ask again without a cursor`);
  return v.o;
}

/**
 * Shrink a value until its JSON fits `maxBytes`: first every string longer than some length is cut
 * (with "…"), the longest length that fits, down to 64 characters; then the longest arrays are
 * halved from their end until it fits. Returns the value as is when it already fits.
 */
export function shrinkToFit<T>(value: T, maxBytes: number): { value: T; clipped: boolean } {
  if (jsonBytes(value) <= maxBytes) return { value, clipped: false };
  const clipAt = (v: unknown, n: number): unknown => {
    if (typeof v === "string") return v.length > n ? v.slice(0, n) + "…" : v;
    if (Array.isArray(v)) return v.map((x) => clipAt(x, n));
    if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clipAt(x, n)]));
    return v;
  };
  let lo = 64;
  let hi = Math.max(lo, longestString(value));
  let best = clipAt(value, lo);
  if (jsonBytes(best) <= maxBytes) {
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      const c = clipAt(value, mid);
      if (jsonBytes(c) <= maxBytes) {
        lo = mid;
        best = c;
      } else hi = mid - 1;
    }
    return { value: best as T, clipped: true };
  }
  // Still too big at 64 characters a string: halve the longest arrays.
  for (;;) {
    if (jsonBytes(best) <= maxBytes) break;
    const arr = longestArray(best);
    if (!arr || arr.length === 0) break;
    arr.splice(arr.length === 1 ? 0 : Math.ceil(arr.length / 2));
  }
  return { value: best as T, clipped: true };
}

function longestString(v: unknown): number {
  if (typeof v === "string") return v.length;
  if (Array.isArray(v)) return v.reduce((a: number, x) => Math.max(a, longestString(x)), 0);
  if (v !== null && typeof v === "object") return Object.values(v).reduce((a: number, x) => Math.max(a, longestString(x)), 0);
  return 0;
}

function longestArray(v: unknown): unknown[] | undefined {
  let best: unknown[] | undefined;
  const walk = (x: unknown) => {
    if (Array.isArray(x)) {
      if (x.length > 0 && (!best || x.length > best.length)) best = x;
      x.forEach(walk);
    } else if (x !== null && typeof x === "object") Object.values(x).forEach(walk);
  };
  walk(v);
  return best;
}

/** One page of a list. */
export interface Page<T> {
  readonly rows: T[];
  /** Offset of the next page; undefined on the last one. */
  readonly next: number | undefined;
  /** A row was shrunk to fit (shrinkToFit). */
  readonly clipped: boolean;
}

/**
 * The page of `rows` starting at `offset`: at most `limit` rows and `maxBytes` of JSON. A page
 * always holds at least one row (when any is left), shrunk to fit when it alone is too big.
 */
export function takePage<T>(rows: readonly T[], offset: number, bounds: Bounds): Page<T> {
  const out: T[] = [];
  let bytes = 2;
  let clipped = false;
  let i = offset;
  for (; i < rows.length && out.length < bounds.limit; i++) {
    const n = jsonBytes(rows[i]) + 1;
    if (out.length === 0 && n + bytes > bounds.maxBytes) {
      const s = shrinkToFit(rows[i]!, bounds.maxBytes - bytes - 1);
      out.push(s.value);
      clipped = s.clipped;
      i++;
      break;
    }
    if (bytes + n > bounds.maxBytes) break;
    out.push(rows[i]!);
    bytes += n;
  }
  return { rows: out, next: i < rows.length ? i : undefined, clipped };
}

// casUpdate: the read → compute → conditional-write loop every control object is written with.
// Each write carries a fresh `nonce` and the previous writes' nonces (`prev_nonces`, newest first,
// at most NONCE_HISTORY), so a writer whose outcome was hidden (a dropped response, an SDK retry that
// turned its own success into a 412) can tell, by re-reading, whether its write happened — even if
// others have written on top of it since.
import { LayoutError } from "./errors.js";
import type { ObjectStore, StoredObject } from "./types.js";
import { newNonce, sleep } from "./util.js";

/** How many earlier nonces a control object remembers. */
export const NONCE_HISTORY = 32;

/** The fields casUpdate adds to every object it writes. */
export interface CasFields {
  /** Unique per write (128 random bits, hex). */
  readonly nonce: string;
  /** The nonces of the writes before this one, newest first (at most 32). */
  readonly prev_nonces: readonly string[];
}

/** A JSON object. */
export type JsonObject = { readonly [k: string]: unknown };

/** Options of {@link casUpdate}. */
export interface CasOptions {
  /** Give up with a `Conflict` LayoutError after this many conditional writes (default 200). */
  readonly maxAttempts?: number;
  /** Upper bound of the random back-off between attempts, ms (default 100). */
  readonly maxBackoffMs?: number;
}

/** What {@link casUpdate} did. */
export type CasOutcome<T extends object> =
  | {
      /** This call's value is stored (it may have been overwritten since, when `etag` is undefined). */
      readonly changed: true;
      readonly value: T & CasFields;
      /** Etag of this call's write, or undefined when others have written on top of it already. */
      readonly etag: string | undefined;
      readonly attempts: number;
    }
  | {
      /** `fn` returned undefined: nothing was written. */
      readonly changed: false;
      readonly value: (T & CasFields) | undefined;
      readonly etag: string | undefined;
      readonly attempts: number;
    };

/** Parse a stored control object; a body that is not a JSON object is a `Corrupt` LayoutError naming the key. */
export function decodeJsonObject<T extends object>(key: string, obj: StoredObject, store?: string): T {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(obj.body).toString("utf8"));
  } catch (e) {
    throw new LayoutError("Corrupt", `${key}${store ? ` in ${store}` : ""}: not JSON (${e instanceof Error ? e.message : String(e)})`, { data: store ? { key, store } : { key }, cause: e });
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new LayoutError("Corrupt", `${key}${store ? ` in ${store}` : ""}: not a JSON object`, { data: store ? { key, store } : { key } });
  }
  return v as T;
}

/** Serialise a control object (JSON, one line, newline-terminated). */
export function encodeJsonObject(v: object): Uint8Array {
  return Buffer.from(JSON.stringify(v) + "\n", "utf8");
}

/** Read a control object, or undefined when the key does not exist. */
export async function readJson<T extends object>(store: ObjectStore, key: string): Promise<{ value: T; etag: string } | undefined> {
  const obj = await store.get(key);
  return obj === undefined ? undefined : { value: decodeJsonObject<T>(key, obj, store.url), etag: obj.etag };
}

/** Full-jitter exponential back-off: uniform in [0, min(max, 2 * 2^attempt)) ms. */
function backoff(attempt: number, max: number): Promise<void> {
  return sleep(Math.random() * Math.min(max, 2 * 2 ** Math.min(attempt, 10)));
}

/**
 * Atomically update the JSON object at `key`: read it, call `fn(current)` (undefined when the key is
 * missing), and write the result with create-if-absent or compare-and-swap; on a conflict, read again
 * and repeat. `fn` may be called several times and must be pure; returning undefined stops without
 * writing. The written object gets a fresh `nonce` and `prev_nonces`. A write whose outcome is hidden
 * (5xx, timeout, an SDK retry's 412) is settled by looking for this call's nonces in what is stored.
 */
export async function casUpdate<T extends object>(
  store: ObjectStore,
  key: string,
  fn: (current: (T & CasFields) | undefined) => T | undefined | Promise<T | undefined>,
  options: CasOptions = {},
): Promise<CasOutcome<T>> {
  const maxAttempts = options.maxAttempts ?? 200;
  const maxBackoff = options.maxBackoffMs ?? 100;
  const mine = new Map<string, T & CasFields>(); // nonce → the value written with it
  const ours = (doc: (T & CasFields) | undefined): (T & CasFields) | undefined => {
    if (doc === undefined || mine.size === 0) return undefined;
    if (typeof doc.nonce === "string" && mine.has(doc.nonce)) return mine.get(doc.nonce);
    for (const n of Array.isArray(doc.prev_nonces) ? doc.prev_nonces : []) if (mine.has(n)) return mine.get(n);
    return undefined;
  };
  let cur: StoredObject | undefined = await store.get(key);
  for (let attempt = 1; ; attempt++) {
    const doc = cur === undefined ? undefined : decodeJsonObject<T & CasFields>(key, cur, store.url);
    const found = ours(doc);
    if (found !== undefined) return { changed: true, value: found, etag: doc?.nonce === found.nonce ? cur?.etag : undefined, attempts: attempt - 1 };
    if (attempt > maxAttempts) {
      throw new LayoutError("Conflict", `compare-and-swap of ${key} in ${store.url} gave up after ${maxAttempts} attempts`, { data: { key, store: store.url } });
    }
    const next = await fn(doc);
    if (next === undefined) return { changed: false, value: doc, etag: cur?.etag, attempts: attempt - 1 };
    const nonce = newNonce();
    const prev = doc === undefined ? [] : [doc.nonce, ...(Array.isArray(doc.prev_nonces) ? doc.prev_nonces : [])].filter((n): n is string => typeof n === "string").slice(0, NONCE_HISTORY);
    const value = { ...next, nonce, prev_nonces: prev } as T & CasFields;
    mine.set(nonce, value);
    const body = encodeJsonObject(value);
    const r = cur === undefined ? await store.putIfAbsent(key, body) : await store.putIfMatch(key, body, cur.etag);
    if (r.status === "written") return { changed: true, value, etag: r.etag, attempts: attempt };
    cur = r.current;
    if (r.status === "unknown") {
      // The request may still land: give it a moment, then look again.
      await sleep(20 + Math.random() * 30);
      cur = await store.get(key);
    } else {
      await backoff(attempt, maxBackoff);
    }
  }
}

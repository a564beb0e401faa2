// The JSON every fleet object is written in, and the strict-decoding helpers the format modules share.
// Canonical JSON: object keys sorted (recursively), no insignificant whitespace, undefined members
// dropped, newline-terminated — the same content always gives the same bytes.
import { canonicalJson as write } from "@lake/canonical-json";
import { LayoutError } from "../errors.js";

/** Serialise `v` as canonical JSON (`@lake/canonical-json`: sorted keys, no spaces, undefined members dropped), without a newline. */
export function canonicalJson(v: unknown): string {
  return write(v);
}

/** {@link canonicalJson} as UTF-8 bytes with a trailing newline: the bytes of every create-only fleet object. */
export function canonicalBytes(v: unknown): Uint8Array {
  return Buffer.from(canonicalJson(v) + "\n", "utf8");
}

/** A `Corrupt` LayoutError naming the object: `<key>: <reason>`. */
export function corrupt(key: string, reason: string, cause?: unknown): LayoutError {
  return new LayoutError("Corrupt", `${key}: ${reason}`, { data: { key, detail: reason }, cause });
}

/** Parse bytes as one JSON object, or throw Corrupt naming `key`. */
export function jsonObject(key: string, body: Uint8Array): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"));
  } catch (e) {
    throw corrupt(key, `not JSON (${e instanceof Error ? e.message : String(e)})`, e);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw corrupt(key, "not a JSON object");
  return v as Record<string, unknown>;
}

/** Field readers that throw Corrupt naming the object and the field. */
export class Fields {
  constructor(
    readonly key: string,
    readonly v: Record<string, unknown>,
  ) {}
  fail(reason: string): never {
    throw corrupt(this.key, reason);
  }
  str(name: string): string {
    const x = this.v[name];
    if (typeof x !== "string") this.fail(`${name} is not a string`);
    return x;
  }
  optStr(name: string): string | undefined {
    const x = this.v[name];
    if (x === undefined) return undefined;
    if (typeof x !== "string") this.fail(`${name} is not a string`);
    return x;
  }
  nullableStr(name: string): string | null {
    const x = this.v[name];
    if (x === null) return null;
    if (typeof x !== "string") this.fail(`${name} is not a string or null`);
    return x;
  }
  int(name: string): number {
    const x = this.v[name];
    if (!Number.isSafeInteger(x) || (x as number) < 0) this.fail(`${name} is not a non-negative integer`);
    return x as number;
  }
  time(name: string): string {
    const x = this.str(name);
    if (!ISO_RE.test(x) || !Number.isFinite(Date.parse(x))) this.fail(`${name} is not an ISO-8601 UTC time`);
    return x;
  }
  hex64(name: string): string {
    const x = this.str(name);
    if (!/^[0-9a-f]{64}$/.test(x)) this.fail(`${name} is not 64 lowercase hex digits`);
    return x;
  }
  strings(name: string): string[] {
    const x = this.v[name];
    if (!Array.isArray(x) || !x.every((s) => typeof s === "string")) this.fail(`${name} is not a list of strings`);
    return x as string[];
  }
  obj(name: string): Fields {
    const x = this.v[name];
    if (typeof x !== "object" || x === null || Array.isArray(x)) this.fail(`${name} is not an object`);
    return new Fields(this.key, x as Record<string, unknown>);
  }
  list(name: string): Fields[] {
    const x = this.v[name];
    if (!Array.isArray(x)) this.fail(`${name} is not a list`);
    return x.map((e, i) => {
      if (typeof e !== "object" || e === null || Array.isArray(e)) this.fail(`${name}[${i}] is not an object`);
      return new Fields(this.key, e as Record<string, unknown>);
    });
  }
}

/** ISO-8601 UTC as `Date.toISOString` writes it (milliseconds optional). */
export const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

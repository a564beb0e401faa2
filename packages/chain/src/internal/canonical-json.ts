import { ChainError } from "./errors.js";

/** A value canonical JSON can hold: no floats, no undefined, no non-plain objects. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Canonical JSON: object keys sorted by UTF-16 code unit (JavaScript's default sort), no whitespace,
 * strings escaped exactly as `JSON.stringify` escapes them, numbers only as safe integers.
 * The same value always gives the same text, so a digest over it is stable.
 */
export function canonicalJson(value: Json): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isSafeInteger(value)) throw new ChainError("InvalidInput", `canonical JSON holds safe integers only, got ${value}`);
      return String(value);
    case "string":
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
      const keys = Object.keys(value).sort();
      const parts: string[] = [];
      for (const k of keys) {
        const v = value[k];
        if (v === undefined) continue;
        parts.push(`${JSON.stringify(k)}:${canonicalJson(v)}`);
      }
      return `{${parts.join(",")}}`;
    }
    default:
      throw new ChainError("InvalidInput", `canonical JSON cannot hold a ${typeof value}`);
  }
}

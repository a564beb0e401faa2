import { canonicalJson as write } from "@lake/canonical-json";
import { ChainError } from "./errors.js";

/** A value canonical JSON can hold: no floats, no undefined, no non-plain objects. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const OPTIONS = { numbers: "safe-integer", refuse: (reason: string) => new ChainError("InvalidInput", reason) } as const;

/**
 * Canonical JSON: object keys sorted by UTF-16 code unit (JavaScript's default sort), no whitespace,
 * strings escaped exactly as `JSON.stringify` escapes them, numbers only as safe integers
 * (`@lake/canonical-json` with `numbers: "safe-integer"`; anything else is a ChainError `InvalidInput`).
 * The same value always gives the same text, so a digest over it is stable.
 */
export function canonicalJson(value: Json): string {
  return write(value, OPTIONS);
}

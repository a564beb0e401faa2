import { WalError } from "./errors.js";
import { checkWritableFeatures, recordRequirements } from "./features.js";
import { VER_GATED, VER_RECORD } from "./frame.js";
import { KNOWN_RECORD_TYPE_NAMES } from "./record-types.js";
import type { Json } from "./records.js";

/**
 * Validates a record of a known type against its schema: its value as written (defaulted members
 * filled in), or the reason it does not validate. `records.ts` has the zod one; this module, and so
 * the writer, imports no schema until a known record is written.
 */
export type KnownRecordValidator = (record: { readonly type: string } & Record<string, unknown>) => { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

/** Options for encoding one record frame. */
export interface EncodeRecordOptions {
  /** Record sequence number (≥ 1). */
  readonly seq: number | bigint;
  /** The writer's lease tenure stamp (forensic; default 0). */
  readonly fence?: bigint;
  /**
   * Extra features the record requires beyond those derived from its content (for example
   * flow-scopes/v1). Each must be in the known-feature table.
   */
  readonly requires?: readonly string[];
}

/** A record prepared for writing: its validated JSON object and the features it requires. */
export interface PreparedRecord {
  /** The record as it will be written (defaulted members filled in). */
  readonly record: { readonly type: string } & Record<string, unknown>;
  /** Sorted feature names; empty means a ver 1 frame. */
  readonly requires: readonly string[];
  /** The frame payload bytes (UTF-8 JSON). */
  readonly payload: Buffer;
  /** 1 or 3. */
  readonly ver: number;
}

/**
 * Validate a record and compute its payload: {@link prepareRecord} with the schema check given
 * (`validate`, required for a record of a known type; a skippable type needs none).
 */
export function prepareRecordWith(
  record: { readonly type: string } & Record<string, unknown>,
  extra: readonly string[],
  validate: KnownRecordValidator | undefined,
): PreparedRecord {
  if (typeof record !== "object" || record === null || typeof record.type !== "string") {
    throw new WalError("InvalidArgument", "record is not an object with a string type");
  }
  let out: { readonly type: string } & Record<string, unknown> = record;
  if (KNOWN_RECORD_TYPE_NAMES.has(record.type)) {
    if (validate === undefined) throw new WalError("InvalidArgument", `${record.type} record: no schema to validate it with`);
    const r = validate(record);
    if (!r.ok) throw new WalError("InvalidArgument", `${record.type} record does not validate (${r.reason})`);
    out = r.value as typeof out;
  }
  checkWritableFeatures(extra);
  const requires = [...new Set([...recordRequirements(out), ...extra])].sort();
  const body: Json = requires.length === 0 ? (out as Json) : ({ requires, record: out } as unknown as Json);
  let text: string;
  try {
    text = JSON.stringify(body);
  } catch (e) {
    throw new WalError("InvalidArgument", `record is not JSON-serialisable: ${(e as Error).message}`, { cause: e });
  }
  return { record: out, requires, payload: Buffer.from(text, "utf8"), ver: requires.length === 0 ? VER_RECORD : VER_GATED };
}

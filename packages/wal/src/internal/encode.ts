import { WalError } from "./errors.js";
import { checkWritableFeatures, recordRequirements } from "./features.js";
import { encodeFrame, VER_GATED, VER_RECORD } from "./frame.js";
import { isKnownRecordType, RECORD_SCHEMAS, type Json } from "./records.js";

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
 * Validate a record and compute its payload. A known type is validated against its schema (the
 * defaulted members are written); an unknown type is written as given (a newer build's skippable
 * record). The requirements are the record's own (see `recordRequirements`) plus `extra`.
 */
export function prepareRecord(
  record: { readonly type: string } & Record<string, unknown>,
  extra: readonly string[] = [],
): PreparedRecord {
  if (typeof record !== "object" || record === null || typeof record.type !== "string") {
    throw new WalError("InvalidArgument", "record is not an object with a string type");
  }
  let out: { readonly type: string } & Record<string, unknown> = record;
  if (isKnownRecordType(record.type)) {
    const r = RECORD_SCHEMAS[record.type].safeParse(record);
    if (!r.success) {
      const i = r.error.issues[0];
      throw new WalError("InvalidArgument", `${record.type} record does not validate (${i?.path.join(".") || "record"}: ${i?.message ?? "invalid"})`);
    }
    out = r.data as typeof out;
  }
  checkWritableFeatures(extra);
  const requires = [...new Set([...recordRequirements(out), ...extra])].sort();
  const body: Json = requires.length === 0 ? (out as Json) : ({ requires, record: out } as unknown as Json);
  let text: string;
  try {
    text = JSON.stringify(body);
  } catch (e) {
    throw new WalError("InvalidArgument", `record is not JSON-serialisable: ${(e as Error).message}`, {}, { cause: e });
  }
  return { record: out, requires, payload: Buffer.from(text, "utf8"), ver: requires.length === 0 ? VER_RECORD : VER_GATED };
}

/**
 * Encode one record frame: ver 1 when the record requires nothing, ver 3 (`{requires, record}`)
 * otherwise. The encoder adds the record's own requirements itself.
 */
export function encodeRecordFrame(
  record: { readonly type: string } & Record<string, unknown>,
  options: EncodeRecordOptions,
): Buffer {
  const seq = BigInt(options.seq);
  if (seq < 1n) throw new WalError("InvalidArgument", `record seq ${seq} is below 1`);
  const p = prepareRecord(record, options.requires ?? []);
  return encodeFrame({ ver: p.ver, seq, fence: options.fence ?? 0n, payload: p.payload });
}

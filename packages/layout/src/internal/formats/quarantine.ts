// `quarantine/<agent_id>/<date>/<ulid>.json`: a record withheld by redaction. Never the secret: the
// rules that fired and a keyed hash, so dedup and audits work without reading the value back.
import { canonicalBytes, Fields, jsonObject } from "./json.js";

/** A quarantine object. */
export interface QuarantineRecord {
  readonly status: "quarantined";
  readonly rules_fired: readonly string[];
  /** The keyed hash of the withheld content. */
  readonly hash: string;
  readonly session_id: string;
  readonly runtime: string;
  readonly record_id: string | null;
  readonly ts: string | null;
}

/** The bytes of a quarantine object (canonical JSON). */
export function encodeQuarantine(q: QuarantineRecord): Uint8Array {
  return canonicalBytes(q);
}

/** Decode a quarantine object strictly; Corrupt (naming `key`) unless it is one. */
export function decodeQuarantine(key: string, body: Uint8Array): QuarantineRecord {
  const f: Fields = new Fields(key, jsonObject(key, body));
  if (f.v.status !== "quarantined") f.fail("status is not quarantined");
  return { status: "quarantined", rules_fired: f.strings("rules_fired"), hash: f.str("hash"), session_id: f.str("session_id"), runtime: f.str("runtime"), record_id: f.nullableStr("record_id"), ts: f.nullableStr("ts") };
}

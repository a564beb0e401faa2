// A zod-free check of a record read back from a file lake wrote itself (a landed file whose
// SHA-256 the index recorded): the same acceptance as CanonicalRecordSchema, field by field, at a
// fraction of its cost and without loading zod. Unknown keys are left in place (the schema strips
// them; nothing downstream reads a key it does not know).
import { EventsError } from "./errors.js";
import { KINDS, USAGE_MODES, type CanonicalRecord } from "./record-core.js";
import { USAGE_KEYS } from "./usage.js";

type Check = (v: unknown) => string | undefined;
const isStr: Check = (v) => (typeof v === "string" ? undefined : "expected string");
const nonEmpty: Check = (v) => (typeof v !== "string" ? "expected string" : v.length === 0 ? "too small: expected at least 1 character" : undefined);
const isBool: Check = (v) => (typeof v === "boolean" ? undefined : "expected boolean");
const isInt: Check = (v) => (typeof v === "number" && Number.isSafeInteger(v) ? undefined : "expected int");
const isCount: Check = (v) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? undefined : "expected nonnegative int");
const isCost: Check = (v) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? undefined : "expected nonnegative finite number");
const oneOf =
  (values: readonly string[]): Check =>
  (v) =>
    typeof v === "string" && values.includes(v) ? undefined : `expected one of ${values.join("|")}`;
const strList: Check = (v) => (Array.isArray(v) && v.every((x) => typeof x === "string") ? undefined : "expected array of strings");
const usage: Check = (v) => {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "expected object";
  for (const k of USAGE_KEYS) {
    const x = (v as Record<string, unknown>)[k];
    if (x !== undefined && isCount(x) !== undefined) return `${k}: expected nonnegative int`;
  }
  return undefined;
};

/** Field → [required, check], as CanonicalRecordSchema declares them. */
const FIELDS: readonly (readonly [string, boolean, Check])[] = [
  ["runtime", true, nonEmpty],
  ["session_id", true, nonEmpty],
  ["stream", true, nonEmpty],
  ["record_id", false, isStr],
  ["parent_id", false, isStr],
  ["ts", false, isStr],
  ["kind", true, oneOf(KINDS)],
  ["vendor_type", false, isStr],
  ["role", false, isStr],
  ["model", false, isStr],
  ["text", false, isStr],
  ["tool_name", false, isStr],
  ["tool_call_id", false, isStr],
  ["tool_input", false, isStr],
  ["is_error", false, isBool],
  ["exit_code", false, isInt],
  ["usage", false, usage],
  ["usage_mode", false, oneOf(USAGE_MODES)],
  ["usage_key", false, isStr],
  ["cost_usd", false, isCost],
  ["is_sidechain", false, isBool],
  ["replayed", false, isBool],
  ["message_id", false, isStr],
  ["request_id", false, isStr],
  ["child_stream", false, isStr],
  ["cwd", false, isStr],
  ["repo", false, isStr],
  ["branch", false, isStr],
  ["content_hash", true, isStr],
  ["redaction_rules", true, strList],
  ["attrs", false, isStr],
  ["raw", false, isStr],
  ["source_path", true, isStr],
  ["source_offset", false, isCount],
  ["source_line", false, isCount],
  ["adapter", true, nonEmpty],
  ["adapter_version", true, nonEmpty],
];

/**
 * `value` as a canonical record, checked field by field as CanonicalRecordSchema (parseRecord)
 * accepts it, without zod: for records read back from lake's own files. Throws EventsError
 * `InvalidRecord` naming the first field that does not fit. The object is returned as it is.
 */
export function checkStoredRecord(value: unknown): CanonicalRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new EventsError("InvalidRecord", "invalid record: (root): expected object");
  const o = value as Record<string, unknown>;
  for (const [name, required, check] of FIELDS) {
    const v = o[name];
    if (v === undefined) {
      if (required) throw new EventsError("InvalidRecord", `invalid record: ${name}: required`);
      continue;
    }
    const why = check(v);
    if (why !== undefined) throw new EventsError("InvalidRecord", `invalid record: ${name}: ${why}`);
  }
  return value as CanonicalRecord;
}

// The canonical record's zod schema and its parse functions; the rest of the record (type, kinds,
// content hash, canonicalize) is record-core.ts, re-exported here.
import { z } from "zod";
import { EventsError } from "./errors.js";
import { KINDS, USAGE_MODES, type CanonicalRecord } from "./record-core.js";

export * from "./record-core.js";

const count = z.number().int().nonnegative();
/** zod schema of Usage (unknown keys are dropped). */
export const UsageSchema = z.object({
  input_tokens: count.optional(),
  cached_input_tokens: count.optional(),
  cache_write_tokens: count.optional(),
  output_tokens: count.optional(),
  reasoning_tokens: count.optional(),
  cache_write_1h_tokens: count.optional(),
});

const str = z.string();
const optStr = str.optional();

/**
 * zod schema of the canonical lake record ("Session Data" record). Absent keys mean "not known"
 * (never zero / empty). Unknown keys are stripped, so a newer writer's additions are ignored.
 */
export const CanonicalRecordSchema = z.object({
  runtime: str.min(1),
  session_id: str.min(1),
  stream: str.min(1),
  record_id: optStr,
  parent_id: optStr,
  ts: optStr,
  kind: z.enum(KINDS),
  vendor_type: optStr,
  role: optStr,
  model: optStr,
  text: optStr,
  tool_name: optStr,
  tool_call_id: optStr,
  tool_input: optStr,
  is_error: z.boolean().optional(),
  exit_code: z.number().int().optional(),
  usage: UsageSchema.optional(),
  usage_mode: z.enum(USAGE_MODES).optional(),
  usage_key: optStr,
  cost_usd: z.number().finite().nonnegative().optional(),
  is_sidechain: z.boolean().optional(),
  replayed: z.boolean().optional(),
  message_id: optStr,
  request_id: optStr,
  child_stream: optStr,
  cwd: optStr,
  repo: optStr,
  branch: optStr,
  content_hash: str,
  redaction_rules: z.array(str),
  attrs: optStr,
  raw: optStr,
  source_path: str,
  source_offset: z.number().int().nonnegative().optional(),
  source_line: z.number().int().nonnegative().optional(),
  adapter: str.min(1),
  adapter_version: str.min(1),
});

/** Validate an unknown value as a canonical record; throws EventsError `InvalidRecord` (cause: the ZodError). */
export function parseRecord(value: unknown): CanonicalRecord {
  const r = CanonicalRecordSchema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new EventsError("InvalidRecord", `invalid record: ${issue ? `${issue.path.join(".") || "(root)"}: ${issue.message}` : "schema mismatch"}`, { cause: r.error });
  }
  return r.data as CanonicalRecord;
}

/** Validate without throwing. */
export function safeParseRecord(value: unknown): { success: true; data: CanonicalRecord } | { success: false; error: z.ZodError } {
  const r = CanonicalRecordSchema.safeParse(value);
  return r.success ? { success: true, data: r.data as CanonicalRecord } : { success: false, error: r.error };
}


// The record types of spec section 2.4 by name only, without their schemas: what a zod-free path
// (the writer, a frame scan) needs to tell a known record from a skippable one. records.ts holds
// the schemas; a test keeps the two lists equal.
import type { RecordParse } from "./records.js";

/** Every record type this build knows (the keys of `RECORD_SCHEMAS`). */
export const KNOWN_RECORD_TYPE_NAMES: ReadonlySet<string> = new Set([
  "run_started", "run_finished", "run_paused", "run_config_refrozen", "run_auth_refrozen", "step_started", "model_step_finished",
  "turn_finished", "budget_fired", "tool_batch_started", "tool_dispatch_intent", "tool_no_dispatch", "tool_result", "tool_batch_finished",
  "approval_requested", "approval_resolved", "queued", "retracted", "steered", "model_attempt_finished", "resume_started",
]);

/** Thrown by {@link parseSkippableOnly} at a record of a known type: the caller loads the schemas and decodes again. */
export const NEEDS_SCHEMAS: unique symbol = Symbol("lake-wal/needs-schemas");

/**
 * Interpret a parsed JSON payload without the schemas: not an object or untyped is invalid, an
 * unknown type is skippable; a known type throws {@link NEEDS_SCHEMAS}.
 */
export function parseSkippableOnly(value: unknown): RecordParse {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { kind: "invalid", reason: "record is not a JSON object" };
  const type = (value as Record<string, unknown>)["type"];
  if (typeof type !== "string") return { kind: "invalid", reason: 'record has no string "type" tag' };
  if (KNOWN_RECORD_TYPE_NAMES.has(type)) throw NEEDS_SCHEMAS;
  return { kind: "unknown", type, raw: value as Record<string, unknown> };
}

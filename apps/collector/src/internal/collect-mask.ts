// Masking one adapter record and making it canonical: the step a collect pass runs on every record,
// on the main thread or in a convert worker (collect-worker.ts), with the same result.
import { canonicalizeInPlace, type CanonicalRecord, type RawRecord } from "@lake/events/record";
import { QUARANTINE_TYPE, createRedactor, loadOrCreateKey, type Redactor } from "@lake/redact";

/**
 * The redactor of a collect pass over `root`: its key, lake's rules. The one place it is made, for
 * the main thread and every convert worker alike, so a pooled pass masks as a one-thread pass does.
 */
export function passRedactor(root: string): Redactor {
  return createRedactor({ key: loadOrCreateKey(root) });
}

/** The store's mask for a line that is not JSON (it lands as an unknown record): the redactor's string pass. */
export function maskUnknownText(redactor: Redactor): (text: string) => { text: string; rules: readonly string[] } {
  return (text) => {
    const r = redactor.redactString(text);
    return { text: r.value, rules: r.rules };
  };
}

/** Fields of a record that identify or locate it; never masked (a false positive would break joins). */
const ID_FIELDS = new Set([
  "runtime", "session_id", "stream", "record_id", "parent_id", "ts", "kind", "tool_call_id", "message_id", "request_id",
  "usage_key", "usage_mode", "child_stream", "source_path", "adapter", "adapter_version", "content_hash",
]);

/**
 * Mask one adapter record and make it canonical; a record a quarantine rule fires on is withheld
 * whole. The record is the caller's to hand over (an adapter's, fresh): it is made canonical in
 * place when nothing was masked.
 */
export function maskRecord(redactor: Redactor, raw: RawRecord): CanonicalRecord {
  const r = redactor.redactRecord(contentFields(raw));
  if (r.status === "quarantined") {
    const kept: RawRecord = {
      runtime: raw.runtime, session_id: raw.session_id, stream: raw.stream, kind: raw.kind, source_path: raw.source_path, adapter: raw.adapter, adapter_version: raw.adapter_version,
      vendor_type: QUARANTINE_TYPE,
      attrs: JSON.stringify({ status: r.status, rules_fired: r.rules_fired, hash: r.hash }),
    };
    for (const k of ["record_id", "parent_id", "ts", "tool_call_id", "message_id", "request_id", "usage", "usage_key", "usage_mode", "model", "source_offset", "source_line", "is_sidechain", "replayed", "child_stream"] as const) {
      if (raw[k] !== undefined) (kept as unknown as Record<string, unknown>)[k] = raw[k];
    }
    return canonicalizeInPlace(kept, r.rules_fired);
  }
  // Nothing found: every masked field is the record's own, so the record itself is made canonical
  // (no copy of it first).
  if (r.findings.length === 0) return canonicalizeInPlace(raw, r.rules);
  return canonicalizeInPlace({ ...raw, ...(r.value as Record<string, string>) }, r.rules);
}

/** The fields of a record the redactor sees: its string fields but the identifying ones. */
function contentFields(raw: RawRecord): Record<string, string> {
  const content: Record<string, string> = {};
  // An adapter record is a plain object: for…in walks its own fields, without Object.entries' pairs.
  for (const k in raw) {
    const v = (raw as unknown as Record<string, unknown>)[k];
    if (typeof v === "string" && !ID_FIELDS.has(k)) content[k] = v;
  }
  return content;
}

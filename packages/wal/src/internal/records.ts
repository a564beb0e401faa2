import { z } from "zod";

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A required opaque JSON member: any value, but the key must be present. */
const json = z.custom<Json>((v) => v !== undefined, "required");
/** An unsigned integer (u16/u32/u64 in broca). JSON numbers past 2^53 lose precision but still decode. */
const uint = z.number().nonnegative().refine((n) => Number.isInteger(n), "not an unsigned integer");
const str = z.string();
const hex64 = z.string().regex(/^[0-9a-f]{64}$/, "not 64 lowercase hex");

/** The bind triple object (spec 2.1). */
export const SessionTripleSchema = z.looseObject({ project_root: str, harness: str, session: str });

/** Usage (spec 2.5): five optional unsigned counts; absent is not zero. */
export const UsageSchema = z.looseObject({
  input_tokens: uint.optional(),
  cached_input_tokens: uint.optional(),
  cache_write_tokens: uint.optional(),
  output_tokens: uint.optional(),
  reasoning_tokens: uint.optional(),
});

/** ProviderError: `class` is an open string (transient, permanent, auth_required, auth, …). */
export const ProviderErrorSchema = z.looseObject({
  class: str,
  message: str,
  status: uint.optional(),
  retry_after_secs: z.number().optional(),
  provider_code: str.optional(),
  resets_at_ms: uint.optional(),
  limit_window: json.optional(),
  account_ref: str.optional(),
  credential_id: str.optional(),
});

/** AuthSelection (run_auth_refrozen.auth_selection and RunConfig.auth_selection). */
export const AuthSelectionSchema = z.looseObject({
  credential_id: str,
  account_ref: str.optional(),
  resolved_credential_id: str.optional(),
  vault_request: z
    .looseObject({
      min_ttl_ms: z.number().nullable(),
      force_refresh: z.boolean().optional(),
      /** "get" | "get_scoped" | a later build's op; absent means "get". */
      op: str.optional(),
    })
    .optional(),
});

/** RunConfig: the request config frozen for a run. Inner shapes of tools, generation, etc. are opaque. */
export const RunConfigSchema = z.looseObject({
  model: z.looseObject({ provider_module_id: str, model_id: str }),
  tools: z.array(json),
  tool_choice: json,
  generation: json,
  response_format: json,
  context_epoch: uint,
  renderer_version: uint,
  provider_options: json.optional(),
  cache_tiers: json.optional(),
  frozen_render_config: json.optional(),
  auth_selection: AuthSelectionSchema.optional(),
  tools_were_omitted: z.boolean().optional(),
  budget: json.optional(),
  context_limit: uint.optional(),
  work_class: str.optional(),
  variant: str.optional(),
  service_tier: json.optional(),
  context_management: json.optional(),
  stop_when: z.array(json).optional(),
});

/** run_started.scope (feature scope/v1; agent_id / run_id need agent-run-scopes/v1). */
export const ScopeSchema = z.looseObject({
  owner: z.looseObject({ kind: str }),
  ref: str,
  scope_epoch: uint,
  agent_id: str.optional(),
  run_id: str.optional(),
});

const ManifestFetchSchema = z
  .looseObject({
    provider: str,
    catalog_digest: str.optional(),
    tools: z.array(json).optional(),
    text: str.optional(),
    absent: str.optional(),
  })
  .refine((f) => !(f.catalog_digest !== undefined && f.absent !== undefined), "fetch has both catalog_digest and absent");

/** run_started.manifest (feature plan-manifest/v1). `plan` is the plan's JSON text, kept verbatim. */
export const ManifestSchema = z.looseObject({
  plan: str,
  plan_identity: hex64,
  composition_digest: hex64,
  fetches: z.array(ManifestFetchSchema),
  tools: z.array(json),
  system_text: str,
  system_digest: str,
  join_version: uint,
  role_versions: z.record(z.string(), z.string()),
});

const t = <T extends string>(type: T) => z.literal(type);

/** Schemas of every record type of spec section 2.4, keyed by `type`. Unknown members are kept. */
export const RECORD_SCHEMAS = {
  run_started: z.looseObject({
    type: t("run_started"),
    run_id: str,
    session: SessionTripleSchema,
    project_id: str.optional(),
    ts_ms: uint.optional(),
    config: RunConfigSchema,
    input: z.array(json),
    origin: z.looseObject({ kind: str }).default({ kind: "fresh" }),
    submission_id: str.optional(),
    title: str.optional(),
    scope: ScopeSchema.optional(),
    manifest: ManifestSchema.optional(),
  }),
  run_finished: z.looseObject({
    type: t("run_finished"),
    reason: str,
    ts_ms: uint.optional(),
    usage: UsageSchema,
    error: ProviderErrorSchema.optional(),
    retries_used: uint.default(0),
  }),
  run_paused: z.looseObject({
    type: t("run_paused"),
    run_id: str,
    ts_ms: uint.optional(),
    reason: str,
    error: ProviderErrorSchema.optional(),
  }),
  run_config_refrozen: z.looseObject({
    type: t("run_config_refrozen"),
    renderer_version: uint,
    ts_ms: uint.optional(),
    frozen_render_config: json,
  }),
  run_auth_refrozen: z.looseObject({
    type: t("run_auth_refrozen"),
    ts_ms: uint.optional(),
    auth_selection: AuthSelectionSchema,
  }),
  step_started: z.looseObject({ type: t("step_started"), step_id: uint }),
  model_step_finished: z.looseObject({
    type: t("model_step_finished"),
    step_id: uint,
    assistant_message: json,
    usage: UsageSchema,
    finish_reason: str.optional(),
    retries_used: uint.default(0),
    service_tier_used: str.optional(),
    speed_used: str.optional(),
  }),
  turn_finished: z.looseObject({ type: t("turn_finished"), step_id: uint }),
  budget_fired: z.looseObject({
    type: t("budget_fired"),
    run_id: str,
    kind: str,
    threshold: uint,
    ordinal: uint,
    caller_text: str.optional(),
  }),
  tool_batch_started: z.looseObject({
    type: t("tool_batch_started"),
    batch_id: str,
    step_id: uint,
    planned_calls: z.array(str),
  }),
  tool_dispatch_intent: z.looseObject({
    type: t("tool_dispatch_intent"),
    batch_id: str,
    tool_call_id: str,
    tool_name: str.optional(),
    args: json,
    module_id: str.optional(),
    schema_pin: z.looseObject({ schema_digest: str, semantics: json }).optional(),
  }),
  tool_no_dispatch: z.looseObject({
    type: t("tool_no_dispatch"),
    batch_id: str,
    tool_call_id: str,
    reason: z.looseObject({ kind: str }),
  }),
  tool_result: z.looseObject({
    type: t("tool_result"),
    batch_id: str,
    result: json,
    outcome: str,
    reason: str.optional(),
  }),
  tool_batch_finished: z.looseObject({ type: t("tool_batch_finished"), batch_id: str }),
  approval_requested: z.looseObject({ type: t("approval_requested"), tool_call_id: str }),
  approval_resolved: z.looseObject({
    type: t("approval_resolved"),
    tool_call_id: str,
    decision: z.looseObject({ decision: str }),
  }),
  queued: z.looseObject({
    type: t("queued"),
    submission_id: str,
    request: json,
    request_identity_digest: str.optional(),
    principal: json.optional(),
    send_id: str.optional(),
    title: str.optional(),
    delivery: str.optional(),
  }),
  retracted: z.looseObject({
    type: t("retracted"),
    submission_id: str,
    failure: z.looseObject({ run_id: str, error: ProviderErrorSchema }).optional(),
  }),
  steered: z.looseObject({
    type: t("steered"),
    send_id: str.optional(),
    request_identity_digest: str.optional(),
    delivery: str.optional(),
    title: str.optional(),
    input: json,
    hooks: json.optional(),
  }),
  model_attempt_finished: z.looseObject({
    type: t("model_attempt_finished"),
    step_id: uint,
    attempt: uint,
    request_body_len: uint,
    request_body_sha256: str,
    http_status: uint.optional(),
    content_type: str.optional(),
    response_body_len: uint,
    response_body_sha256: str,
    response_body_cap: uint.optional(),
    outcome: str,
    ts_ms: uint,
    input_transformations: z.array(json).optional(),
    credential_refresh: json.optional(),
  }),
  resume_started: z.looseObject({
    type: t("resume_started"),
    episode: str,
    resumed_from_seq: uint,
    replayed: z.looseObject({
      messages: uint.default(0),
      model_steps: uint.default(0),
      tool_results: uint.default(0),
    }),
    redone: z.array(z.looseObject({ kind: str })),
    indeterminate: z.array(str),
  }),
} as const;

/** Every record type name this build knows. */
export type WalRecordType = keyof typeof RECORD_SCHEMAS;

/** The decoded shape of one known record type. */
export type WalRecordOf<T extends WalRecordType> = z.output<(typeof RECORD_SCHEMAS)[T]>;

/** A decoded record of any known type, tagged by `type`. */
export type WalRecord = { [T in WalRecordType]: WalRecordOf<T> }[WalRecordType];

/** The input accepted for a record of one known type (defaulted members may be left out). */
export type WalRecordInput = { [T in WalRecordType]: z.input<(typeof RECORD_SCHEMAS)[T]> }[WalRecordType];

/** The list of known record types. */
export const RECORD_TYPES: readonly WalRecordType[] = Object.freeze(Object.keys(RECORD_SCHEMAS) as WalRecordType[]);

/** True when `type` is a record type this build knows. */
export function isKnownRecordType(type: string): type is WalRecordType {
  return Object.prototype.hasOwnProperty.call(RECORD_SCHEMAS, type);
}

/** Result of interpreting one parsed JSON payload as a record. */
export type RecordParse =
  | { readonly kind: "record"; readonly record: WalRecord }
  | { readonly kind: "unknown"; readonly type: string; readonly raw: Record<string, unknown> }
  | { readonly kind: "invalid"; readonly reason: string };

/** Interpret a parsed JSON value as a record: a known type validated, an unknown type passed through for skipping. */
export function parseRecordValue(value: unknown): RecordParse {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { kind: "invalid", reason: "record is not a JSON object" };
  }
  const type = (value as Record<string, unknown>)["type"];
  if (typeof type !== "string") return { kind: "invalid", reason: "record has no string \"type\" tag" };
  if (!isKnownRecordType(type)) return { kind: "unknown", type, raw: value as Record<string, unknown> };
  const r = RECORD_SCHEMAS[type].safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    const path = issue === undefined ? "" : issue.path.join(".");
    return { kind: "invalid", reason: `${type} record does not decode (${path || "record"}: ${issue?.message ?? "invalid"})` };
  }
  return { kind: "record", record: r.data as WalRecord };
}

/** Validate a record of a known type (the encoder's {@link KnownRecordValidator}). */
export function validateKnownRecord(record: { readonly type: string } & Record<string, unknown>): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string } {
  if (!isKnownRecordType(record.type)) return { ok: true, value: record };
  const r = RECORD_SCHEMAS[record.type].safeParse(record);
  if (r.success) return { ok: true, value: r.data };
  const i = r.error.issues[0];
  return { ok: false, reason: `${i?.path.join(".") || "record"}: ${i?.message ?? "invalid"}` };
}

// The canonical record without its schema: the type, the kinds and modes, the content hash and
// canonicalize. zod-free, so a program that only builds records (the adapters, a collector pass
// with nothing to land) does not load the schema; record.ts adds it.
import { sha256Hex } from "./sha256.js";
import { isEmptyUsage, recordDay } from "./usage.js";
import type { Usage } from "./usage.js";

export { recordDay };

export { RUNTIMES, type Runtime } from "./runtimes.js";

/** What a record is. `unknown` keeps a source line that could not be interpreted (its bytes in `raw`). */
export const KINDS = ["user", "assistant", "tool_call", "tool_result", "system", "summary", "usage", "meta", "unknown"] as const;
export type Kind = (typeof KINDS)[number];

/**
 * How a record's usage counts: `delta` (this record's own usage; copies sharing a usage_key count
 * once, the largest), `latest` (copies sharing a usage_key count once, the last one read), or
 * `cumulative` (a running total for its stream).
 */
export const USAGE_MODES = ["delta", "latest", "cumulative"] as const;
export type UsageMode = (typeof USAGE_MODES)[number];

/** The name of the main stream of a session; child agents' streams are named by their agent id. */
export const MAIN_STREAM = "main";

/** Version of the canonical record shape. Bumped only for incompatible changes. */
export const RECORD_SCHEMA_VERSION = 1;

/**
 * The canonical lake record. One per source record; every field is in the DuckDB/Parquet/Arrow
 * column list (usage flattened into its five keys). Text fields are already masked when a record
 * leaves the redactor; `redaction_rules` lists the rule ids that fired on it.
 */
export interface CanonicalRecord {
  /** Runtime id: claude-code, codex, gemini, broca, hook (open string). */
  runtime: string;
  session_id: string;
  /** `main`, or the child agent's id. */
  stream: string;
  /** The vendor's own record id (uuid) when it has one. */
  record_id?: string;
  parent_id?: string;
  /** ISO 8601 UTC timestamp with milliseconds (`2026-02-10T21:11:56.846Z`). */
  ts?: string;
  kind: Kind;
  /** The vendor's own record type/subtype (`assistant`, `system/compact_boundary`, `event_msg/token_count` …). */
  vendor_type?: string;
  role?: string;
  model?: string;
  text?: string;
  tool_name?: string;
  tool_call_id?: string;
  /** Tool input as JSON text. */
  tool_input?: string;
  is_error?: boolean;
  /** A command's exit code, when one is reported. */
  exit_code?: number;
  usage?: Usage;
  /** How `usage` counts (default `delta`; see USAGE_MODES). */
  usage_mode?: UsageMode;
  /** Records sharing a usage key are one billed response, counted once (a provider id: unique across sessions). */
  usage_key?: string;
  /**
   * The cost in USD the runtime itself recorded for this response (Claude Code's `costUSD`), when
   * it recorded one. lake-reader's `--cost-mode recorded|auto` uses it; never computed by lake.
   */
  cost_usd?: number;
  is_sidechain?: boolean;
  /** True when the record replays history already recorded elsewhere (a fork's parent history). */
  replayed?: boolean;
  message_id?: string;
  request_id?: string;
  /** On a call that launched a child agent: the child's stream. */
  child_stream?: string;
  cwd?: string;
  repo?: string;
  branch?: string;
  /** SHA-256 hex over the record's content (see `contentHash`), or "" when it has no content. */
  content_hash: string;
  redaction_rules: string[];
  /** Other vendor fields worth keeping, as a JSON object text. */
  attrs?: string;
  /** For `unknown` records: the source line's text. */
  raw?: string;
  /** Provenance: the source file (path relative to the runtime root where possible). */
  source_path: string;
  source_offset?: number;
  source_line?: number;
  adapter: string;
  adapter_version: string;
}

/** A record as an adapter emits it: everything but the fields the canonicalizer fills in. */
export type RawRecord = Omit<CanonicalRecord, "content_hash" | "redaction_rules">;

/** The fields a content hash covers, in order. Provenance and redaction metadata are excluded. */
export const CONTENT_FIELDS = [
  "stream", "record_id", "parent_id", "ts", "kind", "vendor_type", "role", "model", "text", "tool_name", "tool_call_id",
  "tool_input", "is_error", "exit_code", "message_id", "request_id", "child_stream", "raw",
] as const;

/** The usage keys of the first record version, hashed positionally (absent as null). */
export const HASHED_USAGE_KEYS = ["input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens"] as const;

/**
 * The content hash of a record: SHA-256 hex over the canonical JSON array of its content fields
 * (CONTENT_FIELDS in order, absent as null, then the first five usage keys, absent as null; then,
 * only when present, `["cache_write_1h_tokens", n]` and `["cost_usd", x]` — fields added later,
 * so that records without them keep the hash they always had). A record with no text, no tool
 * input, no raw bytes and no usage has no content, and its hash is "" — compaction never dedupes
 * two such records against each other.
 */
export function contentHash(r: RawRecord | CanonicalRecord): string {
  const empty = !r.text && !r.tool_input && !r.raw && isEmptyUsage(r.usage);
  if (empty) return "";
  // CONTENT_FIELDS, then HASHED_USAGE_KEYS, each read by name: a record's fields read by a key
  // from a list cost a sixth of the hash (two dozen lookups of a record whose shape varies).
  const u = r.usage;
  const values: unknown[] = [
    r.stream ?? null, r.record_id ?? null, r.parent_id ?? null, r.ts ?? null, r.kind ?? null, r.vendor_type ?? null, r.role ?? null,
    r.model ?? null, r.text ?? null, r.tool_name ?? null, r.tool_call_id ?? null, r.tool_input ?? null, r.is_error ?? null,
    r.exit_code ?? null, r.message_id ?? null, r.request_id ?? null, r.child_stream ?? null, r.raw ?? null,
    u?.input_tokens ?? null, u?.cached_input_tokens ?? null, u?.cache_write_tokens ?? null, u?.output_tokens ?? null, u?.reasoning_tokens ?? null,
  ];
  if (u?.cache_write_1h_tokens !== undefined) values.push(["cache_write_1h_tokens", u.cache_write_1h_tokens]);
  if (r.cost_usd !== undefined) values.push(["cost_usd", r.cost_usd]);
  return sha256Hex(JSON.stringify(values));
}

/**
 * Turn an adapter's (already masked) record into a canonical record: hash it and attach the rule ids.
 * A copy of `raw`'s own fields, made canonical in place: a spread copy keeps a record V8 holds as a
 * fast object fast (a field-by-field copy by key made a dictionary of any record of 20 fields or more,
 * and took 1.4 times as long), and a field named `__proto__` stays a field.
 */
export function canonicalize(raw: RawRecord, redactionRules: readonly string[] = []): CanonicalRecord {
  return canonicalizeInPlace({ ...raw }, redactionRules);
}

/**
 * {@link canonicalize} without the copy: `raw` itself is made canonical (its fields, then
 * `content_hash` and `redaction_rules`, as canonicalize orders them) and returned. For a record
 * the caller made and hands over, such as an adapter's, which nothing else holds: a collect pass
 * canonicalizes every record it lands, and copying a record's two dozen fields cost about as
 * much as hashing its content.
 */
export function canonicalizeInPlace(raw: RawRecord, redactionRules: readonly string[] = []): CanonicalRecord {
  const out = raw as unknown as { -readonly [K in keyof CanonicalRecord]: CanonicalRecord[K] };
  out.content_hash = "";
  out.redaction_rules = redactionRules.length === 0 ? [] : [...new Set(redactionRules)].sort();
  out.content_hash = contentHash(out);
  return out;
}

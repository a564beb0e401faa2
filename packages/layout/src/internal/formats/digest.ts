// `…/session=<id>/digest.json`: the Tier 0 structural digest of one sealed session (computed by
// `lake-maint digest` from that session's own segments; no wall-clock value inside, so the same
// segments give the same bytes). Written create-only.
import { canonicalBytes, Fields, jsonObject } from "./json.js";

/** Version of the digest.json format. */
export const DIGEST_VERSION = 1;

/** One command in a digest. */
export interface DigestCommand {
  readonly ts: string | null;
  readonly tool_call_id: string | null;
  readonly command: string;
  /** `failed`: the result is an error or reported a non-zero exit code; `no_result`: no result recorded. */
  readonly status: "ok" | "failed" | "no_result";
  /** The result's exit code; null when unknown. */
  readonly exit_code: number | null;
}

/** One file in a digest. */
export interface DigestFile {
  readonly path: string;
  readonly reads: number;
  readonly edits: number;
  readonly writes: number;
}

/** A friction signal. */
export type FrictionSignal =
  | { readonly kind: "repeated_failure"; readonly command_head: string; readonly failures: number; readonly exit_codes: (number | null)[] }
  | { readonly kind: "file_churn"; readonly path: string; readonly modifications: number }
  | { readonly kind: "abandoned_after_failures"; readonly failures: number; readonly last_ts: string | null };

/** The friction thresholds a digest was computed with (recorded inside it). */
export interface DigestThresholds {
  readonly repeated_failures: number;
  readonly file_modifications: number;
  readonly abandon_run: number;
}

/** Token counts as @lake/events' countUsage gives them (broca's meaning; an absent key was never reported). */
export interface DigestTokens {
  readonly input_tokens?: number;
  readonly cached_input_tokens?: number;
  readonly cache_write_tokens?: number;
  readonly cache_write_1h_tokens?: number;
  readonly output_tokens?: number;
  readonly reasoning_tokens?: number;
}

/** digest.json. */
export interface Digest {
  readonly digest_version: number;
  readonly dt: string;
  readonly fleet: string;
  readonly runtime: string;
  readonly agent: string;
  readonly session: string;
  readonly session_ids: string[];
  readonly segments: number;
  readonly rows: number;
  readonly first_ts: string | null;
  readonly last_ts: string | null;
  readonly kinds: Record<string, number>;
  readonly streams: string[];
  readonly models: string[];
  readonly tools: Record<string, number>;
  readonly files: DigestFile[];
  readonly commands: DigestCommand[];
  readonly usage: DigestTokens & { readonly total_tokens: number | null; readonly responses: number; readonly by_model: Record<string, DigestTokens> };
  readonly friction: FrictionSignal[];
  readonly thresholds: DigestThresholds;
}

/** The bytes of a digest (canonical JSON). */
export function encodeDigest(d: Digest): Uint8Array {
  return canonicalBytes(d);
}

function counts(f: Fields, name: string): Record<string, number> {
  const o = f.obj(name);
  for (const [k, x] of Object.entries(o.v)) if (!Number.isSafeInteger(x) || (x as number) < 0) f.fail(`${name}.${k} is not a non-negative integer`);
  return o.v as Record<string, number>;
}

/**
 * Decode a digest.json strictly; Corrupt (naming `key`) unless it is a version-1 digest of the session
 * directory `expect` names (when given) with every field of the right type.
 */
export function decodeDigest(key: string, body: Uint8Array, expect?: { readonly dt: string; readonly fleet: string; readonly runtime: string; readonly agent: string; readonly session: string }): Digest {
  const f: Fields = new Fields(key, jsonObject(key, body));
  const version = f.int("digest_version");
  if (version !== DIGEST_VERSION) f.fail(`digest_version ${version} is not ${DIGEST_VERSION}`);
  const part = { dt: f.str("dt"), fleet: f.str("fleet"), runtime: f.str("runtime"), agent: f.str("agent"), session: f.str("session") };
  if (expect) for (const k of ["dt", "fleet", "runtime", "agent", "session"] as const) if (part[k] !== expect[k]) f.fail(`${k} ${JSON.stringify(part[k])} is not this directory's ${JSON.stringify(expect[k])}`);
  const files = f.list("files").map((x) => ({ path: x.str("path"), reads: x.int("reads"), edits: x.int("edits"), writes: x.int("writes") }));
  const commands = f.list("commands").map((x) => {
    const status = x.str("status");
    if (status !== "ok" && status !== "failed" && status !== "no_result") x.fail(`command status ${JSON.stringify(status)} is not ok, failed or no_result`);
    const code = x.v.exit_code;
    if (code !== null && !Number.isSafeInteger(code)) x.fail("command exit_code is not an integer or null");
    return { ts: x.nullableStr("ts"), tool_call_id: x.nullableStr("tool_call_id"), command: x.str("command"), status, exit_code: code as number | null } as DigestCommand;
  });
  const u = f.obj("usage");
  for (const [k, x] of Object.entries(u.v)) {
    if (k === "by_model") continue;
    if (k === "total_tokens" && x === null) continue;
    if (typeof x !== "number" || !Number.isFinite(x)) f.fail(`usage.${k} is not a number`);
  }
  const byModel = u.obj("by_model");
  for (const [m, x] of Object.entries(byModel.v)) {
    if (typeof x !== "object" || x === null || Object.values(x).some((n) => typeof n !== "number")) f.fail(`usage.by_model.${m} is not token counts`);
  }
  const friction = f.list("friction").map((x) => {
    const kind = x.str("kind");
    if (kind !== "repeated_failure" && kind !== "file_churn" && kind !== "abandoned_after_failures") x.fail(`friction kind ${JSON.stringify(kind)} is unknown`);
    return x.v as unknown as FrictionSignal;
  });
  const t = f.obj("thresholds");
  const firstTs = f.nullableStr("first_ts");
  const lastTs = f.nullableStr("last_ts");
  return {
    digest_version: version,
    ...part,
    session_ids: f.strings("session_ids"),
    segments: f.int("segments"),
    rows: f.int("rows"),
    first_ts: firstTs,
    last_ts: lastTs,
    kinds: counts(f, "kinds"),
    streams: f.strings("streams"),
    models: f.strings("models"),
    tools: counts(f, "tools"),
    files,
    commands,
    usage: u.v as unknown as Digest["usage"],
    friction,
    thresholds: { repeated_failures: t.int("repeated_failures"), file_modifications: t.int("file_modifications"), abandon_run: t.int("abandon_run") },
  };
}

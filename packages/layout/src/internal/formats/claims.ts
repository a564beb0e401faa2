// Claims: a proposal `claims/events/dt=…/agent=…/<ulid>.json` (appended create-only by anyone) and
// a promoted claim `claims/fleet/<claim_id>.json` (written only by the gate, `lake-maint promote`).
import { validatePartitionValue } from "../keys.js";
import { nodeCrypto } from "../node-crypto.js";
import { canonicalBytes, corrupt, Fields, jsonObject } from "./json.js";

/** Longest claim text (characters). */
export const MAX_CLAIM_TEXT = 8192;
/** Longest subject and repo (characters). */
export const MAX_CLAIM_FIELD = 200;
const KIND_RE = /^[a-z][a-z0-9_-]{0,31}$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** A proposed claim as stored under claims/events/. */
export interface ClaimEvent {
  readonly claim_id?: string;
  readonly agent: string;
  readonly proposed_at: string;
  readonly repo: string;
  readonly subject: string;
  readonly text: string;
  readonly kind: string;
}

/** A promoted claim as stored under claims/fleet/. */
export interface FleetClaim {
  readonly claim_id: string;
  readonly agent: string;
  readonly repo: string;
  readonly subject: string;
  readonly text: string;
  readonly kind: string;
  readonly proposed_at: string;
  readonly promoted_at: string;
  /** The claims/events/ key this version was promoted from. */
  readonly source: string;
  /** 1 for the first promotion, +1 for each revision by the same agent. */
  readonly revision: number;
  /** Fencing epoch of the gate's lease when it wrote this version. */
  readonly epoch: number;
}

/** Whitespace-normalised text: trimmed, runs of whitespace collapsed to one space. */
export function normalizeText(s: string): string {
  return s.trim().replace(/\s+/g, " ");
}

/** The claim id of a proposal without one: `c` + 32 hex digits of SHA-256 over repo \0 subject \0 text (normalised). */
export function derivedClaimId(repo: string, subject: string, text: string): string {
  return "c" + nodeCrypto().createHash("sha256").update(`${repo}\0${normalizeText(subject)}\0${normalizeText(text)}`).digest("hex").slice(0, 32);
}

/**
 * Check a proposal's fields (the gate's validation rule); a string is the reason it is rejected.
 * `keyAgent`: the `agent=` of the key it is stored under, which `agent` must equal. The result has
 * `proposed_at` normalised to `toISOString` and defaults filled in (kind `fact`, repo/subject "").
 */
export function checkClaimEvent(v: Record<string, unknown>, keyAgent?: string): ClaimEvent | string {
  if (typeof v.agent !== "string" || v.agent === "") return "agent missing";
  try {
    validatePartitionValue("agent", v.agent);
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  if (keyAgent !== undefined && v.agent !== keyAgent) return `agent ${JSON.stringify(v.agent)} does not match the key's agent ${JSON.stringify(keyAgent)}`;
  if (typeof v.proposed_at !== "string" || !Number.isFinite(Date.parse(v.proposed_at))) return "proposed_at is not an ISO time";
  if (typeof v.text !== "string" || v.text.trim() === "") return "text is empty";
  if (v.text.length > MAX_CLAIM_TEXT) return `text longer than ${MAX_CLAIM_TEXT} characters`;
  if (CONTROL.test(v.text)) return "text has control characters";
  for (const f of ["repo", "subject"] as const) {
    const x = v[f];
    if (x !== undefined && x !== null && typeof x !== "string") return `${f} is not a string`;
    if (typeof x === "string" && (x.length > MAX_CLAIM_FIELD || CONTROL.test(x) || x.includes("\n"))) return `${f} longer than ${MAX_CLAIM_FIELD} characters or not one line`;
  }
  const kind = v.kind === undefined || v.kind === null ? "fact" : v.kind;
  if (typeof kind !== "string" || !KIND_RE.test(kind)) return `kind ${JSON.stringify(v.kind)} is not [a-z][a-z0-9_-]{0,31}`;
  if (v.claim_id !== undefined && v.claim_id !== null) {
    if (typeof v.claim_id !== "string") return "claim_id is not a string";
    try {
      validatePartitionValue("claim_id", v.claim_id);
    } catch (e) {
      return e instanceof Error ? e.message : String(e);
    }
  }
  const out: ClaimEvent = {
    agent: v.agent,
    proposed_at: new Date(Date.parse(v.proposed_at)).toISOString(),
    repo: typeof v.repo === "string" ? v.repo : "",
    subject: typeof v.subject === "string" ? v.subject : "",
    text: v.text,
    kind,
  };
  return typeof v.claim_id === "string" ? { claim_id: v.claim_id, ...out } : out;
}

/** The bytes of a proposal (canonical JSON). */
export function encodeClaimEvent(ev: ClaimEvent): Uint8Array {
  return canonicalBytes(ev);
}

/** Decode a proposal strictly (the gate's validation); Corrupt (naming `key`) with the reason it is rejected. */
export function decodeClaimEvent(key: string, body: Uint8Array, keyAgent?: string): ClaimEvent {
  const ev = checkClaimEvent(jsonObject(key, body), keyAgent);
  if (typeof ev === "string") throw corrupt(key, ev);
  return ev;
}

/** The bytes of a promoted claim (canonical JSON). */
export function encodeFleetClaim(c: FleetClaim): Uint8Array {
  return canonicalBytes(c);
}

/** Decode a promoted claim strictly; Corrupt (naming `key`) unless it is one stored under `claimId`. */
export function decodeFleetClaim(key: string, body: Uint8Array, claimId: string): FleetClaim {
  const f: Fields = new Fields(key, jsonObject(key, body));
  if (f.v.claim_id !== claimId) f.fail(`claim_id ${JSON.stringify(f.v.claim_id)} does not match the key`);
  const s = (n: string) => f.str(n);
  const revision = f.v.revision;
  const epoch = f.v.epoch;
  if (!Number.isInteger(revision) || !Number.isInteger(epoch)) f.fail("revision or epoch is not an integer");
  return {
    claim_id: claimId,
    agent: s("agent"),
    repo: s("repo"),
    subject: s("subject"),
    text: s("text"),
    kind: s("kind"),
    proposed_at: s("proposed_at"),
    promoted_at: s("promoted_at"),
    source: s("source"),
    revision: revision as number,
    epoch: epoch as number,
  };
}

// Claims: agents propose (append claims/events/dt=/agent=/<ulid>.json); the gate (`promote`) is the
// only writer of claims/fleet/<claim_id>.json.
import { createHash } from "node:crypto";
import { PREFIXES, claimEventKey, fleetClaimKey, parseKey, ulid, utcDate, validatePartitionValue, type ObjectStore } from "@lake/layout";
import { withLease, type MaintContext } from "./context.js";
import { MaintError } from "./errors.js";
import { canonicalBytes, parseObject } from "./json.js";

/** Longest claim text (characters). */
export const MAX_CLAIM_TEXT = 8192;
/** Longest subject and repo (characters). */
export const MAX_CLAIM_FIELD = 200;
const KIND_RE = /^[a-z][a-z0-9_-]{0,31}$/;

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

/** The claim id of a proposal without one: `c` + 32 hex digits of SHA-256 over repo, subject and normalised text. */
export function derivedClaimId(repo: string, subject: string, text: string): string {
  return "c" + createHash("sha256").update(`${repo}\0${normalizeText(subject)}\0${normalizeText(text)}`).digest("hex").slice(0, 32);
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** Validate a proposal (the gate's first rule); a string is the reason it is rejected. */
export function validateClaim(v: Record<string, unknown>, keyAgent?: string): ClaimEvent | string {
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

/** `propose`: append one claim event (create-only under a fresh ULID). Returns its key. */
export async function proposeClaim(store: ObjectStore, input: Omit<ClaimEvent, "proposed_at"> & { proposed_at?: string }, now: () => number = Date.now): Promise<{ key: string; event: ClaimEvent }> {
  const t = now();
  const ev = validateClaim({ ...input, proposed_at: input.proposed_at ?? new Date(t).toISOString() });
  if (typeof ev === "string") throw new MaintError("Usage", `claim rejected: ${ev}`);
  const key = claimEventKey(utcDate(t), ev.agent, ulid(t));
  const w = await store.putIfAbsent(key, canonicalBytes(ev));
  if (w.status !== "written") throw new MaintError("Io", `${key}: not written (${w.status})`, { key, store: store.url });
  return { key, event: ev };
}

/** What the gate did. */
export interface PromoteReport {
  readonly status: "done" | "held";
  readonly held_by?: string;
  readonly epoch?: number;
  readonly events: number;
  readonly promoted: string[];
  readonly revised: string[];
  readonly duplicates: number;
  readonly rejected: { key: string; reason: string }[];
  readonly conflicts: { key: string; claim_id: string; reason: string }[];
}

function sameContent(a: { repo: string; subject: string; text: string; kind: string }, b: { repo: string; subject: string; text: string; kind: string }): boolean {
  return a.repo === b.repo && normalizeText(a.subject) === normalizeText(b.subject) && normalizeText(a.text) === normalizeText(b.text) && a.kind === b.kind;
}

/** Parse a stored fleet claim; a string is the reason it is not one. */
export function parseFleetClaim(body: Uint8Array, claimId: string): FleetClaim | string {
  const v = parseObject(body);
  if (typeof v === "string") return v;
  if (v.claim_id !== claimId) return `claim_id ${JSON.stringify(v.claim_id)} does not match the key`;
  for (const f of ["agent", "repo", "subject", "text", "kind", "proposed_at", "promoted_at", "source"]) if (typeof v[f] !== "string") return `${f} is not a string`;
  if (!Number.isInteger(v.revision) || !Number.isInteger(v.epoch)) return "revision or epoch is not an integer";
  return v as unknown as FleetClaim;
}

/**
 * `promote` — the gate. Under the lease `claims/promote`, reads every proposal and every promoted
 * claim and applies the rules of the README: validate; dedupe (same claim id and same content → no
 * write); a proposal without claim_id gets a content-derived id, so identical claims merge; an explicit
 * claim_id already promoted with other content is a revision when the same agent proposed it later,
 * else a conflict (reported, nothing written).
 */
export async function runPromote(ctx: MaintContext): Promise<PromoteReport> {
  const r = await withLease(ctx, "claims/promote", async (lease) => {
    const store = ctx.store;
    const current = new Map<string, { claim: FleetClaim; etag: string }>();
    const rejected: { key: string; reason: string }[] = [];
    for (const c of await listFleetClaims(store)) current.set(c.claim.claim_id, c);
    const events: { key: string; ulid: string; ev: ClaimEvent }[] = [];
    let seen = 0;
    for await (const o of store.listAll(PREFIXES.claimEvents)) {
      const k = parseKey(o.key);
      seen++;
      if (k?.kind !== "claim-event") {
        rejected.push({ key: o.key, reason: "not a claims/events/dt=/agent=/<ulid>.json key" });
        continue;
      }
      const got = await store.get(o.key);
      if (!got) continue;
      const v = parseObject(got.body);
      const ev = typeof v === "string" ? v : validateClaim(v, k.agent);
      if (typeof ev === "string") rejected.push({ key: o.key, reason: ev });
      else events.push({ key: o.key, ulid: k.ulid, ev });
    }
    events.sort((a, b) => (a.ev.proposed_at < b.ev.proposed_at ? -1 : a.ev.proposed_at > b.ev.proposed_at ? 1 : a.ulid < b.ulid ? -1 : a.ulid > b.ulid ? 1 : 0));
    const promoted: string[] = [];
    const revised: string[] = [];
    const conflicts: { key: string; claim_id: string; reason: string }[] = [];
    let duplicates = 0;
    for (const { key, ev } of events) {
      const id = ev.claim_id ?? derivedClaimId(ev.repo, ev.subject, ev.text);
      const cur = current.get(id);
      if (cur && sameContent(cur.claim, ev)) {
        duplicates++;
        continue;
      }
      if (cur && !(cur.claim.agent === ev.agent && ev.proposed_at > cur.claim.proposed_at)) {
        conflicts.push({ key, claim_id: id, reason: cur.claim.agent !== ev.agent ? `claim ${id} belongs to agent ${cur.claim.agent}` : `older than promoted revision ${cur.claim.revision}` });
        continue;
      }
      const claim: FleetClaim = {
        claim_id: id,
        agent: ev.agent,
        repo: ev.repo,
        subject: ev.subject,
        text: ev.text,
        kind: ev.kind,
        proposed_at: ev.proposed_at,
        promoted_at: new Date(ctx.now()).toISOString(),
        source: key,
        revision: cur ? cur.claim.revision + 1 : 1,
        epoch: lease.epoch,
      };
      const fkey = fleetClaimKey(id);
      await lease.check();
      const w = cur ? await store.putIfMatch(fkey, canonicalBytes(claim), cur.etag) : await store.putIfAbsent(fkey, canonicalBytes(claim));
      if (w.status !== "written") throw new MaintError("Refused", `${fkey}: changed by another writer while the gate held the lease (${w.status})`, { key: fkey, store: store.url });
      current.set(id, { claim, etag: w.etag });
      (cur ? revised : promoted).push(id);
    }
    return { status: "done" as const, epoch: lease.epoch, events: seen, promoted, revised, duplicates, rejected, conflicts };
  });
  if (!r.held) return { status: "held", held_by: r.owner, events: 0, promoted: [], revised: [], duplicates: 0, rejected: [], conflicts: [] };
  return r.value;
}

/** Every promoted claim with its etag, sorted by claim_id (a corrupt one is refused, naming its key). */
export async function listFleetClaims(store: ObjectStore): Promise<{ claim: FleetClaim; etag: string }[]> {
  const out: { claim: FleetClaim; etag: string }[] = [];
  for await (const o of store.listAll(PREFIXES.fleetClaims)) {
    const k = parseKey(o.key);
    if (k?.kind !== "fleet-claim") continue;
    const got = await store.get(o.key);
    if (!got) continue;
    const c = parseFleetClaim(got.body, k.claimId);
    if (typeof c === "string") throw new MaintError("Corrupt", `${o.key}: ${c}`, { key: o.key, store: store.url });
    out.push({ claim: c, etag: got.etag });
  }
  return out.sort((a, b) => (a.claim.claim_id < b.claim.claim_id ? -1 : a.claim.claim_id > b.claim.claim_id ? 1 : 0));
}

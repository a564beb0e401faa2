// Claims: agents propose (append claims/events/dt=/agent=/<ulid>.json); the gate (`promote`) is the
// only writer of claims/fleet/<claim_id>.json.
import {
  MAX_CLAIM_FIELD,
  MAX_CLAIM_TEXT,
  PREFIXES,
  checkClaimEvent,
  claimEventKey,
  decodeClaimEvent,
  decodeFleetClaim,
  derivedClaimId,
  encodeClaimEvent,
  encodeFleetClaim,
  fleetClaimKey,
  isLayoutError,
  normalizeText,
  parseKey,
  ulid,
  utcDate,
  type ClaimEvent,
  type FleetClaim,
  type ObjectStore,
} from "@lake/layout";
import { withLease, type MaintContext } from "./context.js";
import { MaintError } from "./errors.js";

export { MAX_CLAIM_FIELD, MAX_CLAIM_TEXT, derivedClaimId, normalizeText };
export type { ClaimEvent, FleetClaim };

/** Validate a proposal (the gate's first rule; @lake/layout's checkClaimEvent); a string is the reason it is rejected. */
export const validateClaim = checkClaimEvent;

/** `propose`: append one claim event (create-only under a fresh ULID). Returns its key. */
export async function proposeClaim(store: ObjectStore, input: Omit<ClaimEvent, "proposed_at"> & { proposed_at?: string }, now: () => number = Date.now): Promise<{ key: string; event: ClaimEvent }> {
  const t = now();
  const ev = validateClaim({ ...input, proposed_at: input.proposed_at ?? new Date(t).toISOString() });
  if (typeof ev === "string") throw new MaintError("Usage", `claim rejected: ${ev}`);
  const key = claimEventKey(utcDate(t), ev.agent, ulid(t));
  const w = await store.putIfAbsent(key, encodeClaimEvent(ev));
  if (w.status !== "written") throw new MaintError("Store", `${key}: not written (${w.status})`, { data: { key, store: store.url } });
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

/** Decode a stored fleet claim; a string is the reason it is not one. */
export function parseFleetClaim(key: string, body: Uint8Array, claimId: string): FleetClaim | string {
  try {
    return decodeFleetClaim(key, body, claimId);
  } catch (e) {
    if (isLayoutError(e, "Corrupt")) return e.data.detail ?? e.message;
    throw e;
  }
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
      let ev: ClaimEvent;
      try {
        ev = decodeClaimEvent(o.key, got.body, k.agent);
      } catch (e) {
        if (!isLayoutError(e, "Corrupt")) throw e;
        rejected.push({ key: o.key, reason: e.data.detail ?? e.message });
        continue;
      }
      events.push({ key: o.key, ulid: k.ulid, ev });
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
      const w = cur ? await store.putIfMatch(fkey, encodeFleetClaim(claim), cur.etag) : await store.putIfAbsent(fkey, encodeFleetClaim(claim));
      if (w.status !== "written") throw new MaintError("Refused", `${fkey}: changed by another writer while the gate held the lease (${w.status})`, { data: { key: fkey, store: store.url } });
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
    const c = parseFleetClaim(o.key, got.body, k.claimId);
    if (typeof c === "string") throw new MaintError("Corrupt", `${o.key}: ${c}`, { data: { key: o.key, store: store.url } });
    out.push({ claim: c, etag: got.etag });
  }
  return out.sort((a, b) => (a.claim.claim_id < b.claim.claim_id ? -1 : a.claim.claim_id > b.claim.claim_id ? 1 : 0));
}

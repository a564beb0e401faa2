// The MCP server's writes, all through @lake/layout: claim proposals (masked by @lake/redact first),
// this agent's roster heartbeat and intents, and leases with fencing epochs.
import {
  acquireLease,
  checkClaimEvent,
  claimEventKey,
  declareIntent,
  encodeClaimEvent,
  heartbeat,
  leaseKey,
  listIntents,
  listLeases,
  listRoster,
  releaseLease,
  renewLease,
  resourceKey,
  ulid,
  utcDate,
  type ObjectStore,
} from "@lake/layout";
import { loadOrCreateKey, redactText } from "@lake/redact";
import type { Locations } from "../context.js";
import { ReaderError } from "../errors.js";
import { openFleetStore } from "../fleet.js";

/** A refusal: an error that still carries the answer (a lease renew or release that did not happen). */
export interface Refusal {
  readonly refusal: ReaderError;
  readonly value: Record<string, unknown>;
}

/** The coordination tools' operations for one agent on one fleet store. */
export class Coordination {
  constructor(
    private readonly loc: Locations,
    private readonly agent: string,
  ) {}

  private async withStore<T>(fn: (store: ObjectStore) => Promise<T>): Promise<T> {
    const store = openFleetStore(this.loc.store);
    try {
      return await fn(store);
    } finally {
      store.close();
    }
  }

  /** Mask, validate and append one claim proposal (create-only under a fresh ULID). */
  async propose(input: { text: string; subject?: string | undefined; repo?: string | undefined; kind?: string | undefined; claim_id?: string | undefined }): Promise<Record<string, unknown>> {
    const t = Date.now();
    const masked = redactText(loadOrCreateKey(this.loc.root), { text: input.text, subject: input.subject ?? "", repo: input.repo ?? "" });
    const ev = checkClaimEvent({
      agent: this.agent,
      proposed_at: new Date(t).toISOString(),
      text: masked.value.text,
      subject: masked.value.subject,
      repo: masked.value.repo,
      kind: input.kind ?? "fact",
      ...(input.claim_id !== undefined ? { claim_id: input.claim_id } : {}),
    });
    if (typeof ev === "string") throw new ReaderError("Usage", `propose_claim: claim rejected: ${ev}`);
    const key = claimEventKey(utcDate(t), ev.agent, ulid(t));
    return this.withStore(async (store) => {
      const w = await store.putIfAbsent(key, encodeClaimEvent(ev));
      if (w.status !== "written") throw new ReaderError("Store", `${key}: not written (${w.status})`, { data: { file: key } });
      return { key, event: ev, redaction_rules: masked.rules };
    });
  }

  /** The live roster, intents and leases (or every entry, with includeExpired). */
  async roster(includeExpired: boolean): Promise<{ agents: unknown[]; intents: unknown[]; leases: unknown[] }> {
    return this.withStore(async (store) => {
      const [agents, intents, leases] = await Promise.all([listRoster(store, { includeExpired }), listIntents(store, { includeExpired }), listLeases(store, { liveOnly: !includeExpired })]);
      return { agents, intents, leases };
    });
  }

  /** Write this agent's roster heartbeat. */
  async heartbeat(a: { runtime: string; repo?: string | undefined; branch?: string | undefined; tool?: string | undefined; ttl_seconds?: number | undefined }): Promise<Record<string, unknown>> {
    return this.withStore(async (store) => ({ ...(await heartbeat(store, { agent_id: this.agent, runtime: a.runtime, repo: a.repo ?? "", branch: a.branch ?? "", tool: a.tool ?? "", ttlSeconds: a.ttl_seconds ?? 300 })) }));
  }

  /** Replace this agent's intents. */
  async declareIntent(a: { intents: { repo: string; resource: string }[]; note?: string | undefined; ttl_seconds?: number | undefined }): Promise<Record<string, unknown>> {
    return this.withStore(async (store) => ({ ...(await declareIntent(store, { agent_id: this.agent, intents: a.intents, note: a.note ?? "", ttlSeconds: a.ttl_seconds ?? 900 })) }));
  }

  /** lease_acquire: {acquired, epoch, owner, expires_at}; not acquired is an answer, not an error. */
  async acquire(a: { repo: string; resource: string; owner?: string | undefined; ttl_seconds: number }): Promise<Record<string, unknown>> {
    return this.withStore(async (store) => ({ ...(await acquireLease(store, { repo: a.repo, resource: a.resource, owner: a.owner ?? this.agent, ttlSeconds: a.ttl_seconds })) }));
  }

  /** lease_renew: refused unless the lease is held by owner at epoch. */
  async renew(a: { repo: string; resource: string; owner?: string | undefined; epoch: number; ttl_seconds: number }): Promise<Record<string, unknown> | Refusal> {
    const owner = a.owner ?? this.agent;
    return this.withStore(async (store) => {
      const r = await renewLease(store, { repo: a.repo, resource: a.resource, owner, epoch: a.epoch, ttlSeconds: a.ttl_seconds });
      return r.renewed ? { ...r } : { refusal: notHeld("renewed", a, owner, r), value: { ...r } };
    });
  }

  /** lease_release: refused unless the lease is held by owner at epoch. */
  async release(a: { repo: string; resource: string; owner?: string | undefined; epoch: number }): Promise<Record<string, unknown> | Refusal> {
    const owner = a.owner ?? this.agent;
    return this.withStore(async (store) => {
      const r = await releaseLease(store, { repo: a.repo, resource: a.resource, owner, epoch: a.epoch });
      return r.released ? { ...r } : { refusal: notHeld("released", a, owner, r), value: { ...r } };
    });
  }
}

function notHeld(what: string, a: { repo: string; resource: string; epoch: number }, owner: string, cur: { owner: string; epoch: number; expires_at: string }): ReaderError {
  const key = leaseKey(resourceKey(a.repo, a.resource));
  const stored = cur.owner ? `names ${cur.owner} at epoch ${cur.epoch}` : "does not exist";
  return new ReaderError("Refused", `${key}: not ${what}: ${owner} does not hold it at epoch ${a.epoch} (the stored lease ${stored})`, { data: { file: key } });
}

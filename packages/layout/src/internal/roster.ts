// The roster (live/agents/<agent_id>.json) and intents (live/intents/<agent_id>.json): CAS-only
// writes by the agent itself; readers list the entries that are still live.
import { casUpdate, readJson, type CasFields } from "./cas.js";
import { LayoutError } from "./errors.js";
import { PREFIXES, agentKey, intentKey, resourceKey, validatePartitionValue } from "./keys.js";
import { DEFAULT_SKEW_MS, MAX_TTL_SECONDS, isLive, type ClockOptions } from "./lease.js";
import type { ObjectStore } from "./types.js";
import type { IntentItem, IntentObject, RosterObject } from "./formats/live.js";

/** A roster heartbeat as stored (casUpdate adds its nonce fields): {@link RosterObject}, the format's one definition. */
export type RosterEntry = RosterObject;

export type { IntentItem };

/** An agent's intents as stored (casUpdate adds its nonce fields): {@link IntentObject}, the format's one definition. */
export type IntentRecord = IntentObject;

function ttl(seconds: number): number {
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_TTL_SECONDS) throw new LayoutError("InvalidKey", `ttl must be between 0 and ${MAX_TTL_SECONDS} seconds, got ${seconds}`, { data: { detail: "ttl" } });
  return Math.round(seconds * 1000);
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Write (or refresh) an agent's roster heartbeat with compare-and-swap. `expires_at` is now + ttl by
 * this machine's clock; `started_at` is kept across heartbeats while the entry is active.
 */
export async function heartbeat(
  store: ObjectStore,
  hb: { readonly agent_id: string; readonly runtime: string; readonly repo: string; readonly branch: string; readonly tool?: string; readonly ttlSeconds: number },
  options: ClockOptions = {},
): Promise<RosterEntry> {
  const key = agentKey(hb.agent_id);
  const ms = ttl(hb.ttlSeconds);
  const now = options.now ?? Date.now;
  const out = await casUpdate<Omit<RosterEntry, never>>(
    store,
    key,
    (cur) => {
      const t = now();
      const started = cur !== undefined && cur.status === "active" && isLive(cur.expires_at, t, options.skewMs) ? cur.started_at : iso(t);
      return { agent_id: hb.agent_id, runtime: hb.runtime, repo: hb.repo, branch: hb.branch, tool: hb.tool ?? "", status: "active", started_at: started, updated_at: iso(t), expires_at: iso(t + ms) };
    },
    options.cas,
  );
  return strip(out.value as RosterEntry & CasFields);
}

/** Mark an agent as gone (status "left", expires now). Nothing happens when it has no entry. */
export async function leaveRoster(store: ObjectStore, agentId: string, options: ClockOptions = {}): Promise<void> {
  const now = options.now ?? Date.now;
  await casUpdate<Omit<RosterEntry, never>>(
    store,
    agentKey(agentId),
    (cur) => {
      if (cur === undefined) return undefined;
      const t = iso(now());
      return { ...strip(cur), status: "left", updated_at: t, expires_at: t };
    },
    options.cas,
  );
}

function strip<T extends CasFields>(v: T): Omit<T, keyof CasFields> {
  const { nonce: _n, prev_nonces: _p, ...rest } = v;
  return rest;
}

async function listLive<T extends { readonly expires_at: string; readonly agent_id: string }>(
  store: ObjectStore,
  prefix: string,
  keep: (v: T) => boolean,
  options: ClockOptions & { readonly includeExpired?: boolean },
): Promise<(T & { readonly live: boolean })[]> {
  const now = (options.now ?? Date.now)();
  const skew = options.skewMs ?? DEFAULT_SKEW_MS;
  const keys: string[] = [];
  for await (const o of store.listAll(prefix)) if (o.key.endsWith(".json") && !o.key.slice(prefix.length).includes("/")) keys.push(o.key);
  const out: (T & { live: boolean })[] = [];
  // Read a few at a time: many agents, small objects.
  for (let i = 0; i < keys.length; i += 16) {
    const batch = await Promise.all(keys.slice(i, i + 16).map((k) => readJson<T & CasFields>(store, k)));
    for (const r of batch) {
      if (!r) continue;
      const live = keep(r.value) && isLive(r.value.expires_at, now, skew);
      if (live || options.includeExpired) out.push({ ...(strip(r.value) as unknown as T), live });
    }
  }
  return out;
}

/** The roster: every agent whose heartbeat is live (or all, with includeExpired), sorted by agent_id. */
export function listRoster(store: ObjectStore, options: ClockOptions & { readonly includeExpired?: boolean } = {}): Promise<(RosterEntry & { readonly live: boolean })[]> {
  return listLive<RosterEntry>(store, PREFIXES.agents, (v) => v.status === "active", options);
}

/**
 * Declare what an agent is about to touch (replacing its earlier declaration), with compare-and-swap.
 * Advisory: nothing stops two agents declaring the same resource; readers see both.
 */
export async function declareIntent(
  store: ObjectStore,
  req: { readonly agent_id: string; readonly intents: readonly { readonly repo: string; readonly resource: string }[]; readonly note?: string; readonly ttlSeconds: number },
  options: ClockOptions = {},
): Promise<IntentRecord> {
  const key = intentKey(req.agent_id);
  const ms = ttl(req.ttlSeconds);
  const now = options.now ?? Date.now;
  const intents = req.intents.map((i) => ({ repo: i.repo, resource: i.resource, resource_key: resourceKey(i.repo, i.resource) }));
  const out = await casUpdate<Omit<IntentRecord, never>>(
    store,
    key,
    () => {
      const t = now();
      return { agent_id: req.agent_id, intents, note: req.note ?? "", declared_at: iso(t), expires_at: iso(t + ms) };
    },
    options.cas,
  );
  return strip(out.value as IntentRecord & CasFields);
}

/** Withdraw an agent's intents (an empty list that expires now). */
export async function clearIntent(store: ObjectStore, agentId: string, options: ClockOptions = {}): Promise<void> {
  validatePartitionValue("agent_id", agentId);
  const now = options.now ?? Date.now;
  await casUpdate<Omit<IntentRecord, never>>(
    store,
    intentKey(agentId),
    (cur) => {
      if (cur === undefined) return undefined;
      const t = iso(now());
      return { agent_id: agentId, intents: [], note: "", declared_at: t, expires_at: t };
    },
    options.cas,
  );
}

/** Every live declaration (non-empty and unexpired; or all, with includeExpired), sorted by agent_id. */
export function listIntents(store: ObjectStore, options: ClockOptions & { readonly includeExpired?: boolean } = {}): Promise<(IntentRecord & { readonly live: boolean })[]> {
  return listLive<IntentRecord>(store, PREFIXES.intents, (v) => Array.isArray(v.intents) && v.intents.length > 0, options);
}

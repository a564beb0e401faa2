// Leases: advisory locks with fencing epochs at live/leases/<resource_key>.json.
import { casUpdate, readJson, type CasFields, type CasOptions } from "./cas.js";
import { LayoutError } from "./errors.js";
import { PREFIXES, leaseKey, resourceKey } from "./keys.js";
import type { ObjectStore } from "./types.js";
import type { LeaseObject } from "./formats/live.js";

/** Default bound on the clock difference between any two machines of a fleet (ms). */
export const DEFAULT_SKEW_MS = 5_000;
/** Longest TTL a lease (or heartbeat, or intent) may ask for (s). */
export const MAX_TTL_SECONDS = 86_400;

/** The stored lease object: its fields ({@link LeaseObject}, the format's one definition) and casUpdate's. */
export type LeaseRecord = LeaseObject & CasFields;

/** Clock and skew settings shared by leases, the roster and intents. */
export interface ClockOptions {
  /** This machine's clock (default: Date.now). */
  readonly now?: () => number;
  /** Bound on clock difference between machines, ms (default 5 000). */
  readonly skewMs?: number;
  /** Options for the compare-and-swap loop. */
  readonly cas?: CasOptions;
}

/** Result of {@link acquireLease}: exactly the JSON of `lake-maint lease acquire --json`. */
export interface LeaseAcquireResult {
  readonly acquired: boolean;
  /** Our epoch when acquired; otherwise the current holder's epoch (0 when there is none). */
  readonly epoch: number;
  /** Us when acquired; otherwise the current holder. */
  readonly owner: string;
  readonly expires_at: string;
}

/** Result of {@link renewLease}. */
export interface LeaseRenewResult {
  readonly renewed: boolean;
  readonly epoch: number;
  readonly owner: string;
  readonly expires_at: string;
}

/** Result of {@link releaseLease}. */
export interface LeaseReleaseResult {
  readonly released: boolean;
  readonly epoch: number;
  readonly owner: string;
  readonly expires_at: string;
}

/** One row of {@link listLeases}: exactly the JSON of `lake-maint lease list --json` rows. */
export interface LeaseListEntry {
  readonly resource_key: string;
  readonly repo: string;
  readonly resource: string;
  readonly status: "held" | "free";
  readonly owner: string;
  readonly epoch: number;
  readonly expires_at: string;
  /** Held and not yet expired by the skew-adjusted rule. */
  readonly live: boolean;
}

/** What identifies a lease. */
export interface LeaseTarget {
  readonly repo: string;
  readonly resource: string;
}

function ttlMs(ttlSeconds: number): number {
  if (!Number.isFinite(ttlSeconds) || ttlSeconds <= 0 || ttlSeconds > MAX_TTL_SECONDS) {
    throw new LayoutError("InvalidKey", `ttl must be between 0 and ${MAX_TTL_SECONDS} seconds, got ${ttlSeconds}`, { data: { detail: "ttl" } });
  }
  return Math.round(ttlSeconds * 1000);
}

function checkOwner(owner: string): void {
  if (typeof owner !== "string" || owner.length === 0 || owner.length > 200) throw new LayoutError("InvalidKey", `owner must be 1-200 characters, got ${JSON.stringify(owner)}`, { data: { detail: "owner" } });
}

/**
 * True when a record with `expires_at` still counts as live for an observer at `now`: an observer
 * only treats it as expired once `now > expires_at + skew`. A time further in the future than the
 * longest TTL plus the skew means a writer's clock is beyond the bound: it counts as expired.
 */
export function isLive(expiresAt: string, now: number, skewMs: number = DEFAULT_SKEW_MS): boolean {
  const t = Date.parse(expiresAt);
  if (!Number.isFinite(t)) return false;
  if (t > now + MAX_TTL_SECONDS * 1000 + skewMs) return false;
  return now <= t + skewMs;
}

function leaseKeyOf(t: LeaseTarget): string {
  return leaseKey(resourceKey(t.repo, t.resource));
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Acquire the lease on (repo, resource) for `owner` for `ttlSeconds`. Creates the lease object when
 * missing (epoch 1); takes over a free or expired lease with epoch + 1. A lease held and live by
 * anyone, the same owner included (it renews instead), is not taken: the result names the holder
 * and its epoch. Never throws for a held lease.
 */
export async function acquireLease(
  store: ObjectStore,
  req: LeaseTarget & { readonly owner: string; readonly ttlSeconds: number },
  options: ClockOptions = {},
): Promise<LeaseAcquireResult> {
  checkOwner(req.owner);
  const ttl = ttlMs(req.ttlSeconds);
  const now = options.now ?? Date.now;
  const skew = options.skewMs ?? DEFAULT_SKEW_MS;
  const key = leaseKeyOf(req);
  const out = await casUpdate<Omit<LeaseRecord, keyof CasFields>>(
    store,
    key,
    (cur) => {
      const t = now();
      if (cur !== undefined && cur.status === "held" && isLive(cur.expires_at, t, skew)) return undefined;
      return {
        status: "held",
        owner: req.owner,
        epoch: (cur?.epoch ?? 0) + 1,
        expires_at: iso(t + ttl),
        repo: req.repo,
        resource: req.resource,
        acquired_at: iso(t),
      };
    },
    options.cas,
  );
  const v = out.value;
  if (out.changed) return { acquired: true, epoch: out.value.epoch, owner: out.value.owner, expires_at: out.value.expires_at };
  return { acquired: false, epoch: v?.epoch ?? 0, owner: v?.owner ?? "", expires_at: v?.expires_at ?? "" };
}

/**
 * Extend a lease we hold: succeeds only while the stored lease is held by `owner` at `epoch` (nobody
 * took it over). The new expiry is now + ttl by this machine's clock.
 */
export async function renewLease(
  store: ObjectStore,
  req: LeaseTarget & { readonly owner: string; readonly epoch: number; readonly ttlSeconds: number },
  options: ClockOptions = {},
): Promise<LeaseRenewResult> {
  checkOwner(req.owner);
  const ttl = ttlMs(req.ttlSeconds);
  const now = options.now ?? Date.now;
  const out = await casUpdate<Omit<LeaseRecord, keyof CasFields>>(
    store,
    leaseKeyOf(req),
    (cur) => {
      if (cur === undefined || cur.status !== "held" || cur.owner !== req.owner || cur.epoch !== req.epoch) return undefined;
      const { nonce: _n, prev_nonces: _p, ...rest } = cur;
      return { ...rest, expires_at: iso(now() + ttl) };
    },
    options.cas,
  );
  const v = out.value;
  return { renewed: out.changed, epoch: v?.epoch ?? 0, owner: v?.owner ?? "", expires_at: v?.expires_at ?? "" };
}

/**
 * Release a lease held by `owner` (at `epoch`, when given): the lease becomes free and keeps its
 * epoch, so the next acquisition gets epoch + 1. Releasing a lease one does not hold changes nothing.
 */
export async function releaseLease(
  store: ObjectStore,
  req: LeaseTarget & { readonly owner: string; readonly epoch?: number },
  options: ClockOptions = {},
): Promise<LeaseReleaseResult> {
  checkOwner(req.owner);
  const now = options.now ?? Date.now;
  const out = await casUpdate<Omit<LeaseRecord, keyof CasFields>>(
    store,
    leaseKeyOf(req),
    (cur) => {
      if (cur === undefined || cur.status !== "held" || cur.owner !== req.owner) return undefined;
      if (req.epoch !== undefined && cur.epoch !== req.epoch) return undefined;
      const { nonce: _n, prev_nonces: _p, ...rest } = cur;
      return { ...rest, status: "free", expires_at: iso(now()) };
    },
    options.cas,
  );
  const v = out.value;
  return { released: out.changed, epoch: v?.epoch ?? 0, owner: v?.owner ?? "", expires_at: v?.expires_at ?? "" };
}

/** The stored lease of (repo, resource), or undefined when it was never acquired. */
export async function readLease(store: ObjectStore, target: LeaseTarget): Promise<LeaseRecord | undefined> {
  return (await readJson<LeaseRecord & Record<string, unknown>>(store, leaseKeyOf(target)))?.value;
}

/** Every lease in the store, sorted by resource key, with a `live` flag by the skew-adjusted rule. */
export async function listLeases(store: ObjectStore, options: ClockOptions & { readonly liveOnly?: boolean } = {}): Promise<LeaseListEntry[]> {
  const now = (options.now ?? Date.now)();
  const skew = options.skewMs ?? DEFAULT_SKEW_MS;
  const out: LeaseListEntry[] = [];
  for await (const o of store.listAll(PREFIXES.leases)) {
    const name = o.key.slice(PREFIXES.leases.length);
    if (!/^[0-9a-f]{64}\.json$/.test(name)) continue;
    const r = await readJson<LeaseRecord & Record<string, unknown>>(store, o.key);
    if (!r) continue;
    const v = r.value;
    const live = v.status === "held" && isLive(v.expires_at, now, skew);
    if (options.liveOnly && !live) continue;
    out.push({ resource_key: name.slice(0, 64), repo: v.repo, resource: v.resource, status: v.status, owner: v.owner, epoch: v.epoch, expires_at: v.expires_at, live });
  }
  return out;
}

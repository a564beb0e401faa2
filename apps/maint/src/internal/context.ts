// What every operation gets: the store, this run's lease owner name, a clock, a scratch directory,
// and the leases it holds (with fencing epochs).
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { crashNow, scratchDir, type ScratchDir } from "@lake/durable";
import { acquireLease, isLayoutError, readFleet, releaseLease, renewLease, type FleetManifest, type ObjectStore } from "@lake/layout";
import { MaintError } from "./errors.js";

/** The `repo` every lake-maint lease is taken under (the resource names the partition or prefix). */
export const MAINT_LEASE_REPO = "lake-maint";

/** Options shared by every operation. */
export interface MaintContext {
  readonly store: ObjectStore;
  /** Lease owner name of this run: `lake-maint@<host>:<pid>:<random>`. */
  readonly owner: string;
  /** TTL of the leases this run takes (s); they are renewed every third of it while held. */
  readonly leaseTtlSeconds: number;
  /** This machine's clock. */
  readonly now: () => number;
  /** A progress line (stderr in the CLI). */
  readonly log: (line: string) => void;
  /** Test hooks: `point=action` pairs (see {@link testHook}). */
  readonly hooks: ReadonlyMap<string, string>;
  /** Asked before each partition: true (Ctrl-C in the CLI) stops the run there, its leases released. */
  readonly shouldStop: () => boolean;
}

/** A context with defaults. */
export function makeContext(store: ObjectStore, options: Partial<Omit<MaintContext, "store">> = {}): MaintContext {
  return {
    store,
    owner: options.owner ?? `lake-maint@${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`,
    leaseTtlSeconds: options.leaseTtlSeconds ?? 120,
    now: options.now ?? Date.now,
    log: options.log ?? (() => undefined),
    hooks: options.hooks ?? parseHooks(process.env.LAKE_MAINT_TEST_HOOK),
    shouldStop: options.shouldStop ?? (() => false),
  };
}

/** Parse `LAKE_MAINT_TEST_HOOK` (`point=action,point=action`). */
export function parseHooks(spec: string | undefined): Map<string, string> {
  const m = new Map<string, string>();
  for (const part of (spec ?? "").split(",")) {
    const i = part.indexOf("=");
    if (i > 0) m.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  return m;
}

/**
 * A test hook point. Actions: `crash` (SIGKILL this process: a real crash, no cleanup) and
 * `sleep:<ms>`, `block:<ms>` (a synchronous stall: timers, hence lease renewal, stop). Used by the crash and concurrency tests only; a no-op unless LAKE_MAINT_TEST_HOOK names the point.
 */
export async function testHook(ctx: MaintContext, point: string): Promise<void> {
  const action = ctx.hooks.get(point);
  if (action === undefined) return;
  if (action === "crash") crashNow();
  const m = /^sleep:(\d+)$/.exec(action);
  if (m) await new Promise((r) => setTimeout(r, Number(m[1])));
  // block:<ms> stalls the whole process (no timers run, so the lease is not renewed): a paused machine.
  const b = /^block:(\d+)$/.exec(action);
  if (b) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(b[1]));
}

/** A lease this run holds: its fencing epoch, a background renewal, and a check before each write. */
export class HeldLease {
  readonly resource: string;
  readonly epoch: number;
  #ctx: MaintContext;
  #timer: NodeJS.Timeout | undefined;
  #lost: string | undefined;

  constructor(ctx: MaintContext, resource: string, epoch: number) {
    this.#ctx = ctx;
    this.resource = resource;
    this.epoch = epoch;
    const every = Math.max(1000, (ctx.leaseTtlSeconds * 1000) / 3);
    this.#timer = setInterval(() => {
      this.#renew().catch(() => undefined);
    }, every);
    this.#timer.unref();
  }

  async #renew(): Promise<void> {
    if (this.#lost !== undefined) return;
    try {
      const r = await renewLease(this.#ctx.store, { repo: MAINT_LEASE_REPO, resource: this.resource, owner: this.#ctx.owner, epoch: this.epoch, ttlSeconds: this.#ctx.leaseTtlSeconds }, { now: this.#ctx.now });
      if (!r.renewed) this.#lost = `now held by ${r.owner || "nobody"} at epoch ${r.epoch}`;
    } catch (e) {
      if (isLayoutError(e)) return; // a transient failure: the next check decides
      throw e;
    }
  }

  /**
   * Renew the lease and throw `LeaseLost` unless this run still holds it at its epoch. Called right
   * before every write under the lease, so a run whose lease was taken over never writes again.
   */
  async check(): Promise<void> {
    await this.#renew();
    if (this.#lost !== undefined) {
      throw new MaintError("LeaseLost", `lease ${MAINT_LEASE_REPO}/${this.resource} (epoch ${this.epoch}) lost: ${this.#lost}; stopped before writing`, { data: { store: this.#ctx.store.url } });
    }
  }

  /** True once a renewal found the lease taken over (no further write may happen under it). */
  get lost(): boolean {
    return this.#lost !== undefined;
  }

  /** Stop renewing and release the lease (best effort). */
  async release(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#lost !== undefined) return;
    await releaseLease(this.#ctx.store, { repo: MAINT_LEASE_REPO, resource: this.resource, owner: this.#ctx.owner, epoch: this.epoch }, { now: this.#ctx.now }).catch(() => undefined);
  }
}

/** What happened when a lease was asked for. */
export type LeaseOutcome = { readonly held: true; readonly lease: HeldLease } | { readonly held: false; readonly owner: string; readonly epoch: number; readonly expires_at: string };

/** Take the lease on `resource` (under repo "lake-maint"). */
export async function takeLease(ctx: MaintContext, resource: string): Promise<LeaseOutcome> {
  const r = await acquireLease(ctx.store, { repo: MAINT_LEASE_REPO, resource, owner: ctx.owner, ttlSeconds: ctx.leaseTtlSeconds }, { now: ctx.now });
  if (!r.acquired) return { held: false, owner: r.owner, epoch: r.epoch, expires_at: r.expires_at };
  return { held: true, lease: new HeldLease(ctx, resource, r.epoch) };
}

/**
 * Run `fn` holding the lease on `resource`; release it afterwards. When someone else holds it,
 * return `{ held: false, … }` without calling `fn`.
 */
export async function withLease<T>(ctx: MaintContext, resource: string, fn: (lease: HeldLease) => Promise<T>): Promise<{ held: true; value: T } | { held: false; owner: string; epoch: number; expires_at: string }> {
  const got = await takeLease(ctx, resource);
  if (!got.held) return { held: false, owner: got.owner, epoch: got.epoch, expires_at: got.expires_at };
  try {
    await testHook(ctx, `${resource.split("/")[0]}:after-lease`);
    return { held: true, value: await fn(got.lease) };
  } finally {
    await got.lease.release();
  }
}

/** fleet.json, or a NotFound error naming the store. */
export async function requireFleet(store: ObjectStore): Promise<FleetManifest> {
  const f = await readFleet(store);
  if (f === undefined) throw new MaintError("NotFound", `fleet.json: not found in ${store.url} (run lake-maint init --store URL)`, { data: { key: "fleet.json", store: store.url } });
  return f;
}

/**
 * A scratch directory (downloaded segments, DuckDB's spill), removed by the returned function; one a
 * killed maint left is removed by the next maint that takes a scratch directory of the same label
 * (@lake/durable's scratchDir).
 */
export function scratch(label: string): ScratchDir {
  return scratchDir(`lake-maint-${label}`);
}

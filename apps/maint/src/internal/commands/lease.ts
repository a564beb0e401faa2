import { count, defineCommand, flag, seconds, text } from "@lake/cli";
import { acquireLease, listLeases, releaseLease } from "@lake/layout";
import { EXIT } from "../errors.js";
import { COMMON, emit, orNone, withStore } from "./shared.js";

const WHO = {
  repo: text("R", "the lease's repo", { required: true }),
  resource: text("X", "the resource it covers", { required: true }),
  owner: text("O", "the owner name", { required: true }),
} as const;

/** `lake-maint lease acquire`. */
export const leaseAcquireCommand = defineCommand({
  summary: "acquire a lease (exit 4 when held by another)",
  description: '  Prints {"acquired", "epoch", "owner", "expires_at"}. Exit 0 when acquired, 5 when held by another.',
  options: { ...WHO, ttl: seconds("how long the lease lives", { required: true, min: 0.001 }), ...COMMON },
  run: ({ values: v, io }) =>
    withStore(v, io, async (store) => {
      const r = await acquireLease(store, { repo: v.repo, resource: v.resource, owner: v.owner, ttlSeconds: v.ttl });
      emit(io, v.json, r, () => [r.acquired ? `acquired epoch ${r.epoch} until ${r.expires_at}` : `held by ${r.owner} (epoch ${r.epoch}) until ${r.expires_at}`]);
      return r.acquired ? EXIT.ok : EXIT.locked;
    }),
});

/** `lake-maint lease release`. */
export const leaseReleaseCommand = defineCommand({
  summary: "release a lease (exit 4 when O does not hold it)",
  description: '  Prints {"released", "epoch", "owner", "expires_at"}. Exit 0 when released, 5 when O does not hold it.',
  options: { ...WHO, epoch: count("N", "only at this fencing epoch"), ...COMMON },
  run: ({ values: v, io }) =>
    withStore(v, io, async (store) => {
      const r = await releaseLease(store, { repo: v.repo, resource: v.resource, owner: v.owner, ...(v.epoch !== undefined ? { epoch: v.epoch } : {}) });
      emit(io, v.json, r, () => [r.released ? `released epoch ${r.epoch}` : `not released: held by ${r.owner || "nobody"} (epoch ${r.epoch})`]);
      return r.released ? EXIT.ok : EXIT.locked;
    }),
});

/** `lake-maint lease list`. */
export const leaseListCommand = defineCommand({
  summary: "leases that are held and live",
  description: "  Leases that are held and live (--all: every lease object), as a JSON array with --json.",
  options: { all: flag("every lease object, expired and released ones too"), ...COMMON },
  run: ({ values: v, io }) =>
    withStore(v, io, async (store) => {
      const r = await listLeases(store, { liveOnly: !v.all });
      emit(io, v.json, r, () =>
        orNone(
          r.map((l) => `${l.resource_key} ${l.repo} ${l.resource} ${l.status} ${l.owner} epoch=${l.epoch} expires=${l.expires_at}${l.live ? "" : " (expired)"}`),
          v.all ? "no leases" : "no leases held",
        ),
      );
      return EXIT.ok;
    }),
});

// `forget SESSION`: remove a session from the fleet. In this order: (1) the tombstone
// tombstones/<id>.json (create-only), so a collector's push of it is refused from then on; (2) every
// bronze object of it (segments and their usage rollups, _SEALED, digest.json of session=<id> and session=<id>.N) and its
// quarantine objects; (3) every compacted partition whose _COMPACTED cites it is compacted again
// without it (a partition left with no session loses its marker), then its old generations (parts
// and usage rollups) are garbage-collected once older than the grace period; (4) claims that cite
// it are deleted and the snapshot is published again without them, the old blob deleted after the
// grace period. A stopped run is finished by running it again.
import { PREFIXES, compactedMarkerKey, decodeQuarantine, encodeTombstone, parseKey, readSnapshotPointer, tombstoneKey, type ObjectStore } from "@lake/layout";
import { withLease, type MaintContext } from "./context.js";
import { readMarker, runCompact, type CompactReport } from "./compact.js";
import { runGc, type GcReport } from "./gc.js";
import { MaintError } from "./errors.js";

/** What forget did (or, without apply, would do). */
export interface ForgetReport {
  readonly session: string;
  readonly apply: boolean;
  readonly tombstone: { readonly key: string; readonly written: boolean };
  /** Bronze and quarantine objects deleted (or to delete). */
  readonly deleted: string[];
  /** Partitions whose live generation cited the session, compacted again. */
  readonly recompacted: CompactReport[];
  /** Markers deleted because no session was left in their partition. */
  readonly markers_deleted: string[];
  readonly gc: GcReport[];
  /** Claim objects deleted (they cited the session). */
  readonly claims: string[];
  readonly snapshot?: { readonly status: string; readonly content_hash?: string | undefined; readonly old_blobs_deleted: string[]; readonly old_blobs_kept: string[] };
}

/** True for a session directory label of the session: `<id>` or `<id>.<n>`. */
function labelOf(label: string, id: string): boolean {
  return label === id || (label.startsWith(id + ".") && /^\d+$/.test(label.slice(id.length + 1)));
}

async function readText(store: ObjectStore, key: string): Promise<string | undefined> {
  const o = await store.get(key);
  return o === undefined ? undefined : new TextDecoder().decode(o.body);
}

/** Forget `sessionId` in the fleet; without `apply`, only lists what would go. */
export async function runForget(ctx: MaintContext, sessionId: string, options: { apply: boolean; graceSeconds: number }): Promise<ForgetReport> {
  const store = ctx.store;
  const tkey = tombstoneKey(sessionId);
  let written = false;
  if (options.apply) {
    const r = await store.putIfAbsent(tkey, encodeTombstone({ format: 1, session_id: sessionId, forgotten_at: new Date(ctx.now()).toISOString(), by: ctx.owner }));
    if (r.status === "unknown") throw new MaintError("Store", `${tkey}: outcome of the tombstone's write is unknown; run forget again`, { data: { key: tkey, store: store.url } });
    written = r.status === "written";
  }
  // (2) Bronze of every part of the session, and its quarantine objects.
  const deleted: string[] = [];
  const partitions = new Map<string, { dt: string; fleet: string }>();
  for await (const o of store.listAll(PREFIXES.sessions)) {
    if (o.key.startsWith(PREFIXES.compacted)) continue;
    const k = parseKey(o.key);
    if (k === undefined || (k.kind !== "segment" && k.kind !== "segment-usage" && k.kind !== "sealed" && k.kind !== "digest") || !labelOf(k.session, sessionId)) continue;
    partitions.set(`${k.dt}/${k.fleet}`, { dt: k.dt, fleet: k.fleet });
    deleted.push(o.key);
  }
  for await (const o of store.listAll(PREFIXES.quarantine)) {
    if (parseKey(o.key)?.kind !== "quarantine") continue;
    const got = await store.get(o.key);
    try {
      if (got !== undefined && decodeQuarantine(o.key, got.body).session_id === sessionId) deleted.push(o.key);
    } catch {
      /* not a quarantine object: verify reports it; it names no session */
    }
  }
  // (3) Partitions whose live generation cites the session.
  const cited: { dt: string; fleet: string }[] = [];
  for await (const o of store.listAll(PREFIXES.compacted)) {
    const k = parseKey(o.key);
    if (k?.kind !== "compacted-marker") continue;
    const m = await readMarker(store, k.dt, k.fleet);
    if (m?.value.sessions.some((s) => labelOf(s.session, sessionId))) cited.push({ dt: k.dt, fleet: k.fleet });
    // Old generations of any partition the session was in may hold it too: gc looks at those.
    if (m?.value.sessions.some((s) => labelOf(s.session, sessionId)) || partitions.has(`${k.dt}/${k.fleet}`)) partitions.set(`${k.dt}/${k.fleet}`, { dt: k.dt, fleet: k.fleet });
  }
  // (4) Claims that cite the session (any field naming its id).
  const claims: string[] = [];
  for (const prefix of [PREFIXES.claimEvents, PREFIXES.fleetClaims]) {
    for await (const o of store.listAll(prefix)) {
      const text = await readText(store, o.key);
      if (text?.includes(sessionId)) claims.push(o.key);
    }
  }
  if (!options.apply) return { session: sessionId, apply: false, tombstone: { key: tkey, written: false }, deleted, recompacted: [], markers_deleted: [], gc: [], claims };

  for (const key of deleted) await store.delete(key);
  const recompacted: CompactReport[] = [];
  const markersDeleted: string[] = [];
  for (const p of cited) {
    const [r] = await runCompact(ctx, { dt: p.dt, fleet: p.fleet });
    if (r === undefined || r.status === "empty") {
      // No sealed session left: the marker would keep naming a generation that holds the session.
      const key = compactedMarkerKey(p);
      const held = await withLease(ctx, `compact/dt=${p.dt}/fleet=${p.fleet}`, async (lease) => {
        await lease.check();
        await store.delete(key);
      });
      if (!held.held) throw new MaintError("Held", `${key}: partition lease held by ${held.owner}; run forget again`, { data: { key, store: store.url } });
      markersDeleted.push(key);
      recompacted.push(r ?? { dt: p.dt, fleet: p.fleet, status: "empty", skipped: [] });
    } else {
      if (r.status === "held") throw new MaintError("Held", `${compactedMarkerKey(p)}: partition lease held by ${r.held_by}; run forget again`, { data: { key: compactedMarkerKey(p), store: store.url } });
      recompacted.push(r);
    }
  }
  const gc: GcReport[] = [];
  for (const p of partitions.values()) gc.push(...(await runGc(ctx, options.graceSeconds, { dt: p.dt, fleet: p.fleet })));
  for (const key of claims) await store.delete(key);
  let snapshot: ForgetReport["snapshot"];
  const pointer = await readSnapshotPointer(store).catch(() => undefined);
  if (claims.length > 0 || pointer !== undefined) {
    const { runSnapshot } = await import("./snapshot.js");
    const s = claims.length > 0 ? await runSnapshot(ctx) : undefined;
    const live = (await readSnapshotPointer(store).catch(() => undefined))?.content_hash;
    const oldDeleted: string[] = [];
    const oldKept: string[] = [];
    if (claims.length > 0) {
      // Blobs other than the live one may hold a deleted claim: deleted once older than the grace period.
      for await (const o of store.listAll(PREFIXES.snapshot)) {
        const k = parseKey(o.key);
        if (k?.kind !== "snapshot-blob" || k.contentHash === live) continue;
        if (o.lastModified !== undefined && ctx.now() - o.lastModified.getTime() >= options.graceSeconds * 1000) {
          await store.delete(o.key);
          oldDeleted.push(o.key);
        } else oldKept.push(o.key);
      }
    }
    snapshot = { status: s?.status ?? "unchanged", content_hash: live, old_blobs_deleted: oldDeleted, old_blobs_kept: oldKept };
  }
  return { session: sessionId, apply: true, tombstone: { key: tkey, written }, deleted, recompacted, markers_deleted: markersDeleted, gc, claims, ...(snapshot ? { snapshot } : {}) };
}

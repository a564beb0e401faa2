// `gc`: delete compacted generations that no _COMPACTED marker names, once older than a grace
// period. Only keys that parse as compacted parts or usage rollups are ever deleted: never bronze,
// never the live gen.
import { PREFIXES, compactedMarkerKey, compactedPrefix, parseKey, type ObjectInfo } from "@lake/layout";
import { isMaintError, reasonOf } from "./errors.js";
import { withLease, type MaintContext } from "./context.js";
import { readMarker } from "./compact.js";
import type { PartitionFilter } from "./sessions.js";

/** Default grace period (s): a generation younger than this is kept even when no marker names it (the CLI repeats it). */
export const DEFAULT_GC_GRACE_SECONDS = 3600;

/** What gc did in one partition. */
export interface GcReport {
  readonly dt: string;
  readonly fleet: string;
  /** done; held: another run holds the lease; skipped: its _COMPACTED does not decode (nothing deleted: which generation is live is unknown). */
  readonly status: "done" | "held" | "skipped";
  readonly live_gen?: string | undefined;
  readonly deleted: string[];
  /** Unnamed generation files kept because they are younger than the grace period (or their age is unknown). */
  readonly kept: string[];
  readonly held_by?: string;
  readonly skipped?: { key: string; reason: string }[];
}

/** `gc` over every compacted partition (or the filtered ones). */
export async function runGc(ctx: MaintContext, graceSeconds: number = DEFAULT_GC_GRACE_SECONDS, filter: PartitionFilter = {}): Promise<GcReport[]> {
  const parts = new Map<string, { dt: string; fleet: string }>();
  const prefix = filter.dt !== undefined ? `${PREFIXES.compacted}dt=${filter.dt}/` : PREFIXES.compacted;
  for await (const o of ctx.store.listAll(prefix)) {
    const k = parseKey(o.key);
    if (k === undefined || (k.kind !== "compacted-part" && k.kind !== "compacted-usage" && k.kind !== "compacted-marker")) continue;
    if (filter.fleet !== undefined && k.fleet !== filter.fleet) continue;
    parts.set(`${k.dt}/${k.fleet}`, { dt: k.dt, fleet: k.fleet });
  }
  const out: GcReport[] = [];
  for (const { dt, fleet } of parts.values()) {
    if (ctx.shouldStop()) break;
    let marker;
    try {
      marker = (await readMarker(ctx.store, dt, fleet))?.value;
    } catch (e) {
      // A damaged marker affects its partition only: nothing of it is deleted, the others go on.
      if (!isMaintError(e, "Corrupt")) throw e;
      out.push({ dt, fleet, status: "skipped", deleted: [], kept: [], skipped: [{ key: e.data.key || compactedMarkerKey({ dt, fleet }), reason: `${reasonOf(e.message, e.data.key || compactedMarkerKey({ dt, fleet }))}; nothing deleted in this partition` }] });
      continue;
    }
    const r = await withLease(ctx, `compact/dt=${dt}/fleet=${fleet}`, async (lease) => {
      marker = (await readMarker(ctx.store, dt, fleet))?.value;
      const live = marker?.gen;
      const now = ctx.now();
      // A generation stopped being live when a later one was swapped in: the grace period runs
      // from the current marker's swap too (a reader that read the previous marker just before it
      // may still be reading that generation), not only from the files' upload.
      const swappedAt = marker === undefined ? Number.NaN : Date.parse(marker.compacted_at);
      const recentSwap = Number.isFinite(swappedAt) && now - swappedAt < graceSeconds * 1000;
      const deleted: string[] = [];
      const kept: string[] = [];
      const doomed: ObjectInfo[] = [];
      for await (const o of ctx.store.listAll(compactedPrefix({ dt, fleet }))) {
        const k = parseKey(o.key);
        if ((k?.kind !== "compacted-part" && k?.kind !== "compacted-usage") || k.gen === live) continue;
        if (recentSwap || o.lastModified === undefined || now - o.lastModified.getTime() < graceSeconds * 1000) kept.push(o.key);
        else doomed.push(o);
      }
      for (const o of doomed) {
        await lease.check();
        await ctx.store.delete(o.key);
        deleted.push(o.key);
      }
      return { live, deleted, kept };
    });
    out.push(r.held ? { dt, fleet, status: "done", live_gen: r.value.live, deleted: r.value.deleted, kept: r.value.kept } : { dt, fleet, status: "held", held_by: r.owner, deleted: [], kept: [] });
  }
  return out;
}

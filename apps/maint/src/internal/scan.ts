// One pass over sessions/: every session directory with its segments, _SEALED and digest.json.
import { join } from "node:path";
import { PREFIXES, decodeSealed, isLayoutError, parseKey, sealedKey, type ObjectInfo, type ObjectStore, type SealedMarker, type SessionPartition } from "@lake/layout";
import { checkContentHash } from "@lake/segments/hash";
import { MaintError } from "./errors.js";

/** One bronze segment object. */
export interface SegmentObject {
  readonly key: string;
  readonly seq: number;
  readonly size: number;
  readonly lastModified?: Date;
}

/** A session directory as listed. */
export interface SessionDir {
  readonly part: SessionPartition;
  /** Segments in seq order. */
  readonly segments: SegmentObject[];
  sealed: boolean;
  digest: boolean;
}

/** The result of {@link scanSessions}. */
export interface SessionScan {
  readonly sessions: SessionDir[];
  /** Keys under sessions/ (outside compacted/) that the layout does not define. */
  readonly strays: ObjectInfo[];
}

/** Sort key of a session directory: dt, fleet, runtime, agent, session. */
export function sessionId(p: SessionPartition): string {
  return `dt=${p.dt}/fleet=${p.fleet}/runtime=${p.runtime}/agent=${p.agent}/session=${p.session}`;
}

/** List every session directory (optionally of one dt and/or fleet), sorted. */
export async function scanSessions(store: ObjectStore, filter: { readonly dt?: string | undefined; readonly fleet?: string | undefined } = {}): Promise<SessionScan> {
  const prefix = filter.dt !== undefined ? `${PREFIXES.sessions}dt=${filter.dt}/` : PREFIXES.sessions;
  const dirs = new Map<string, SessionDir>();
  const strays: ObjectInfo[] = [];
  const dirOf = (p: SessionPartition): SessionDir => {
    const id = sessionId(p);
    let d = dirs.get(id);
    if (!d) dirs.set(id, (d = { part: { dt: p.dt, fleet: p.fleet, runtime: p.runtime, agent: p.agent, session: p.session }, segments: [], sealed: false, digest: false }));
    return d;
  };
  for await (const o of store.listAll(prefix)) {
    if (o.key.startsWith(PREFIXES.compacted)) continue;
    const k = parseKey(o.key);
    if (k === undefined || (k.kind !== "segment" && k.kind !== "sealed" && k.kind !== "digest")) {
      strays.push(o);
      continue;
    }
    if (filter.fleet !== undefined && k.fleet !== filter.fleet) continue;
    const d = dirOf(k);
    if (k.kind === "segment") d.segments.push(o.lastModified === undefined ? { key: o.key, seq: k.seq, size: o.size } : { key: o.key, seq: k.seq, size: o.size, lastModified: o.lastModified });
    else if (k.kind === "sealed") d.sealed = true;
    else d.digest = true;
  }
  const sessions = [...dirs.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, d]) => d);
  for (const d of sessions) d.segments.sort((a, b) => a.seq - b.seq);
  return { sessions, strays };
}

/** Read a session's `_SEALED`; Corrupt when it is not valid, NotFound when missing. */
export async function readSealed(store: ObjectStore, p: SessionPartition): Promise<SealedMarker> {
  const key = sealedKey(p);
  const o = await store.get(key);
  if (o === undefined) throw new MaintError("NotFound", `${key}: not found`, { data: { key, store: store.url } });
  return decoded(store, () => decodeSealed(key, o.body));
}

/** Run a @lake/layout decoder; its Corrupt error becomes this app's (same message, the key named). */
export function decoded<T>(store: ObjectStore, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (isLayoutError(e, "Corrupt")) throw new MaintError("Corrupt", e.message, { data: { key: e.data.key ?? "", store: store.url }, cause: e });
    throw e;
  }
}

/**
 * Why a sealed session cannot be processed, or undefined when its segments are contiguous from
 * seg-000000 and at least the marker's `segments` of them are there. Segments numbered from
 * `segments` on are late (see {@link lateSegments}): allowed, not a mismatch.
 */
export function sealedMismatch(d: SessionDir, sealed: SealedMarker): string | undefined {
  for (let i = 0; i < d.segments.length; i++) if (d.segments[i]!.seq !== i) return `segment seq ${i} missing (found seg-${String(d.segments[i]!.seq).padStart(6, "0")})`;
  if (d.segments.length < sealed.segments) return `_SEALED says ${sealed.segments} segments, found ${d.segments.length}`;
  return undefined;
}

/** The session directory with only the segments its `_SEALED` counts (seq below its `segments`). */
export function sealedOnly(d: SessionDir, sealed: SealedMarker): SessionDir {
  return { ...d, segments: d.segments.filter((s) => s.seq < sealed.segments) };
}

/**
 * A sealed directory's late segments: numbered at or past `_SEALED.segments`, uploaded by a push that
 * raced the seal (it checked for `_SEALED` before the seal was written) or by a collector that did
 * not check. They are records of the session like any other: compact includes them, verify accepts
 * them, digest covers the sealed segments only.
 */
export function lateSegments(d: SessionDir, sealed: SealedMarker): SegmentObject[] {
  return d.segments.filter((s) => s.seq >= sealed.segments);
}

/**
 * Download a session's segments into `dir` (`<n>.parquet`), returning the local paths in seq order.
 * Each is checked against the content hash its footer records (@lake/segments checkContentHash): a
 * damaged segment is Corrupt, naming its key, and nothing is read from it.
 */
export async function downloadSegments(store: ObjectStore, d: SessionDir, dir: string, tag: string): Promise<string[]> {
  const out: string[] = [];
  for (const s of d.segments) {
    const path = join(dir, `${tag}-${String(s.seq).padStart(6, "0")}.parquet`);
    try {
      await store.download(s.key, path);
    } catch (e) {
      throw new MaintError("Store", `${s.key}: cannot download (${e instanceof Error ? e.message : String(e)})`, { data: { key: s.key, store: store.url }, cause: e });
    }
    const c = checkContentHash(path);
    if (c.status === "damaged") throw new MaintError("Corrupt", `${s.key}: damaged segment: ${c.reason}`, { data: { key: s.key, store: store.url } });
    out.push(path);
  }
  return out;
}

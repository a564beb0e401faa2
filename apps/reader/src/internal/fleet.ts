// What the reader reads from a fleet store: the bronze segments of sessions no compacted generation
// covers, the parts of each partition's current compacted generation (_COMPACTED), the _SEALED
// markers, and the current snapshot. A file:// store is read in place; an s3:// store is mirrored
// into the cache, one local file per (key, etag). No value is read from a file before its content
// hash is checked (@lake/segments/hash: a segment's or part's own footer hash, a rollup's or
// snapshot's SHA-256 as its marker or name records it); checks are remembered in the cache
// (`checked/`, by device, inode, size and times of the local file — a mirrored file is named by its
// etag) so an unchanged fleet costs a stat per file. A damaged object is left out and named.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { SNAPSHOT_LATEST_KEY, decodeCompacted, decodeSnapshotPointer, isLayoutError, parseKey, snapshotBlobKey } from "@lake/layout/formats";
import { openStore, parseStoreUrl, type ObjectStore } from "@lake/layout/store";
import { CheckedFiles, type ContentHashCheck } from "@lake/segments/hash";
import { ReaderError } from "./errors.js";

/** A bronze segment, with the partition values of its session directory. */
export interface BronzeFile {
  readonly key: string;
  readonly path: string;
  readonly dt: string;
  readonly fleet: string;
  readonly runtime: string;
  readonly agent: string;
  readonly session: string;
}

/** A part of a current compacted generation. */
export interface CompactedFile {
  readonly key: string;
  readonly path: string;
  readonly dt: string;
  readonly fleet: string;
  readonly gen: string;
}

/** A partition's current compacted generation, with its usage rollup when maint wrote one. */
export interface CompactedPartition {
  readonly dt: string;
  readonly fleet: string;
  readonly gen: string;
  /** Its part files (also in FleetFiles.compacted). */
  readonly parts: readonly CompactedFile[];
  /** Local paths of the generation's usage rollup (`gen=…/usage.json`, `gen=…/usage.keys`), when the marker names one. */
  readonly usage: { readonly json: string; readonly keys: string; readonly key: string } | undefined;
}

/**
 * A bronze session directory whose newest segment has push's usage rollup beside it (of all its
 * segments, 0..N): usage adds the rollup instead of reading those segments' rows.
 */
export interface BronzeRollup {
  /** Store key of the rollup's usage.json. */
  readonly key: string;
  /** Local paths of its usage.json and usage.keys. */
  readonly json: string;
  readonly keys: string;
  /** Local paths of the directory's segments (also in FleetFiles.bronze), read instead when the rollup cannot be added. */
  readonly segments: readonly string[];
}

/** A sealed session directory. */
export interface SealedSession {
  readonly dt: string;
  readonly fleet: string;
  readonly runtime: string;
  readonly agent: string;
  readonly session: string;
}

/** An object the reader found damaged and left out (its session or partition is read without it). */
export interface Damage {
  readonly key: string;
  /** One line: the key and the reason. */
  readonly reason: string;
}

/** The local files the read model is built over. */
export interface FleetFiles {
  readonly storeUrl: string;
  readonly bronze: readonly BronzeFile[];
  readonly compacted: readonly CompactedFile[];
  /** The compacted partitions, in key order. */
  readonly partitions: readonly CompactedPartition[];
  /** Bronze directories with a usage rollup of all their segments, in key order. */
  readonly bronzeRollups: readonly BronzeRollup[];
  readonly sealed: readonly SealedSession[];
  /** Local path of the current snapshot SQLite, when the store has one. */
  readonly snapshot: string | undefined;
  /** Objects left out because they are damaged (the answer is partial when there are any). */
  readonly damaged: Damage[];
  /** SHA-256 over every followed key with its size and etag: changes when the data does. */
  readonly fingerprint: string;
  /**
   * Make sure the given local paths hold their objects' bytes, checked. Resolved with `mirror: false`,
   * an s3:// store's objects are downloaded only here (opening the store again), so a command fetches
   * only what it reads, and every object's hash is checked only here; otherwise this does nothing.
   * Resolves to the paths found damaged (each also added to `damaged`): read none of them.
   */
  fetch(paths: readonly string[]): Promise<ReadonlySet<string>>;
}

/** One object of a listing. */
export interface ListedObject {
  readonly key: string;
  readonly size: number;
  readonly etag?: string | undefined;
  readonly lastModified?: Date | undefined;
}

/** The few store operations the reader needs (a subset of @lake/layout's ObjectStore). */
export interface ReadableStore {
  readonly url: string;
  listAll(prefix: string): AsyncIterable<ListedObject>;
  get(key: string): Promise<{ body: Uint8Array; etag: string } | undefined>;
  head(key: string): Promise<{ key: string; size: number; etag?: string | undefined } | undefined>;
  download(key: string, file: string): Promise<{ etag: string; size: number }>;
  close(): void;
}

/** Where a store's objects are read from: in place (file://) or mirrored (s3://). */
interface Access {
  readonly store: ReadableStore;
  /** The local path that holds (or will hold, once fetched) the object's bytes. */
  pathOf(obj: ListedObject): Promise<string>;
  /** Make sure `path` holds the object's bytes (a download for a mirror; nothing in place). */
  fetch(obj: ListedObject, path: string): Promise<void>;
}

/** Open a store URL for reading, through @lake/layout's ObjectStore (local directory or S3). */
export async function openReadableStore(url: string): Promise<ReadableStore> {
  return openFleetStore(url) as unknown as ReadableStore;
}

/** Open a store URL as @lake/layout's ObjectStore: a file:// store's directory must exist (NotFound), a bad URL is a Usage error. */
export function openFleetStore(url: string): ObjectStore {
  let loc;
  try {
    loc = parseStoreUrl(url);
  } catch (e) {
    throw new ReaderError("Usage", (e as Error).message, { data: { file: url }, cause: e });
  }
  if (loc.kind === "file" && !existsSync(loc.root)) throw new ReaderError("NotFound", `${loc.root}: fleet store directory does not exist`, { data: { file: loc.root } });
  try {
    return openStore(loc.url);
  } catch (e) {
    throw new ReaderError("Usage", `store ${url}: ${(e as Error).message}`, { data: { file: url }, cause: e });
  }
}

function storeError(store: ReadableStore, key: string, e: unknown): ReaderError {
  if (e instanceof ReaderError) return e;
  return new ReaderError("Store", `${store.url}/${key}: ${(e as Error).message}`, { data: { file: `${store.url}/${key}` }, cause: e });
}

function accessFor(store: ReadableStore, cacheDir: string): Access {
  const loc = parseStoreUrl(store.url);
  if (loc.kind === "file") {
    const root = loc.root;
    return { store, pathOf: async (o) => join(root, ...o.key.split("/")), fetch: async () => undefined };
  }
  const base = join(cacheDir, "mirror", createHash("sha256").update(store.url).digest("hex").slice(0, 16));
  return {
    store,
    async pathOf(o) {
      let etag = o.etag;
      if (etag === undefined) {
        const h = await store.head(o.key).catch((e: unknown) => {
          throw storeError(store, o.key, e);
        });
        if (!h) throw new ReaderError("NotFound", `${store.url}/${o.key}: object vanished while reading`, { data: { file: o.key } });
        etag = h.etag ?? String(h.size);
      }
      // `<key>/<etag>.<extension>`: mirrored paths sort as their keys do (read order — the first
      // copy of a record, the last `latest` copy — follows keys), and keep the key's extension.
      const safe = etag.replace(/[^A-Za-z0-9_-]/g, "_");
      const name = o.key.slice(o.key.lastIndexOf("/") + 1);
      const dot = name.lastIndexOf(".");
      return join(base, ...o.key.split("/"), `${safe}${dot > 0 ? name.slice(dot) : ""}`);
    },
    async fetch(o, file) {
      if (existsSync(file)) return;
      mkdirSync(dirname(file), { recursive: true });
      try {
        await store.download(o.key, file);
      } catch (e) {
        throw storeError(store, o.key, e);
      }
    },
  };
}

/** A layout decoder's Corrupt error as this app's. */
function decoded<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (isLayoutError(e, "Corrupt")) throw new ReaderError("Corrupt", e.message, { data: { file: e.data.key ?? "" }, cause: e });
    throw e;
  }
}

/**
 * List what the reader follows in a store: per (dt, fleet) partition with a _COMPACTED marker, the
 * current generation's parts, and bronze segments only of sessions the marker does not name; the
 * bronze segments of every other partition. Mirrors s3:// objects into `cacheDir`.
 */
export async function resolveFleet(store: ReadableStore, cacheDir: string, options: { mirror?: boolean; damaged?: Damage[] } = {}): Promise<FleetFiles> {
  const mirror = options.mirror ?? true;
  const base = accessFor(store, cacheDir);
  const damaged: Damage[] = options.damaged ?? [];
  const checks = CheckedFiles.open(checkedFile(cacheDir, store.url));
  // Every local path with its object and what its bytes must hash to (a file SHA-256, or undefined:
  // the content hash its Parquet footer records).
  const pending = new Map<string, { obj: ListedObject; sha256: string | undefined }>();
  const verdicts = new Map<string, ContentHashCheck>();
  const check = (path: string): ContentHashCheck => {
    let v = verdicts.get(path);
    if (v === undefined) {
      const want = pending.get(path)!;
      v = want.sha256 === undefined ? checks.content(path) : checks.file(path, want.sha256);
      verdicts.set(path, v);
    }
    return v;
  };
  const access = {
    store,
    /** The object's local path; mirrored (and checked: the damage reason, if any) unless `mirror: false`. */
    async localPath(o: ListedObject, sha256?: string): Promise<{ path: string; damage: Damage | undefined }> {
      const path = await base.pathOf(o);
      pending.set(path, { obj: o, sha256 });
      if (!mirror) return { path, damage: undefined };
      await base.fetch(o, path);
      const v = check(path);
      return { path, damage: v.status === "damaged" ? { key: o.key, reason: `${o.key}: damaged: ${v.reason}` } : undefined };
    },
  };
  const fp = createHash("sha256").update(store.url);
  const segs: (ListedObject & { part: { dt: string; fleet: string; runtime: string; agent: string; session: string } })[] = [];
  const sealed: SealedSession[] = [];
  const markers: { obj: ListedObject; dt: string; fleet: string }[] = [];
  const compactedObjs = new Map<string, ListedObject>();
  // Push's segment rollups per session directory and segment number: the json and keys objects.
  const segRollups = new Map<string, { json?: ListedObject & { sha256: string }; keys?: ListedObject & { sha256: string } }>();
  try {
    for await (const o of store.listAll("sessions/")) {
      const k = parseKey(o.key);
      if (k?.kind === "segment") segs.push({ ...o, part: { dt: k.dt, fleet: k.fleet, runtime: k.runtime, agent: k.agent, session: k.session } });
      else if (k?.kind === "segment-usage") {
        const id = `${k.dt}\0${k.fleet}\0${k.runtime}\0${k.agent}\0${k.session}\0${k.seq}`;
        const r = segRollups.get(id) ?? {};
        r[k.file] ??= { ...o, sha256: k.sha256 };
        segRollups.set(id, r);
      } else if (k?.kind === "sealed") sealed.push({ dt: k.dt, fleet: k.fleet, runtime: k.runtime, agent: k.agent, session: k.session });
      else if (k?.kind === "compacted-marker") markers.push({ obj: o, dt: k.dt, fleet: k.fleet });
      else if (k?.kind === "compacted-part" || k?.kind === "compacted-usage") compactedObjs.set(o.key, o);
    }
  } catch (e) {
    throw storeError(store, "sessions/", e);
  }
  // Segments per session directory, to tell whether a generation still reflects its bronze.
  const segCount = new Map<string, number>();
  const dirOf = (p: { dt: string; fleet: string; runtime: string; agent: string; session: string }) => `${p.dt}\0${p.fleet}\0${p.runtime}\0${p.agent}\0${p.session}`;
  for (const s of segs) segCount.set(dirOf(s.part), (segCount.get(dirOf(s.part)) ?? 0) + 1);
  const covered = new Set<string>();
  const compacted: CompactedFile[] = [];
  const partitions: CompactedPartition[] = [];
  // Markers are small and independent: read them all at once (an S3 round trip, or a thread-pool
  // hop, each), then follow them in key order.
  const bodies = await Promise.all(
    markers.map((mk) =>
      store.get(mk.obj.key).catch((e: unknown) => {
        throw storeError(store, mk.obj.key, e);
      }),
    ),
  );
  for (const [i, mk] of markers.entries()) {
    const got = bodies[i];
    if (!got) continue;
    // A damaged marker affects its partition only: its sessions are read from bronze.
    let marker;
    try {
      marker = decoded(() => decodeCompacted(mk.obj.key, got.body));
      if (marker.dt !== mk.dt || marker.fleet !== mk.fleet) throw new ReaderError("Corrupt", `${mk.obj.key}: names dt=${marker.dt}/fleet=${marker.fleet}, not its own partition`, { data: { file: mk.obj.key } });
      for (const key of [...marker.parts.map((p) => p.key), ...(marker.usage ? [marker.usage.key, marker.usage.keys.key] : [])]) {
        if (!compactedObjs.has(key)) throw new ReaderError("Corrupt", `${key}: named by ${mk.obj.key} but missing from the store`, { data: { file: key } });
      }
    } catch (e) {
      if (!(e instanceof ReaderError) || e.code !== "Corrupt") throw e;
      damaged.push({ key: e.data.file ?? mk.obj.key, reason: e.message });
      continue;
    }
    // A generation reflects its sessions' bronze only while every one of them still has exactly
    // the segments it was built from; otherwise the partition is read from bronze.
    const p = { dt: mk.dt, fleet: mk.fleet };
    if (marker.sessions.some((s) => segCount.get(dirOf({ ...p, ...s })) !== s.segments)) continue;
    // A damaged part or rollup (found here when mirroring; with `mirror: false`, at fetch) affects
    // its partition only: the partition is read from bronze.
    const prints: string[] = [`M${mk.obj.key}\0${marker.gen}\0`];
    const parts: CompactedFile[] = [];
    let damage: Damage | undefined;
    for (const mp of marker.parts) {
      const obj = compactedObjs.get(mp.key)!;
      prints.push(`C${mp.key}\0${obj.size}\0${obj.etag ?? obj.lastModified?.getTime() ?? ""}\0`);
      const l = await access.localPath(obj);
      damage ??= l.damage;
      parts.push({ key: mp.key, path: l.path, dt: mk.dt, fleet: mk.fleet, gen: marker.gen });
    }
    let usage: CompactedPartition["usage"];
    if (marker.usage !== undefined) {
      const local: string[] = [];
      for (const f of [marker.usage, marker.usage.keys]) {
        const obj = compactedObjs.get(f.key)!;
        prints.push(`U${f.key}\0${obj.size}\0${obj.etag ?? obj.lastModified?.getTime() ?? ""}\0`);
        const l = await access.localPath(obj, f.sha256);
        damage ??= l.damage;
        local.push(l.path);
      }
      usage = { json: local[0]!, keys: local[1]!, key: marker.usage.key };
    }
    if (damage !== undefined) {
      damaged.push({ key: damage.key, reason: `${damage.reason} (dt=${mk.dt}/fleet=${mk.fleet} read from bronze)` });
      continue;
    }
    for (const s of marker.sessions) covered.add(dirOf({ ...p, ...s }));
    for (const x of prints) fp.update(x);
    compacted.push(...parts);
    partitions.push({ dt: mk.dt, fleet: mk.fleet, gen: marker.gen, parts, usage });
  }
  const bronze: BronzeFile[] = [];
  const byDir = new Map<string, { seqs: number[]; paths: string[]; whole: boolean }>();
  for (const s of segs) {
    if (covered.has(dirOf(s.part))) continue;
    fp.update(`B${s.key}\0${s.size}\0${s.etag ?? s.lastModified?.getTime() ?? ""}\0`);
    const l = await access.localPath(s);
    const d = byDir.get(dirOf(s.part)) ?? { seqs: [], paths: [], whole: true };
    byDir.set(dirOf(s.part), d);
    d.seqs.push(parseKey(s.key)?.kind === "segment" ? (parseKey(s.key) as { seq: number }).seq : -1);
    // A damaged segment is left out: the rest of its session, and every other, is read.
    if (l.damage !== undefined) {
      damaged.push(l.damage);
      d.whole = false;
    } else {
      bronze.push({ key: s.key, path: l.path, ...s.part });
      d.paths.push(l.path);
    }
  }
  // A directory whose segments are 0..N, all readable, with both rollup objects of segment N: its
  // rollup counts what its rows count. A damaged rollup is named and its rows are read instead.
  const bronzeRollups: BronzeRollup[] = [];
  for (const [dir, d] of byDir) {
    const n = d.seqs.length - 1;
    if (!d.whole || d.seqs.some((q, i) => q !== i)) continue;
    const r = segRollups.get(`${dir}\0${n}`);
    if (r?.json === undefined || r.keys === undefined) continue;
    const j = await access.localPath(r.json, r.json.sha256);
    const k = await access.localPath(r.keys, r.keys.sha256);
    const damage = j.damage ?? k.damage;
    if (damage !== undefined) {
      damaged.push({ key: damage.key, reason: `${damage.reason} (its session directory read from its segments)` });
      continue;
    }
    fp.update(`R${r.json.key}\0${r.keys.key}\0`);
    bronzeRollups.push({ key: r.json.key, json: j.path, keys: k.path, segments: d.paths });
  }
  for (const s of sealed) fp.update(`S${s.dt}/${s.fleet}/${s.runtime}/${s.agent}/${s.session}\0`);
  let snapshot = await resolveSnapshot(access);
  if (snapshot?.damage !== undefined) {
    damaged.push({ key: snapshot.damage.key, reason: `${snapshot.damage.reason} (search and claims read without the snapshot)` });
    snapshot = undefined;
  }
  if (snapshot) fp.update(`P${snapshot.path}`);
  checks.save();
  const storeUrl = store.url;
  const fetch = async (paths: readonly string[]): Promise<ReadonlySet<string>> => {
    const bad = new Set<string>();
    const known = paths.filter((p) => pending.has(p));
    const todo = known.filter((p) => !existsSync(p));
    if (todo.length > 0) {
      const again = await openReadableStore(storeUrl);
      try {
        const a = accessFor(again, cacheDir);
        for (const p of todo) await a.fetch(pending.get(p)!.obj, p);
      } finally {
        again.close();
      }
    }
    for (const p of known) {
      const fresh = !verdicts.has(p);
      const v = check(p);
      if (v.status !== "damaged") continue;
      bad.add(p);
      if (fresh) damaged.push({ key: pending.get(p)!.obj.key, reason: `${pending.get(p)!.obj.key}: damaged: ${v.reason}` });
    }
    checks.save();
    return bad;
  };
  return { storeUrl, bronze, compacted, partitions, bronzeRollups, sealed, snapshot: snapshot?.path, damaged, fingerprint: fp.digest("hex"), fetch };
}

/** The file the reader keeps its hash checks of a store in (CheckedFiles). */
function checkedFile(cacheDir: string, storeUrl: string): string {
  return join(cacheDir, "checked", `${createHash("sha256").update(storeUrl).digest("hex").slice(0, 16)}.json`);
}

async function resolveSnapshot(access: { store: ReadableStore; localPath(o: ListedObject, sha256?: string): Promise<{ path: string; damage: Damage | undefined }> }): Promise<{ path: string; damage: Damage | undefined } | undefined> {
  const { store } = access;
  const key = SNAPSHOT_LATEST_KEY;
  let got;
  try {
    got = await store.get(key);
  } catch (e) {
    throw storeError(store, key, e);
  }
  if (!got) return undefined;
  const { content_hash: hash } = decoded(() => decodeSnapshotPointer(key, got.body));
  const blob = snapshotBlobKey(hash);
  let info;
  try {
    // The blob is named by its content hash: in a local directory its size is all that is asked
    // (a local store's head would hash the whole file for its etag, on every resolution).
    const local = parseStoreUrl(store.url);
    if (local.kind === "file") {
      const st = statSync(join(local.root, ...blob.split("/")), { throwIfNoEntry: false });
      info = st?.isFile() ? { key: blob, size: st.size, etag: hash } : undefined;
    } else {
      info = await store.head(blob);
    }
  } catch (e) {
    throw storeError(store, blob, e);
  }
  if (!info) throw new ReaderError("Corrupt", `${blob}: named by ${key} but missing from the store`, { data: { file: blob } });
  return access.localPath({ key: blob, size: info.size, etag: info.etag ?? hash }, hash);
}


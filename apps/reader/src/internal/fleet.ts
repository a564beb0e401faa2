// What the reader reads from a fleet store: the bronze segments of sessions no compacted generation
// covers, the parts of each partition's current compacted generation (_COMPACTED), the _SEALED
// markers, and the current snapshot. A file:// store is read in place; an s3:// store is mirrored
// into the cache, one local file per (key, etag).
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { openStore, parseStoreUrl, type ObjectStore } from "@lake/layout/store";
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

/** A sealed session directory. */
export interface SealedSession {
  readonly dt: string;
  readonly fleet: string;
  readonly runtime: string;
  readonly agent: string;
  readonly session: string;
}

/** The local files the read model is built over. */
export interface FleetFiles {
  readonly storeUrl: string;
  readonly bronze: readonly BronzeFile[];
  readonly compacted: readonly CompactedFile[];
  /** The compacted partitions, in key order. */
  readonly partitions: readonly CompactedPartition[];
  readonly sealed: readonly SealedSession[];
  /** Local path of the current snapshot SQLite, when the store has one. */
  readonly snapshot: string | undefined;
  /** SHA-256 over every followed key with its size and etag: changes when the data does. */
  readonly fingerprint: string;
  /**
   * Make sure the given local paths hold their objects' bytes. Resolved with `mirror: false`, an
   * s3:// store's objects are downloaded only here (opening the store again), so a command fetches
   * only what it reads; otherwise, and for file:// stores, this does nothing.
   */
  fetch(paths: readonly string[]): Promise<void>;
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

const SEG_RE = /^sessions\/dt=([^/]+)\/fleet=([^/]+)\/runtime=([^/]+)\/agent=([^/]+)\/session=([^/]+)\/(seg-\d{6}\.parquet|_SEALED)$/;
const MARKER_RE = /^sessions\/compacted\/dt=([^/]+)\/fleet=([^/]+)\/_COMPACTED$/;

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
  return new ReaderError("Io", `${store.url}/${key}: ${(e as Error).message}`, { data: { file: `${store.url}/${key}` }, cause: e });
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

/** The session id a marker entry names: a session id, or a session directory key. */
function markerSession(entry: string): string {
  const m = /(?:^|\/)session=([^/]+)\/?$/.exec(entry);
  return m ? m[1]! : entry;
}

/** One session a marker names: by id, or by (runtime, agent, session) when the marker says. */
interface MarkerSession {
  readonly session: string;
  readonly runtime?: string | undefined;
  readonly agent?: string | undefined;
}

/**
 * Parse a _COMPACTED marker. `sessions` entries are session ids, session directory keys, or
 * objects `{runtime, agent, session, …}` (lake-maint's form); `parts` entries are keys (relative to
 * the store root, to the partition, or to the generation) or objects `{key, …}`.
 */
function parseMarker(key: string, body: Uint8Array): { gen: string; sessions: MarkerSession[]; parts: string[]; usage: { json: string; keys: string } | undefined } {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(body).toString("utf8"));
  } catch (e) {
    throw new ReaderError("Corrupt", `${key}: _COMPACTED is not JSON: ${(e as Error).message}`, { data: { file: key }, cause: e });
  }
  const o = v as { gen?: unknown; sessions?: unknown; parts?: unknown; usage?: unknown };
  if (typeof o !== "object" || o === null || typeof o.gen !== "string" || !/^[0-9a-f]{16,64}$/.test(o.gen)) {
    throw new ReaderError("Corrupt", `${key}: _COMPACTED has no valid "gen"`, { data: { file: key } });
  }
  const bad = (name: string): never => {
    throw new ReaderError("Corrupt", `${key}: _COMPACTED "${name}" is not ${name === "usage" ? "a key or an object with one" : "a list of names or objects"}`, { data: { file: key } });
  };
  const sessions: MarkerSession[] = [];
  if (o.sessions !== undefined && !Array.isArray(o.sessions)) bad("sessions");
  for (const s of (o.sessions as unknown[] | undefined) ?? []) {
    if (typeof s === "string") sessions.push({ session: markerSession(s) });
    else if (typeof s === "object" && s !== null && typeof (s as { session?: unknown }).session === "string") {
      const x = s as { session: string; runtime?: unknown; agent?: unknown };
      sessions.push({ session: x.session, runtime: typeof x.runtime === "string" ? x.runtime : undefined, agent: typeof x.agent === "string" ? x.agent : undefined });
    } else bad("sessions");
  }
  const parts: string[] = [];
  if (o.parts !== undefined && !Array.isArray(o.parts)) bad("parts");
  for (const p of (o.parts as unknown[] | undefined) ?? []) {
    if (typeof p === "string") parts.push(p);
    else if (typeof p === "object" && p !== null && typeof (p as { key?: unknown }).key === "string") parts.push((p as { key: string }).key);
    else bad("parts");
  }
  // `usage`: the rollup document's key, or lake-maint's {key, keys: {key}}; its keys object is
  // named, or else the document's sibling usage.keys.
  let usage: { json: string; keys: string } | undefined;
  const sibling = (k: string) => k.replace(/usage\.json$/, "usage.keys");
  if (typeof o.usage === "string") usage = { json: o.usage, keys: sibling(o.usage) };
  else if (typeof o.usage === "object" && o.usage !== null && typeof (o.usage as { key?: unknown }).key === "string") {
    const u = o.usage as { key: string; keys?: { key?: unknown } };
    usage = { json: u.key, keys: typeof u.keys?.key === "string" ? u.keys.key : sibling(u.key) };
  } else if (o.usage !== undefined && o.usage !== null) bad("usage");
  return { gen: o.gen, sessions, parts, usage };
}

/**
 * List what the reader follows in a store: per (dt, fleet) partition with a _COMPACTED marker, the
 * current generation's parts, and bronze segments only of sessions the marker does not name; the
 * bronze segments of every other partition. Mirrors s3:// objects into `cacheDir`.
 */
export async function resolveFleet(store: ReadableStore, cacheDir: string, options: { mirror?: boolean } = {}): Promise<FleetFiles> {
  const mirror = options.mirror ?? true;
  const base = accessFor(store, cacheDir);
  const pending = new Map<string, ListedObject>();
  const access = {
    store,
    async localPath(o: ListedObject): Promise<string> {
      const path = await base.pathOf(o);
      if (mirror) await base.fetch(o, path);
      else pending.set(path, o);
      return path;
    },
  };
  const fp = createHash("sha256").update(store.url);
  const segs: (ListedObject & { m: RegExpExecArray })[] = [];
  const sealed: SealedSession[] = [];
  const markers: { obj: ListedObject; dt: string; fleet: string }[] = [];
  const compactedObjs = new Map<string, ListedObject>();
  try {
    for await (const o of store.listAll("sessions/")) {
      const m = SEG_RE.exec(o.key);
      if (m) {
        if (m[6] === "_SEALED") sealed.push({ dt: m[1]!, fleet: m[2]!, runtime: m[3]!, agent: m[4]!, session: m[5]! });
        else segs.push({ ...o, m });
        continue;
      }
      const c = MARKER_RE.exec(o.key);
      if (c) markers.push({ obj: o, dt: c[1]!, fleet: c[2]! });
      else if (o.key.startsWith("sessions/compacted/")) compactedObjs.set(o.key, o);
    }
  } catch (e) {
    throw storeError(store, "sessions/", e);
  }
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
    const marker = parseMarker(mk.obj.key, got.body);
    const prefix = `sessions/compacted/dt=${mk.dt}/fleet=${mk.fleet}/`;
    for (const s of marker.sessions) covered.add(`${mk.dt}\0${mk.fleet}\0${s.session}\0${s.runtime ?? "*"}\0${s.agent ?? "*"}`);
    const rel = (p: string) => (p.startsWith("sessions/") ? p : p.startsWith("gen=") ? prefix + p : `${prefix}gen=${marker.gen}/${p}`);
    let partKeys = marker.parts.map(rel);
    if (partKeys.length === 0) partKeys = [...compactedObjs.keys()].filter((k) => k.startsWith(`${prefix}gen=${marker.gen}/`) && k.endsWith(".parquet"));
    fp.update(`M${mk.obj.key}\0${marker.gen}\0`);
    const parts: CompactedFile[] = [];
    for (const key of partKeys.sort()) {
      const obj = compactedObjs.get(key);
      if (!obj) throw new ReaderError("Corrupt", `${key}: named by ${mk.obj.key} but missing from the store`, { data: { file: key } });
      fp.update(`C${key}\0${obj.size}\0${obj.etag ?? obj.lastModified?.getTime() ?? ""}\0`);
      parts.push({ key, path: await access.localPath(obj), dt: mk.dt, fleet: mk.fleet, gen: marker.gen });
    }
    compacted.push(...parts);
    let usage: CompactedPartition["usage"];
    if (marker.usage !== undefined) {
      const local: string[] = [];
      for (const k of [rel(marker.usage.json), rel(marker.usage.keys)]) {
        const obj = compactedObjs.get(k);
        if (!obj) throw new ReaderError("Corrupt", `${k}: named by ${mk.obj.key} but missing from the store`, { data: { file: k } });
        fp.update(`U${k}\0${obj.size}\0${obj.etag ?? obj.lastModified?.getTime() ?? ""}\0`);
        local.push(await access.localPath(obj));
      }
      usage = { json: local[0]!, keys: local[1]!, key: rel(marker.usage.json) };
    }
    partitions.push({ dt: mk.dt, fleet: mk.fleet, gen: marker.gen, parts, usage });
  }
  const bronze: BronzeFile[] = [];
  for (const s of segs) {
    const [, dt, fleet, runtime, agent, session] = s.m as unknown as [string, string, string, string, string, string];
    const c = `${dt}\0${fleet}\0${session}\0`;
    if (covered.has(`${c}*\0*`) || covered.has(`${c}${runtime}\0${agent}`)) continue;
    fp.update(`B${s.key}\0${s.size}\0${s.etag ?? s.lastModified?.getTime() ?? ""}\0`);
    bronze.push({ key: s.key, path: await access.localPath(s), dt, fleet, runtime, agent, session });
  }
  for (const s of sealed) fp.update(`S${s.dt}/${s.fleet}/${s.runtime}/${s.agent}/${s.session}\0`);
  const snapshot = await resolveSnapshot(access);
  if (snapshot) fp.update(`P${snapshot}`);
  const storeUrl = store.url;
  const fetch = async (paths: readonly string[]): Promise<void> => {
    const todo = paths.filter((p) => pending.has(p) && !existsSync(p));
    if (todo.length === 0) return;
    const again = await openReadableStore(storeUrl);
    try {
      const a = accessFor(again, cacheDir);
      for (const p of todo) await a.fetch(pending.get(p)!, p);
    } finally {
      again.close();
    }
  };
  return { storeUrl, bronze, compacted, partitions, sealed, snapshot, fingerprint: fp.digest("hex"), fetch };
}

async function resolveSnapshot(access: { store: ReadableStore; localPath(o: ListedObject): Promise<string> }): Promise<string | undefined> {
  const { store } = access;
  const key = "snapshot/latest.json";
  let got;
  try {
    got = await store.get(key);
  } catch (e) {
    throw storeError(store, key, e);
  }
  if (!got) return undefined;
  let hash: unknown;
  try {
    hash = (JSON.parse(Buffer.from(got.body).toString("utf8")) as { content_hash?: unknown }).content_hash;
  } catch (e) {
    throw new ReaderError("Corrupt", `${key}: not JSON: ${(e as Error).message}`, { data: { file: key }, cause: e });
  }
  if (typeof hash !== "string" || !/^[0-9a-f]{64}$/.test(hash)) throw new ReaderError("Corrupt", `${key}: no valid content_hash`, { data: { file: key } });
  const blob = `snapshot/${hash}.sqlite`;
  let info;
  try {
    info = await store.head(blob);
  } catch (e) {
    throw storeError(store, blob, e);
  }
  if (!info) throw new ReaderError("Corrupt", `${blob}: named by ${key} but missing from the store`, { data: { file: blob } });
  return access.localPath({ key: blob, size: info.size, etag: info.etag ?? hash });
}

/** Write a file atomically (temp + rename). */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

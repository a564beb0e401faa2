// What the reader reads from a fleet store: the bronze segments of sessions no compacted generation
// covers, the parts of each partition's current compacted generation (_COMPACTED), the _SEALED
// markers, and the current snapshot. A file:// store is read in place; an s3:// store is mirrored
// into the cache, one local file per (key, etag).
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
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
  readonly sealed: readonly SealedSession[];
  /** Local path of the current snapshot SQLite, when the store has one. */
  readonly snapshot: string | undefined;
  /** SHA-256 over every followed key with its size and etag: changes when the data does. */
  readonly fingerprint: string;
}

/** One object of a listing. */
export interface ListedObject {
  readonly key: string;
  readonly size: number;
  readonly etag?: string | undefined;
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
  /** A local path holding the object's bytes. */
  localPath(obj: ListedObject): Promise<string>;
}

const SEG_RE = /^sessions\/dt=([^/]+)\/fleet=([^/]+)\/runtime=([^/]+)\/agent=([^/]+)\/session=([^/]+)\/(seg-\d{6}\.parquet|_SEALED)$/;
const MARKER_RE = /^sessions\/compacted\/dt=([^/]+)\/fleet=([^/]+)\/_COMPACTED$/;

/** A file:// store read in place (listing walks the directory). */
class LocalDirStore implements ReadableStore {
  constructor(readonly url: string, readonly root: string) {}
  async *listAll(prefix: string): AsyncIterable<ListedObject> {
    const base = join(this.root, prefix);
    const out: ListedObject[] = [];
    const walk = (dir: string, rel: string) => {
      let ents;
      try {
        ents = readdirSync(dir, { withFileTypes: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
        throw new ReaderError("Io", `${dir}: cannot list: ${(e as Error).message}`, { data: { file: dir }, cause: e });
      }
      for (const ent of ents) {
        const r = rel + ent.name;
        if (ent.isDirectory()) walk(join(dir, ent.name), r + "/");
        else if (ent.isFile() && !ent.name.startsWith(".")) {
          const st = statSync(join(dir, ent.name));
          out.push({ key: r, size: st.size, etag: `${st.size}-${st.mtimeMs}` });
        }
      }
    };
    walk(base, prefix);
    out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    yield* out;
  }
  async get(key: string) {
    try {
      const body = readFileSync(join(this.root, key));
      return { body: new Uint8Array(body), etag: "" };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new ReaderError("Io", `${join(this.root, key)}: cannot read: ${(e as Error).message}`, { data: { file: join(this.root, key) }, cause: e });
    }
  }
  async head(key: string) {
    try {
      const st = statSync(join(this.root, key));
      return { key, size: st.size };
    } catch {
      return undefined;
    }
  }
  async download(): Promise<{ etag: string; size: number }> {
    throw new Error("not used for a local store");
  }
  close(): void {}
}

/** Open a store URL for reading. s3:// stores go through @lake/layout's ObjectStore. */
export async function openReadableStore(url: string): Promise<ReadableStore> {
  if (url.startsWith("file:")) {
    let root: string;
    try {
      root = fileURLToPath(url);
    } catch (e) {
      throw new ReaderError("Usage", `store ${url}: not an absolute file URL`, { data: { file: url }, cause: e });
    }
    if (!existsSync(root)) throw new ReaderError("NotFound", `${root}: fleet store directory does not exist`, { data: { file: root } });
    return new LocalDirStore(url, root);
  }
  if (url.startsWith("s3://")) {
    const layout = (await import("@lake/layout")) as unknown as { openStore?: (url: string) => ReadableStore };
    if (typeof layout.openStore !== "function") throw new ReaderError("Io", `store ${url}: this build of @lake/layout has no S3 store`, { data: { file: url } });
    try {
      return layout.openStore(url);
    } catch (e) {
      throw new ReaderError("Usage", `store ${url}: ${(e as Error).message}`, { data: { file: url }, cause: e });
    }
  }
  throw new ReaderError("Usage", `store ${url}: expected file:///absolute/dir or s3://bucket/prefix`, { data: { file: url } });
}

function storeError(store: ReadableStore, key: string, e: unknown): ReaderError {
  if (e instanceof ReaderError) return e;
  return new ReaderError("Io", `${store.url}/${key}: ${(e as Error).message}`, { data: { file: `${store.url}/${key}` }, cause: e });
}

function accessFor(store: ReadableStore, cacheDir: string): Access {
  if (store instanceof LocalDirStore) {
    const root = store.root;
    return { store, localPath: async (o) => join(root, o.key) };
  }
  const base = join(cacheDir, "mirror", createHash("sha256").update(store.url).digest("hex").slice(0, 16));
  return {
    store,
    async localPath(o) {
      let etag = o.etag;
      if (etag === undefined) {
        const h = await store.head(o.key).catch((e: unknown) => {
          throw storeError(store, o.key, e);
        });
        if (!h) throw new ReaderError("NotFound", `${store.url}/${o.key}: object vanished while reading`, { data: { file: o.key } });
        etag = h.etag ?? String(h.size);
      }
      const safe = etag.replace(/[^A-Za-z0-9_-]/g, "_");
      const slash = o.key.lastIndexOf("/");
      const file = join(base, o.key.slice(0, slash + 1), `${safe}.${o.key.slice(slash + 1)}`);
      if (existsSync(file)) return file;
      mkdirSync(dirname(file), { recursive: true });
      try {
        await store.download(o.key, file);
      } catch (e) {
        throw storeError(store, o.key, e);
      }
      return file;
    },
  };
}

function parseMarker(key: string, body: Uint8Array): { gen: string; sessions: string[]; parts: string[] } {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(body).toString("utf8"));
  } catch (e) {
    throw new ReaderError("Corrupt", `${key}: _COMPACTED is not JSON: ${(e as Error).message}`, { data: { file: key }, cause: e });
  }
  const o = v as { gen?: unknown; sessions?: unknown; parts?: unknown };
  if (typeof o !== "object" || o === null || typeof o.gen !== "string" || !/^[0-9a-f]{16,64}$/.test(o.gen)) {
    throw new ReaderError("Corrupt", `${key}: _COMPACTED has no valid "gen"`, { data: { file: key } });
  }
  const strs = (x: unknown, name: string): string[] => {
    if (x === undefined) return [];
    if (!Array.isArray(x) || x.some((s) => typeof s !== "string")) throw new ReaderError("Corrupt", `${key}: _COMPACTED "${name}" is not a list of strings`, { data: { file: key } });
    return x as string[];
  };
  return { gen: o.gen, sessions: strs(o.sessions, "sessions"), parts: strs(o.parts, "parts") };
}

/** The session id a marker entry names: a session id, or a session directory key. */
function markerSession(entry: string): string {
  const m = /(?:^|\/)session=([^/]+)\/?$/.exec(entry);
  return m ? m[1]! : entry;
}

/**
 * List what the reader follows in a store: per (dt, fleet) partition with a _COMPACTED marker, the
 * current generation's parts, and bronze segments only of sessions the marker does not name; the
 * bronze segments of every other partition. Mirrors s3:// objects into `cacheDir`.
 */
export async function resolveFleet(store: ReadableStore, cacheDir: string): Promise<FleetFiles> {
  const access = accessFor(store, cacheDir);
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
  for (const mk of markers) {
    let got;
    try {
      got = await store.get(mk.obj.key);
    } catch (e) {
      throw storeError(store, mk.obj.key, e);
    }
    if (!got) continue;
    const marker = parseMarker(mk.obj.key, got.body);
    const prefix = `sessions/compacted/dt=${mk.dt}/fleet=${mk.fleet}/`;
    for (const s of marker.sessions) covered.add(`${mk.dt}\0${mk.fleet}\0${markerSession(s)}`);
    let partKeys = marker.parts.map((p) => (p.startsWith("sessions/") ? p : p.startsWith("gen=") ? prefix + p : `${prefix}gen=${marker.gen}/${p}`));
    if (partKeys.length === 0) partKeys = [...compactedObjs.keys()].filter((k) => k.startsWith(`${prefix}gen=${marker.gen}/`) && k.endsWith(".parquet"));
    fp.update(`M${mk.obj.key}\0${marker.gen}\0`);
    for (const key of partKeys.sort()) {
      const obj = compactedObjs.get(key);
      if (!obj) throw new ReaderError("Corrupt", `${key}: named by ${mk.obj.key} but missing from the store`, { data: { file: key } });
      fp.update(`C${key}\0${obj.size}\0${obj.etag ?? ""}\0`);
      compacted.push({ key, path: await access.localPath(obj), dt: mk.dt, fleet: mk.fleet, gen: marker.gen });
    }
  }
  const bronze: BronzeFile[] = [];
  for (const s of segs) {
    const [, dt, fleet, runtime, agent, session] = s.m as unknown as [string, string, string, string, string, string];
    if (covered.has(`${dt}\0${fleet}\0${session}`)) continue;
    fp.update(`B${s.key}\0${s.size}\0${s.etag ?? ""}\0`);
    bronze.push({ key: s.key, path: await access.localPath(s), dt, fleet, runtime, agent, session });
  }
  for (const s of sealed) fp.update(`S${s.dt}/${s.fleet}/${s.runtime}/${s.agent}/${s.session}\0`);
  const snapshot = await resolveSnapshot(access);
  if (snapshot) fp.update(`P${snapshot}`);
  return { storeUrl: store.url, bronze, compacted, sealed, snapshot, fingerprint: fp.digest("hex") };
}

async function resolveSnapshot(access: Access): Promise<string | undefined> {
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

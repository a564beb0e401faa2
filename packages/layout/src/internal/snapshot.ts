// The snapshot pointer: blob first (content-addressed, never overwritten), then latest.json swapped
// with compare-and-swap; and a host cache that mirrors the current blob byte for byte.
import { createReadStream } from "node:fs";
import * as fs from "node:fs/promises";
import { join } from "node:path";
import { randomHex, replaceFrom } from "@lake/durable";
import { casUpdate, type CasOptions } from "./cas.js";
import { LayoutError, isLayoutError } from "./errors.js";
import { FLEET_KEY, SNAPSHOT_LATEST_KEY, snapshotBlobKey, validatePartitionValue } from "./keys.js";
import { FLEET_SCHEMA_VERSION, decodeFleet, encodeFleet, type FleetManifest } from "./formats/fleet.js";
import { decodeSnapshotPointer, type SnapshotPointer } from "./formats/snapshot.js";
import type { ObjectStore } from "./types.js";
import { nodeCrypto } from "./node-crypto.js";
import { sha256Hex } from "./util.js";

async function hashFile(path: string): Promise<{ hash: string; size: number }> {
  const h = nodeCrypto().createHash("sha256");
  let size = 0;
  for await (const c of createReadStream(path, { highWaterMark: 1 << 20 })) {
    h.update(c as Buffer);
    size += (c as Buffer).byteLength;
  }
  return { hash: h.digest("hex"), size };
}

/**
 * Publish a snapshot: upload the blob to snapshot/<sha256>.sqlite if it is not there yet (create-only:
 * an existing blob of that name is never overwritten), then compare-and-swap snapshot/latest.json to
 * name it. The pointer is only written after the blob is confirmed present, so it never names a
 * missing blob. `accept(current)` may refuse the swap (e.g. a newer snapshot is already current).
 */
export async function publishSnapshot(
  store: ObjectStore,
  source: { readonly path: string } | Uint8Array,
  options: { readonly accept?: (current: SnapshotPointer | undefined) => boolean; readonly cas?: CasOptions } = {},
): Promise<{ content_hash: string; key: string; swapped: boolean; previous: string | undefined }> {
  const { hash } = source instanceof Uint8Array ? { hash: sha256Hex(source) } : await hashFile(source.path);
  const key = snapshotBlobKey(hash);
  if ((await store.head(key)) === undefined) {
    const r = await store.upload(key, source, { ifAbsent: true });
    if (r.status === "unknown" && (await store.head(key)) === undefined) {
      throw new LayoutError("Unknown", `upload of ${key} to ${store.url} did not settle`, { data: { key, store: store.url }, cause: r.cause });
    }
  }
  let previous: string | undefined;
  const out = await casUpdate<{ content_hash: string }>(
    store,
    SNAPSHOT_LATEST_KEY,
    async (cur) => {
      previous = cur?.content_hash;
      if (cur?.content_hash === hash) return undefined;
      if (options.accept && !options.accept(cur === undefined ? undefined : { content_hash: cur.content_hash })) return undefined;
      if ((await store.head(key)) === undefined) throw new LayoutError("NotFound", `snapshot blob ${key} vanished from ${store.url} before the pointer swap`, { data: { key, store: store.url } });
      return { content_hash: hash };
    },
    options.cas,
  );
  return { content_hash: hash, key, swapped: out.changed, previous };
}

/** The current snapshot pointer, or undefined when none was published. */
export async function readSnapshotPointer(store: ObjectStore): Promise<SnapshotPointer | undefined> {
  const o = await store.get(SNAPSHOT_LATEST_KEY);
  return o === undefined ? undefined : inStore(store, () => decodeSnapshotPointer(SNAPSHOT_LATEST_KEY, o.body));
}

/** Run a decoder, adding the store URL to a Corrupt error. */
function inStore<T>(store: ObjectStore, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (isLayoutError(e, "Corrupt")) throw new LayoutError("Corrupt", `${e.message} (in ${store.url})`, { data: { ...e.data, store: store.url }, cause: e });
    throw e;
  }
}

/**
 * Mirror the current snapshot into `cacheDir` as `<sha256>.sqlite`, byte for byte: a cached file is
 * used only if it hashes to its name; a download is hashed before it is renamed into place
 * (HashMismatch otherwise). Returns undefined when no snapshot was published.
 */
export async function syncSnapshotCache(
  store: ObjectStore,
  cacheDir: string,
): Promise<{ content_hash: string; path: string; downloaded: boolean } | undefined> {
  const ptr = await readSnapshotPointer(store);
  if (ptr === undefined) return undefined;
  const path = join(cacheDir, `${ptr.content_hash}.sqlite`);
  const existing = await hashFile(path).catch(() => undefined);
  if (existing?.hash === ptr.content_hash) return { content_hash: ptr.content_hash, path, downloaded: false };
  await fs.mkdir(cacheDir, { recursive: true });
  const tmp = join(cacheDir, `.${ptr.content_hash}.${randomHex(6)}.part`);
  try {
    await store.download(snapshotBlobKey(ptr.content_hash), tmp);
    const got = await hashFile(tmp);
    if (got.hash !== ptr.content_hash) {
      throw new LayoutError("HashMismatch", `snapshot blob ${snapshotBlobKey(ptr.content_hash)} in ${store.url} hashes to ${got.hash}`, { data: { key: snapshotBlobKey(ptr.content_hash), store: store.url } });
    }
    replaceFrom(tmp, path); // download fsynced it
  } finally {
    await fs.rm(tmp, { force: true });
  }
  return { content_hash: ptr.content_hash, path, downloaded: true };
}

/**
 * Write fleet.json once (create-only). When it already exists it is left alone and returned
 * (`created: false`).
 */
export async function initFleet(store: ObjectStore, fleetId: string, now: () => number = Date.now): Promise<{ created: boolean; manifest: FleetManifest }> {
  validatePartitionValue("fleet_id", fleetId);
  const manifest: FleetManifest = { fleet_id: fleetId, created_at: new Date(now()).toISOString(), schema_version: FLEET_SCHEMA_VERSION };
  const r = await store.putIfAbsent(FLEET_KEY, encodeFleet(manifest));
  if (r.status === "written") return { created: true, manifest };
  const existing = r.current ?? (await store.get(FLEET_KEY));
  if (existing === undefined) throw new LayoutError("Unknown", `creating ${FLEET_KEY} in ${store.url} did not settle`, { data: { key: FLEET_KEY, store: store.url } });
  return { created: false, manifest: inStore(store, () => decodeFleet(FLEET_KEY, existing.body)) };
}

/** Read fleet.json, or undefined when the store has not been initialised. */
export async function readFleet(store: ObjectStore): Promise<FleetManifest | undefined> {
  const o = await store.get(FLEET_KEY);
  return o === undefined ? undefined : inStore(store, () => decodeFleet(FLEET_KEY, o.body));
}

// The local-directory backend: one file per key under the root, with S3's guarantees.
//  - put:          temp file (fsync) → rename over the key (under the key's lock) → fsync the directory.
//  - putIfAbsent:  temp file (fsync) → a hard link of temp to key (never replaces) → fsync the directory.
//  - putIfMatch:   temp file (fsync) → take the key's lock → compare the current content hash with the
//                  expected etag → rename → fsync the directory → drop the lock.
//  - etag:         SHA-256 hex of the content, so it needs no side file and survives crashes.
// Locks are @lake/durable lock files under <root>/.lake-store/locks/; a lock whose holder died (same host, pid gone or
// reused) or that is older than staleLockMs is broken, so a crash never wedges a key. Renames, links and fsyncs are
// @lake/durable's (replaceFrom, installFrom, fsyncDir, fsyncDirAsync).
import { constants as fsc, createReadStream, createWriteStream, readdirSync, statSync, type Dirent } from "node:fs";
import * as fs from "node:fs/promises";
import { dirname, join, sep } from "node:path";
import { pipeline } from "node:stream/promises";
import { acquireLock, errno, fsyncDir, fsyncDirAsync, installFrom, randomHex, replaceFrom, type LockHandle } from "@lake/durable";
import { LayoutError } from "./errors.js";
import type { ConditionalResult, ListOptions, ListPage, ObjectInfo, ObjectStore, StoredObject, UploadOptions, UploadSource } from "./types.js";
import { nodeCrypto } from "./node-crypto.js";
import { LOCAL_INTERNAL_DIR, allPages, compareUtf8, mkdirs, pageSize, sha256Hex, sourceChunks, validateObjectKey, validatePrefix } from "./util.js";

/** Options of the local backend. */
export interface LocalStoreOptions {
  /** How long to wait for a key's lock before failing with `Locked` (ms, default 30 000). */
  readonly lockTimeoutMs?: number;
  /** Age after which a lock is considered abandoned even if its holder's pid cannot be checked (ms, default 30 000). */
  readonly staleLockMs?: number;
}

export class LocalStore implements ObjectStore {
  readonly url: string;
  readonly root: string;
  private readonly lockTimeoutMs: number;
  private readonly staleLockMs: number;

  constructor(root: string, url: string, options: LocalStoreOptions = {}) {
    this.root = root;
    this.url = url;
    this.lockTimeoutMs = options.lockTimeoutMs ?? 30_000;
    this.staleLockMs = options.staleLockMs ?? 30_000;
  }

  private path(key: string): string {
    validateObjectKey(key, this.url);
    return join(this.root, ...key.split("/"));
  }

  private io(op: string, key: string, e: unknown): LayoutError {
    return new LayoutError("Io", `${op} ${key} in ${this.url}: ${e instanceof Error ? e.message : String(e)}`, { data: { key, store: this.url }, cause: e });
  }

  async get(key: string): Promise<StoredObject | undefined> {
    const p = this.path(key);
    try {
      const body = await fs.readFile(p);
      return { body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength), etag: sha256Hex(body) };
    } catch (e) {
      if (["ENOENT", "ENOTDIR", "EISDIR"].includes(errno(e) ?? "")) return undefined;
      throw this.io("read", key, e);
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const p = this.path(key);
    try {
      const h = await fs.open(p, "r");
      try {
        const st = await h.stat();
        if (!st.isFile()) return undefined;
        const hash = nodeCrypto().createHash("sha256");
        for await (const chunk of h.createReadStream({ autoClose: false, highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
        return { key, etag: hash.digest("hex"), size: st.size, lastModified: st.mtime };
      } finally {
        await h.close();
      }
    } catch (e) {
      if (["ENOENT", "ENOTDIR", "EISDIR"].includes(errno(e) ?? "")) return undefined;
      throw this.io("head", key, e);
    }
  }

  // ---- temp files, directories, locks ----

  /** The temp directory was made by this store (each write then opens its temp file at once). */
  private tmpMade = false;

  /** A fresh temp file, open for writing: its directory is made once, and again if it went away meanwhile. */
  private async openTemp(): Promise<{ tmp: string; h: fs.FileHandle }> {
    const dir = join(this.root, LOCAL_INTERNAL_DIR, "tmp");
    const open = async () => {
      const tmp = join(dir, `${process.pid}-${randomHex(8)}`);
      return { tmp, h: await fs.open(tmp, fsc.O_CREAT | fsc.O_EXCL | fsc.O_WRONLY, 0o644) };
    };
    if (!this.tmpMade) {
      await mkdirs(dir);
      this.tmpMade = true;
    }
    try {
      return await open();
    } catch (e) {
      // Gone since it was made (a person cleaned the store's directory): made again, once.
      if (errno(e) !== "ENOENT") throw e;
      await mkdirs(dir);
      return open();
    }
  }

  /** Write chunks to a fresh temp file and fsync it; returns its path, hash and size. */
  private async writeTemp(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<{ tmp: string; etag: string; size: number }> {
    const { tmp, h } = await this.openTemp();
    const hash = nodeCrypto().createHash("sha256");
    let size = 0;
    try {
      for await (const c of chunks) {
        hash.update(c);
        size += c.byteLength;
        let off = 0;
        while (off < c.byteLength) off += (await h.write(c, off, c.byteLength - off)).bytesWritten;
      }
      await h.sync();
    } catch (e) {
      await h.close();
      await removeTemp(tmp);
      throw e;
    }
    await h.close();
    return { tmp, etag: hash.digest("hex"), size };
  }

  /** mkdir -p the key's parent; fsync the parents of directories this created. */
  private async ensureParent(p: string): Promise<void> {
    const dir = dirname(p);
    const first = await mkdirs(dir);
    if (first === undefined) return;
    // fsync every new directory's parent, deepest first, so the new entries survive a crash (on
    // the thread pool, as a put's own directory fsync: a first push makes a directory per session).
    let d = dir;
    while (d.length >= first.length) {
      await fsyncDirAsync(dirname(d));
      if (d === first) break;
      d = dirname(d);
    }
  }

  private lockPath(key: string): string {
    return join(this.root, LOCAL_INTERNAL_DIR, "locks", `${sha256Hex(key).slice(0, 40)}.lock`);
  }

  private async lock(key: string): Promise<LockHandle> {
    const path = this.lockPath(key);
    for (let i = 0; ; i++) {
      let r;
      try {
        r = await acquireLock(path, { waitMs: this.lockTimeoutMs, staleAfterMs: this.staleLockMs, maxPollMs: 20 });
      } catch (e) {
        if (errno(e) === "ENOENT" && i < 3) {
          await mkdirs(dirname(path));
          continue;
        }
        throw this.io("lock", key, e);
      }
      if (r.held) return r;
      throw new LayoutError("Locked", `lock for ${key} in ${this.url} still held after ${this.lockTimeoutMs} ms (${path})`, { data: { key, store: this.url } });
    }
  }

  private unlock(l: LockHandle): void {
    try {
      l.release();
    } catch {
      /* gone or unreadable: nothing of ours to remove */
    }
  }

  private async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const l = await this.lock(key);
    try {
      return await fn();
    } finally {
      this.unlock(l);
    }
  }

  /** Rename tmp over p, creating parents as needed, then fsync the directory (@lake/durable's replaceFrom). */
  private async publish(tmp: string, p: string): Promise<void> {
    for (let i = 0; ; i++) {
      try {
        replaceFrom(tmp, p, { keepTempOnMissingDir: true, callerSyncsDir: true });
      } catch (e) {
        if (errno(e) === "ENOENT" && i < 3) {
          await this.ensureParent(p);
          continue;
        }
        if (errno(e) === "EISDIR" || errno(e) === "ENOTDIR") throw this.collision(p, e);
        throw e;
      }
      // On the thread pool: the directory fsyncs of puts in flight at once overlap.
      await fsyncDirAsync(dirname(p));
      return;
    }
  }

  private collision(p: string, e: unknown): LayoutError {
    const key = p.slice(this.root.length + 1).split(sep).join("/");
    return new LayoutError("InvalidKey", `key ${key} in ${this.url} collides with a prefix of another key (a local store cannot hold both "a" and "a/b")`, { data: { key, store: this.url }, cause: e });
  }

  // ---- writes ----

  async put(key: string, body: Uint8Array): Promise<{ etag: string }> {
    const p = this.path(key);
    const { tmp, etag } = await this.writeTemp([body]);
    try {
      await this.withLock(key, () => this.publish(tmp, p));
      return { etag };
    } catch (e) {
      throw e instanceof LayoutError ? e : this.io("put", key, e);
    } finally {
      await removeTemp(tmp);
    }
  }

  async putIfAbsent(key: string, body: Uint8Array): Promise<ConditionalResult> {
    const p = this.path(key);
    const { tmp, etag } = await this.writeTemp([body]);
    try {
      return await this.linkIfAbsent(key, tmp, p, etag);
    } finally {
      await removeTemp(tmp);
    }
  }

  private async linkIfAbsent(key: string, tmp: string, p: string, etag: string): Promise<ConditionalResult> {
    for (let i = 0; ; i++) {
      let r;
      try {
        // link (or, without hard links, an O_EXCL reservation and a rename over it), then fsync the directory
        r = installFrom(tmp, p, { keepTempOnMissingDir: true, callerSyncsDir: true });
      } catch (e) {
        const code = errno(e);
        if (code === "ENOENT" && i < 3) {
          await this.ensureParent(p);
          continue;
        }
        if (code === "ENOTDIR") throw this.collision(p, e);
        throw this.io("create", key, e);
      }
      if (r.installed) {
        try {
          await fsyncDirAsync(dirname(p));
        } catch (e) {
          throw this.io("create", key, e);
        }
        return { status: "written", etag };
      }
      const current = await this.get(key);
      if (current === undefined && (await fs.stat(p).catch(() => undefined))?.isDirectory()) throw this.collision(p, new Error(`${p} is a directory`));
      return { status: "conflict", current };
    }
  }

  async putIfMatch(key: string, body: Uint8Array, etag: string): Promise<ConditionalResult> {
    const p = this.path(key);
    const { tmp, etag: newEtag } = await this.writeTemp([body]);
    try {
      return await this.withLock(key, async () => {
        const current = await this.get(key);
        if (current === undefined || current.etag !== etag) return { status: "conflict", current } as const;
        await this.publish(tmp, p);
        return { status: "written", etag: newEtag } as const;
      });
    } catch (e) {
      throw e instanceof LayoutError ? e : this.io("compare-and-swap", key, e);
    } finally {
      await removeTemp(tmp);
    }
  }

  async delete(key: string): Promise<void> {
    const p = this.path(key);
    await this.withLock(key, async () => {
      try {
        await fs.unlink(p);
        fsyncDir(dirname(p));
      } catch (e) {
        if (!["ENOENT", "ENOTDIR", "EISDIR"].includes(errno(e) ?? "")) throw this.io("delete", key, e);
      }
    });
  }

  async upload(key: string, source: UploadSource, options: UploadOptions = {}): Promise<ConditionalResult> {
    const p = this.path(key);
    const { tmp, etag } = await this.writeTemp(sourceChunks(source));
    try {
      if (options.ifAbsent) return await this.linkIfAbsent(key, tmp, p, etag);
      await this.withLock(key, () => this.publish(tmp, p));
      return { status: "written", etag };
    } finally {
      await removeTemp(tmp);
    }
  }

  async download(key: string, file: string): Promise<{ etag: string; size: number }> {
    const p = this.path(key);
    const tmp = `${file}.tmp-${randomHex(6)}`;
    const hash = nodeCrypto().createHash("sha256");
    let size = 0;
    try {
      await mkdirs(dirname(file));
      const src = createReadStream(p);
      src.on("data", (c) => {
        hash.update(c as Buffer);
        size += (c as Buffer).byteLength;
      });
      await pipeline(src, createWriteStream(tmp, { flags: "wx" }));
      replaceFrom(tmp, file, { syncTemp: true });
      return { etag: hash.digest("hex"), size };
    } catch (e) {
      await removeTemp(tmp);
      if (["ENOENT", "EISDIR", "ENOTDIR"].includes(errno(e) ?? "") && !(await this.head(key))) {
        throw new LayoutError("NotFound", `no object ${key} in ${this.url}`, { data: { key, store: this.url }, cause: e });
      }
      throw this.io("download", key, e);
    }
  }

  // ---- listing ----

  /**
   * Every key under `prefix`, sorted by UTF-8 bytes. Directory reads are synchronous: a listing is
   * hundreds of tiny metadata calls, and each async call costs a thread-pool round trip (a fleet of
   * 600 objects listed in ~100 ms async, ~10 ms sync); none of them waits on anything but the disk.
   */
  private async scan(prefix: string): Promise<string[]> {
    validatePrefix(prefix, this.url);
    const cut = prefix.lastIndexOf("/");
    const baseKey = cut < 0 ? "" : prefix.slice(0, cut);
    const out: string[] = [];
    const walk = (dirKey: string): void => {
      const dir = dirKey === "" ? this.root : join(this.root, ...dirKey.split("/"));
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch (e) {
        if (["ENOENT", "ENOTDIR"].includes(errno(e) ?? "")) return;
        throw this.io("list", dirKey, e);
      }
      for (const ent of entries) {
        const key = dirKey === "" ? ent.name : `${dirKey}/${ent.name}`;
        if (dirKey === "" && ent.name === LOCAL_INTERNAL_DIR) continue;
        if (ent.isDirectory()) {
          // Descend only where keys under this directory can start with the prefix.
          const k = key + "/";
          if (k.startsWith(prefix) || prefix.startsWith(k)) walk(key);
        } else if (ent.isFile() && key.startsWith(prefix)) {
          out.push(key);
        }
      }
    };
    walk(baseKey);
    out.sort(compareUtf8);
    return out;
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const max = pageSize(options.maxKeys);
    const all = await this.scan(prefix);
    const { delimiter, cursor } = options;
    const keys: string[] = [];
    const prefixes: string[] = [];
    let last: string | undefined;
    let more = false;
    for (const key of all) {
      if (cursor !== undefined) {
        if (compareUtf8(key, cursor) <= 0) continue;
        if (delimiter && cursor.endsWith(delimiter) && key.startsWith(cursor)) continue;
      }
      let common: string | undefined;
      if (delimiter) {
        const i = key.indexOf(delimiter, prefix.length);
        if (i >= 0) common = key.slice(0, i + delimiter.length);
      }
      if (common !== undefined && common === last) continue;
      if (keys.length + prefixes.length === max) {
        more = true;
        break;
      }
      if (common !== undefined) prefixes.push(common);
      else keys.push(key);
      last = common ?? key;
    }
    // Sizes only for the keys of this page; a key deleted meanwhile is left out.
    const stats = keys.map((k) => statSync(join(this.root, ...k.split("/")), { throwIfNoEntry: false }));
    const objects: ObjectInfo[] = [];
    keys.forEach((key, i) => {
      const st = stats[i];
      if (st?.isFile()) objects.push({ key, size: st.size, lastModified: st.mtime });
    });
    return more ? { objects, prefixes, cursor: last! } : { objects, prefixes };
  }

  async *listAll(prefix: string, options: Omit<ListOptions, "cursor"> = {}): AsyncIterable<ObjectInfo> {
    if (options.delimiter) {
      yield* allPages((p, o) => this.list(p, o), prefix, options);
      return;
    }
    // One walk of the tree, not one per page of `list` (each page would walk it again); a key
    // deleted meanwhile is left out, as `list` leaves it out.
    for (const key of await this.scan(prefix)) {
      const st = statSync(join(this.root, ...key.split("/")), { throwIfNoEntry: false });
      if (st?.isFile()) yield { key, size: st.size, lastModified: st.mtime };
    }
  }

  close(): void {}
}

/** Remove a temp file, gone already or not (one unlink: what `rm --force` does for a file, without its lstat). */
async function removeTemp(tmp: string): Promise<void> {
  try {
    await fs.unlink(tmp);
  } catch (e) {
    if (errno(e) !== "ENOENT") throw e;
  }
}

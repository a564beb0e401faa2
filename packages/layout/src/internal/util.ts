// Small shared helpers: hashing, byte comparison, sleeping, nonces, key validation.
import { promises as fs } from "node:fs";
import { dirname } from "node:path";
import { randomHex } from "@lake/durable";
import { LayoutError } from "./errors.js";
import { nodeCrypto } from "./node-crypto.js";
import type { ListOptions, ListPage, ObjectInfo } from "./types.js";

/** SHA-256 of bytes as lowercase hex. */
export function sha256Hex(data: Uint8Array | string): string {
  return nodeCrypto().createHash("sha256").update(data).digest("hex");
}

/** Byte equality. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0;
}

/** Compare two strings by their UTF-8 bytes (S3's LIST order). */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** 128 random bits as 32 hex chars: the nonce every CAS-written control object carries. */
export function newNonce(): string {
  return randomHex(16);
}

/** The reserved top-level directory of the local backend (temp files, lock files). */
export const LOCAL_INTERNAL_DIR = ".lake-store";

/**
 * Throw InvalidKey unless `key` is a valid object key: non-empty, at most 1024 UTF-8 bytes, no
 * leading or trailing "/", no empty, "." or ".." segment, no NUL or other control character, and not
 * under the local backend's reserved ".lake-store/" directory.
 */
export function validateObjectKey(key: string, store?: string): void {
  const bad = (reason: string): never => {
    throw new LayoutError("InvalidKey", `invalid object key ${JSON.stringify(key)}: ${reason}`, { data: store === undefined ? { key, detail: reason } : { key, store, detail: reason } });
  };
  if (typeof key !== "string" || key.length === 0) bad("empty");
  if (Buffer.byteLength(key, "utf8") > 1024) bad("longer than 1024 bytes");
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(key)) bad("control character");
  if (key.startsWith("/") || key.endsWith("/")) bad("leading or trailing '/'");
  for (const seg of key.split("/")) {
    if (seg === "" || seg === "." || seg === "..") bad(`segment ${JSON.stringify(seg)}`);
  }
  if (key === LOCAL_INTERNAL_DIR || key.startsWith(LOCAL_INTERNAL_DIR + "/")) bad(`reserved prefix ${LOCAL_INTERNAL_DIR}/`);
}

/** Throw InvalidKey unless `prefix` is a valid list prefix ("" or a key prefix without a leading "/"). */
export function validatePrefix(prefix: string, store?: string): void {
  if (prefix === "") return;
  // eslint-disable-next-line no-control-regex
  if (prefix.startsWith("/") || /[\u0000-\u001f\u007f]/.test(prefix) || prefix.split("/").some((s, i, all) => (s === "." || s === ".." || (s === "" && i < all.length - 1)))) {
    throw new LayoutError("InvalidKey", `invalid list prefix ${JSON.stringify(prefix)}`, { data: store === undefined ? { key: prefix } : { key: prefix, store } });
  }
}

/** Normalise `maxKeys` to 1..1000. */
/** Every object of a listing, page after page (a store's `listAll` over its `list`). */
export async function* allPages(list: (prefix: string, options: ListOptions) => Promise<ListPage>, prefix: string, options: Omit<ListOptions, "cursor">): AsyncIterable<ObjectInfo> {
  let cursor: string | undefined;
  do {
    const page: ListPage = await list(prefix, cursor === undefined ? options : { ...options, cursor });
    yield* page.objects;
    cursor = page.cursor;
  } while (cursor !== undefined);
}

export function pageSize(maxKeys: number | undefined): number {
  if (maxKeys === undefined) return 1000;
  if (!Number.isInteger(maxKeys) || maxKeys < 1) throw new LayoutError("InvalidKey", `maxKeys must be a positive integer, got ${maxKeys}`);
  return Math.min(maxKeys, 1000);
}

/** Chunks of an UploadSource, as Buffers. */
export async function* sourceChunks(source: Uint8Array | { readonly path: string } | AsyncIterable<Uint8Array>): AsyncGenerator<Buffer> {
  if (source instanceof Uint8Array) {
    yield Buffer.from(source.buffer, source.byteOffset, source.byteLength);
    return;
  }
  if ("path" in source && typeof (source as { path: unknown }).path === "string") {
    const { createReadStream } = await import("node:fs");
    for await (const chunk of createReadStream((source as { path: string }).path, { highWaterMark: 1 << 20 })) yield chunk as Buffer;
    return;
  }
  for await (const chunk of source as AsyncIterable<Uint8Array>) yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/**
 * `mkdir -p` that reports the real reason. On a read-only file system Node's recursive mkdir says
 * ENOENT; then the first missing directory is made on its own, which fails with the errno that
 * matters (EROFS, EACCES, ENOSPC) naming that directory. Returns what `fs.mkdir` returns.
 */
export async function mkdirs(dir: string): Promise<string | undefined> {
  try {
    return await fs.mkdir(dir, { recursive: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    let d = dir;
    for (;;) {
      const up = dirname(d);
      if (up === d) throw e;
      try {
        await fs.stat(up);
        break;
      } catch {
        d = up;
      }
    }
    await fs.mkdir(d); // throws the errno that stopped the recursive mkdir
    await fs.mkdir(dir, { recursive: true });
    return d;
  }
}

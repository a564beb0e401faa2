// The S3 backend. Conditional writes use If-None-Match: * and If-Match: <etag without quotes>
// (radosgw refuses a quoted If-Match). Every failure of a conditional write is settled by re-reading
// the key: our own bytes there mean the write happened (an SDK retry can turn one's own success into
// a 412; a dropped response can look like a 5xx or a timeout).
import { createWriteStream } from "node:fs";
import * as fs from "node:fs/promises";
import { dirname } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createRequire } from "node:module";
import type { S3Client } from "@aws-sdk/client-s3";
import { randomHex, replaceFrom } from "@lake/durable";
import { LayoutError } from "./errors.js";
import type { ConditionalResult, ListOptions, ListPage, ObjectInfo, ObjectStore, StoredObject, UploadOptions, UploadSource } from "./types.js";
import { nodeCrypto } from "./node-crypto.js";
import { allPages, pageSize, sameBytes, sleep, sourceChunks, validateObjectKey, validatePrefix } from "./util.js";

// The SDK (CommonJS, ~0.35 s of CPU to load) is required on first use, so importing the package
// and opening file:// stores never loads it.
type Sdk = typeof import("@aws-sdk/client-s3");
const requireCjs = createRequire(import.meta.url);
let loaded: Sdk | undefined;
function sdk(): Sdk {
  return (loaded ??= requireCjs("@aws-sdk/client-s3") as Sdk);
}

/** Options of the S3 backend. */
export interface S3StoreOptions {
  /** A ready client (tests, custom middleware). Without it one is built from the SDK's default chain. */
  readonly client?: S3Client;
  /** Per-request timeout in ms for the client this backend builds (default 30 000). */
  readonly requestTimeoutMs?: number;
}

/** Strip the quotes S3 puts around an ETag. */
export function unquoteEtag(etag: string | undefined): string {
  if (etag === undefined) return "";
  const e = etag.startsWith("W/") ? etag.slice(2) : etag;
  return e.length >= 2 && e.startsWith('"') && e.endsWith('"') ? e.slice(1, -1) : e;
}

type Failure = "precondition" | "missing" | "unknown" | "other";

function statusOf(e: unknown): number | undefined {
  const m = (e as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata;
  return typeof m?.httpStatusCode === "number" ? m.httpStatusCode : undefined;
}

function nameOf(e: unknown): string {
  return typeof e === "object" && e !== null && "name" in e ? String((e as { name: unknown }).name) : "";
}

/** Classify an SDK error: 412/409 precondition, 404 missing, 5xx/timeouts/network unknown. */
export function classifyS3Error(e: unknown): Failure {
  const status = statusOf(e);
  const name = nameOf(e);
  if (status === 412 || name === "PreconditionFailed") return "precondition";
  if (status === 409 || name === "ConditionalRequestConflict") return "precondition";
  if (status === 404 || name === "NoSuchKey" || name === "NotFound") return "missing";
  if (status !== undefined && status >= 500) return "unknown";
  if (status === 408 || status === 429) return "unknown";
  if (status === undefined) return "unknown"; // no response at all: timeout, reset, abort
  return "other";
}

/** Build the default client: the SDK's credential/region chain, AWS_ENDPOINT_URL_S3, path-style for custom endpoints. */
export function defaultS3Client(requestTimeoutMs = 30_000, env: NodeJS.ProcessEnv = process.env): S3Client {
  const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  const hasRegion = Boolean(env.AWS_REGION || env.AWS_DEFAULT_REGION);
  return new (sdk().S3Client)({
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    ...(endpoint && !hasRegion ? { region: "us-east-1" } : {}),
    requestHandler: { requestTimeout: requestTimeoutMs, connectionTimeout: Math.min(requestTimeoutMs, 10_000) },
  });
}

const MIN_PART = 5 * 1024 * 1024;

export class S3Store implements ObjectStore {
  readonly url: string;
  readonly bucket: string;
  /** The key prefix of this store's root, "" or ending with "/". */
  readonly root: string;
  readonly client: S3Client;
  private readonly ownsClient: boolean;

  constructor(bucket: string, prefix: string, url: string, options: S3StoreOptions = {}) {
    this.bucket = bucket;
    this.root = prefix === "" ? "" : prefix.replace(/\/+$/, "") + "/";
    this.url = url;
    this.ownsClient = options.client === undefined;
    this.client = options.client ?? defaultS3Client(options.requestTimeoutMs);
  }

  private k(key: string): string {
    validateObjectKey(key, this.url);
    return this.root + key;
  }

  private fail(op: string, key: string, e: unknown, code: "Io" | "Unknown" = "Io"): LayoutError {
    const status = statusOf(e);
    const msg = e instanceof Error ? e.message || e.name : String(e);
    return new LayoutError(code, `${op} ${key} in ${this.url}: ${status ? `HTTP ${status} ` : ""}${msg}`, { data: { key, store: this.url }, cause: e });
  }

  async get(key: string): Promise<StoredObject | undefined> {
    const Key = this.k(key);
    try {
      const r = await this.client.send(new (sdk().GetObjectCommand)({ Bucket: this.bucket, Key }));
      const body = r.Body ? await r.Body.transformToByteArray() : new Uint8Array();
      return { body, etag: unquoteEtag(r.ETag) };
    } catch (e) {
      if (classifyS3Error(e) === "missing") return undefined;
      throw this.fail("read", key, e);
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const Key = this.k(key);
    try {
      const r = await this.client.send(new (sdk().HeadObjectCommand)({ Bucket: this.bucket, Key }));
      const info: ObjectInfo = { key, etag: unquoteEtag(r.ETag), size: r.ContentLength ?? 0 };
      return r.LastModified ? { ...info, lastModified: r.LastModified } : info;
    } catch (e) {
      if (classifyS3Error(e) === "missing") return undefined;
      throw this.fail("head", key, e);
    }
  }

  async put(key: string, body: Uint8Array): Promise<{ etag: string }> {
    const Key = this.k(key);
    try {
      const r = await this.client.send(new (sdk().PutObjectCommand)({ Bucket: this.bucket, Key, Body: body }));
      return { etag: unquoteEtag(r.ETag) };
    } catch (e) {
      throw this.fail("put", key, e);
    }
  }

  /** Re-read after a failed conditional write, retrying reads that themselves fail transiently. */
  private async reread(key: string): Promise<StoredObject | undefined> {
    let last: unknown;
    for (let i = 0; i < 5; i++) {
      try {
        return await this.get(key);
      } catch (e) {
        last = e;
        await sleep(50 * 2 ** i);
      }
    }
    throw this.fail("re-read after an unsettled conditional write of", key, last, "Unknown");
  }

  private async conditional(key: string, body: Uint8Array, send: () => Promise<{ ETag?: string | undefined }>): Promise<ConditionalResult> {
    let failure: Failure;
    let cause: unknown;
    try {
      const r = await send();
      return { status: "written", etag: unquoteEtag(r.ETag) };
    } catch (e) {
      failure = classifyS3Error(e);
      cause = e;
      if (failure === "other") throw this.fail("conditional write", key, e);
    }
    const current = await this.reread(key);
    if (current !== undefined && sameBytes(current.body, body)) return { status: "written", etag: current.etag };
    if (failure === "unknown") return { status: "unknown", current, cause };
    return { status: "conflict", current };
  }

  putIfAbsent(key: string, body: Uint8Array): Promise<ConditionalResult> {
    const Key = this.k(key);
    return this.conditional(key, body, () => this.client.send(new (sdk().PutObjectCommand)({ Bucket: this.bucket, Key, Body: body, IfNoneMatch: "*" })));
  }

  putIfMatch(key: string, body: Uint8Array, etag: string): Promise<ConditionalResult> {
    const Key = this.k(key);
    const IfMatch = unquoteEtag(etag);
    return this.conditional(key, body, () => this.client.send(new (sdk().PutObjectCommand)({ Bucket: this.bucket, Key, Body: body, IfMatch })));
  }

  async delete(key: string): Promise<void> {
    const Key = this.k(key);
    try {
      await this.client.send(new (sdk().DeleteObjectCommand)({ Bucket: this.bucket, Key }));
    } catch (e) {
      if (classifyS3Error(e) !== "missing") throw this.fail("delete", key, e);
    }
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    validatePrefix(prefix, this.url);
    try {
      const r = await this.client.send(
        new (sdk().ListObjectsV2Command)({
          Bucket: this.bucket,
          Prefix: this.root + prefix,
          MaxKeys: pageSize(options.maxKeys),
          ...(options.delimiter ? { Delimiter: options.delimiter } : {}),
          ...(options.cursor !== undefined ? { ContinuationToken: options.cursor } : {}),
        }),
      );
      const cut = this.root.length;
      const objects: ObjectInfo[] = (r.Contents ?? []).map((c) => {
        const o: ObjectInfo = { key: (c.Key ?? "").slice(cut), etag: unquoteEtag(c.ETag), size: c.Size ?? 0 };
        return c.LastModified ? { ...o, lastModified: c.LastModified } : o;
      });
      const prefixes = (r.CommonPrefixes ?? []).map((p) => (p.Prefix ?? "").slice(cut));
      return r.IsTruncated && r.NextContinuationToken ? { objects, prefixes, cursor: r.NextContinuationToken } : { objects, prefixes };
    } catch (e) {
      if (e instanceof LayoutError) throw e;
      throw this.fail("list", prefix, e);
    }
  }

  listAll(prefix: string, options: Omit<ListOptions, "cursor"> = {}): AsyncIterable<ObjectInfo> {
    return allPages((p, o) => this.list(p, o), prefix, options);
  }

  async upload(key: string, source: UploadSource, options: UploadOptions = {}): Promise<ConditionalResult> {
    const Key = this.k(key);
    const partSize = Math.max(options.partSize ?? 8 * 1024 * 1024, MIN_PART);
    const reader = new PartReader(sourceChunks(source)[Symbol.asyncIterator]());
    // Fill the first part; an object no larger than one part is a single PUT.
    const first = await reader.next(partSize);
    if (first.done) {
      const body = first.buf;
      if (options.ifAbsent) return this.putIfAbsent(key, body);
      return { status: "written", etag: (await this.put(key, body)).etag };
    }
    let uploadId: string | undefined;
    try {
      const created = await this.client.send(new (sdk().CreateMultipartUploadCommand)({ Bucket: this.bucket, Key }));
      uploadId = created.UploadId;
      if (!uploadId) throw new Error("no UploadId in CreateMultipartUpload response");
      const parts: { ETag: string; PartNumber: number }[] = [];
      let part: { buf: Buffer; done: boolean } = first;
      for (let n = 1; ; n++) {
        if (part.buf.byteLength > 0 || n === 1) {
          const r = await this.client.send(new (sdk().UploadPartCommand)({ Bucket: this.bucket, Key, UploadId: uploadId, PartNumber: n, Body: part.buf }));
          parts.push({ ETag: r.ETag ?? "", PartNumber: n });
        }
        if (part.done) break;
        part = await reader.next(partSize);
      }
      const complete = () =>
        this.client.send(
          new (sdk().CompleteMultipartUploadCommand)({
            Bucket: this.bucket,
            Key,
            UploadId: uploadId,
            MultipartUpload: { Parts: parts },
            ...(options.ifAbsent ? { IfNoneMatch: "*" } : {}),
          }),
        );
      if (!options.ifAbsent) {
        const r = await complete();
        return { status: "written", etag: unquoteEtag(r.ETag) };
      }
      try {
        const r = await complete();
        return { status: "written", etag: unquoteEtag(r.ETag) };
      } catch (e) {
        const f = classifyS3Error(e);
        if (f === "other") throw e;
        const current = await this.reread(key);
        const etag = multipartEtag(parts);
        if (current !== undefined && current.etag === etag) return { status: "written", etag };
        await this.client.send(new (sdk().AbortMultipartUploadCommand)({ Bucket: this.bucket, Key, UploadId: uploadId })).catch(() => undefined);
        uploadId = undefined;
        return f === "unknown" ? { status: "unknown", current, cause: e } : { status: "conflict", current };
      }
    } catch (e) {
      if (uploadId) await this.client.send(new (sdk().AbortMultipartUploadCommand)({ Bucket: this.bucket, Key, UploadId: uploadId })).catch(() => undefined);
      throw e instanceof LayoutError ? e : this.fail("upload", key, e);
    }
  }

  async download(key: string, file: string): Promise<{ etag: string; size: number }> {
    const Key = this.k(key);
    const tmp = `${file}.tmp-${randomHex(6)}`;
    try {
      const r = await this.client.send(new (sdk().GetObjectCommand)({ Bucket: this.bucket, Key }));
      await fs.mkdir(dirname(file), { recursive: true });
      let size = 0;
      const body = r.Body as Readable;
      body.on("data", (c: Buffer) => (size += c.byteLength));
      await pipeline(body, createWriteStream(tmp, { flags: "wx" }));
      replaceFrom(tmp, file, { syncTemp: true }); // fsync, rename, fsync the directory
      return { etag: unquoteEtag(r.ETag), size };
    } catch (e) {
      await fs.rm(tmp, { force: true });
      if (classifyS3Error(e) === "missing") throw new LayoutError("NotFound", `no object ${key} in ${this.url}`, { data: { key, store: this.url }, cause: e });
      throw e instanceof LayoutError ? e : this.fail("download", key, e);
    }
  }

  close(): void {
    if (this.ownsClient) this.client.destroy();
  }
}

/** Cuts a chunk stream into parts of exactly `size` bytes (the last one shorter). */
class PartReader {
  private leftover: Buffer | undefined;
  private ended = false;
  constructor(private readonly it: AsyncIterator<Buffer>) {}
  /** The next part; `done` when the source has nothing after it. */
  async next(size: number): Promise<{ buf: Buffer; done: boolean }> {
    const bufs: Buffer[] = this.leftover ? [this.leftover] : [];
    let len = this.leftover?.byteLength ?? 0;
    this.leftover = undefined;
    while (len < size && !this.ended) {
      const n = await this.it.next();
      if (n.done) this.ended = true;
      else {
        bufs.push(n.value);
        len += n.value.byteLength;
      }
    }
    const all = Buffer.concat(bufs, len);
    if (len > size) this.leftover = all.subarray(size);
    const buf = len > size ? all.subarray(0, size) : all;
    return { buf, done: this.ended && this.leftover === undefined };
  }
}

/** S3's multipart ETag: MD5 of the parts' binary MD5s, "-" and the part count. */
function multipartEtag(parts: readonly { ETag: string }[]): string {
  const h = nodeCrypto().createHash("md5");
  for (const p of parts) h.update(Buffer.from(unquoteEtag(p.ETag), "hex"));
  return `${h.digest("hex")}-${parts.length}`;
}

/** One stored object read back whole. */
export interface StoredObject {
  /** The object's bytes. */
  readonly body: Uint8Array;
  /** The object's entity tag, without quotes: the value to pass to `putIfMatch`. */
  readonly etag: string;
}

/** What `head` and `list` know about an object without reading it. */
export interface ObjectInfo {
  readonly key: string;
  /** Entity tag without quotes. `list` leaves it out on backends where it would cost a read. */
  readonly etag?: string;
  readonly size: number;
  /** Last modification time, when the backend reports one. */
  readonly lastModified?: Date;
}

/**
 * The outcome of a conditional write (`putIfAbsent`, `putIfMatch`).
 * - `written`: this call's bytes are stored; `etag` is theirs.
 * - `conflict`: the precondition did not hold; `current` is the object read after the failure
 *   (undefined when there is none). A conflict can hide one's own earlier success that an SDK retry
 *   turned into a 412: callers whose bodies carry a nonce look for it in `current` (see casUpdate).
 * - `unknown`: the service failed or timed out and a re-read could not show this call's bytes; the
 *   write may or may not have happened. `current` is what the re-read saw.
 */
export type ConditionalResult =
  | { readonly status: "written"; readonly etag: string }
  | { readonly status: "conflict"; readonly current: StoredObject | undefined }
  | { readonly status: "unknown"; readonly current: StoredObject | undefined; readonly cause: unknown };

/** Options of `list`. */
export interface ListOptions {
  /** Group keys that share a prefix up to the next delimiter into `prefixes` (S3's CommonPrefixes). */
  readonly delimiter?: string;
  /** Most entries (keys + prefixes) in one page; 1..1000, default 1000. */
  readonly maxKeys?: number;
  /** The `cursor` of the previous page. */
  readonly cursor?: string;
}

/** One page of `list`, in lexicographic (UTF-8 byte) order. */
export interface ListPage {
  readonly objects: readonly ObjectInfo[];
  /** Common prefixes (each ends with the delimiter), when a delimiter was given. */
  readonly prefixes: readonly string[];
  /** Pass to the next call to continue; undefined on the last page. */
  readonly cursor?: string;
}

/** A source for `upload`: bytes, a file path, or a stream of chunks. */
export type UploadSource = Uint8Array | { readonly path: string } | AsyncIterable<Uint8Array>;

/** Options of `upload`. */
export interface UploadOptions {
  /** Part size for multipart uploads (S3); at least 5 MiB, default 8 MiB. */
  readonly partSize?: number;
  /** Only create the object; do not replace an existing one. The result is then a ConditionalResult. */
  readonly ifAbsent?: boolean;
}

/**
 * The contract every fleet-store backend keeps (local directory, S3). Keys are relative to the
 * store's root ("live/leases/<hex>.json"); they never start with "/" and have no empty, "." or ".."
 * segments. Etags are opaque strings without quotes.
 */
export interface ObjectStore {
  /** The URL this store was opened from (`file:///abs/dir` or `s3://bucket/prefix`). */
  readonly url: string;
  /** Read an object whole, or undefined when it does not exist. */
  get(key: string): Promise<StoredObject | undefined>;
  /** Size and etag of an object, or undefined when it does not exist. */
  head(key: string): Promise<ObjectInfo | undefined>;
  /** Write an object unconditionally (last writer wins). */
  put(key: string, body: Uint8Array): Promise<{ etag: string }>;
  /** Create an object only if the key is free (atomic no-replace create). */
  putIfAbsent(key: string, body: Uint8Array): Promise<ConditionalResult>;
  /** Replace an object only if its current etag is `etag` (atomic compare-and-swap). */
  putIfMatch(key: string, body: Uint8Array, etag: string): Promise<ConditionalResult>;
  /** Delete an object; deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** One page of the keys under `prefix`, in lexicographic order. */
  list(prefix: string, options?: ListOptions): Promise<ListPage>;
  /** Every key under `prefix` (all pages), in lexicographic order. */
  listAll(prefix: string, options?: Omit<ListOptions, "cursor">): AsyncIterable<ObjectInfo>;
  /** Write a large object from a file or a stream (multipart on S3). */
  upload(key: string, source: UploadSource, options?: UploadOptions): Promise<ConditionalResult>;
  /** Copy an object into a local file (temp + fsync + rename), returning its etag and size. */
  download(key: string, file: string): Promise<{ etag: string; size: number }>;
  /** Release network resources (S3 client); the store is unusable afterwards. */
  close(): void;
}

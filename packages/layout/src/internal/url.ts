// Store URLs: file:///abs/dir or s3://bucket/prefix, and the default store of docs/ARCHITECTURE.md.
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { defaultStoreUrl } from "./defaults.js";
import { LayoutError } from "./errors.js";
import { LocalStore, type LocalStoreOptions } from "./local.js";
import { S3Store, type S3StoreOptions } from "./s3.js";
import type { ObjectStore } from "./types.js";

/** A parsed store URL. */
export type StoreLocation =
  | { readonly kind: "file"; readonly root: string; readonly url: string }
  | { readonly kind: "s3"; readonly bucket: string; readonly prefix: string; readonly url: string };

/**
 * Parse a store URL. `file:///abs/dir` (or a plain absolute path) is a local directory;
 * `s3://bucket/prefix` is an S3 bucket and key prefix (the prefix may be empty). Anything else is
 * an `InvalidUrl` LayoutError.
 */
export function parseStoreUrl(url: string): StoreLocation {
  const bad = (reason: string): never => {
    throw new LayoutError("InvalidUrl", `store URL ${JSON.stringify(url)}: ${reason}`, { data: { store: url, detail: reason } });
  };
  if (typeof url !== "string" || url.trim() === "") bad("empty");
  if (url.startsWith("s3://")) {
    const rest = url.slice(5);
    const slash = rest.indexOf("/");
    const bucket = slash < 0 ? rest : rest.slice(0, slash);
    const prefix = slash < 0 ? "" : rest.slice(slash + 1).replace(/\/+$/, "");
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) bad(`bad bucket name ${JSON.stringify(bucket)}`);
    if (prefix.split("/").some((s) => s === "." || s === "..") || prefix.includes("//") || prefix.startsWith("/")) bad("bad key prefix");
    return { kind: "s3", bucket, prefix, url: prefix === "" ? `s3://${bucket}` : `s3://${bucket}/${prefix}` };
  }
  if (url.startsWith("file:")) {
    let root: string;
    try {
      root = fileURLToPath(url);
    } catch (e) {
      return bad(`not an absolute file URL (${e instanceof Error ? e.message : String(e)})`);
    }
    root = resolve(root);
    return { kind: "file", root, url: pathToFileURL(root).href };
  }
  if (isAbsolute(url)) {
    const root = resolve(url);
    return { kind: "file", root, url: pathToFileURL(root).href };
  }
  return bad("expected file:///absolute/dir or s3://bucket/prefix");
}

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  readonly local?: LocalStoreOptions;
  readonly s3?: S3StoreOptions;
}

/** Open a store by URL; without a URL, the default of {@link defaultStoreUrl}. */
export function openStore(url: string = defaultStoreUrl(), options: OpenStoreOptions = {}): ObjectStore {
  const loc = parseStoreUrl(url);
  if (loc.kind === "file") return new LocalStore(loc.root, loc.url, options.local);
  return new S3Store(loc.bucket, loc.prefix, loc.url, options.s3);
}

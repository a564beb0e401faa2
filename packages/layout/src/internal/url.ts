// Store URLs: file:///abs/dir or s3://bucket/prefix, and the default store of ARCHITECTURE.md.
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
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
    throw new LayoutError("InvalidUrl", `store URL ${JSON.stringify(url)}: ${reason}`, { store: url, detail: reason });
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

/**
 * The local root of ARCHITECTURE.md: `$LAKE_ROOT`, else `$XDG_DATA_HOME/lake`, else `~/.local/share/lake`.
 */
export function defaultLocalRoot(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  if (env.LAKE_ROOT) return resolve(env.LAKE_ROOT);
  if (env.XDG_DATA_HOME) return join(resolve(env.XDG_DATA_HOME), "lake");
  return join(home, ".local", "share", "lake");
}

/**
 * The reader's cache (derived: mirrored s3:// objects, the search index; deletable at any time):
 * `$LAKE_READER_CACHE`, else `$XDG_CACHE_HOME/lake/reader`, else `~/.cache/lake/reader`. The
 * collector's `clean` deletes it, the reader fills it.
 */
export function defaultReaderCache(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  if (env.LAKE_READER_CACHE) return resolve(env.LAKE_READER_CACHE);
  if (env.XDG_CACHE_HOME) return join(resolve(env.XDG_CACHE_HOME), "lake", "reader");
  return join(home, ".cache", "lake", "reader");
}

/**
 * The default fleet store URL: `$LAKE_STORE`, else the `fleet/` directory inside the local root
 * (`~/.local/share/lake/fleet` by default), as a file URL. The storage root never takes `fleet/`
 * for a session (@lake/store reserves the name).
 */
export function defaultStoreUrl(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  if (env.LAKE_STORE) return env.LAKE_STORE;
  return pathToFileURL(join(defaultLocalRoot(env, home), "fleet")).href;
}

/**
 * Where the default fleet store was before it moved into the local root: a `fleet/` directory
 * beside it (`~/.local/share/fleet`). A store found there is moved by `lake-collector push`.
 */
export function legacyDefaultStorePath(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  return join(dirname(defaultLocalRoot(env, home)), "fleet");
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

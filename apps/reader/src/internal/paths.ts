// Default locations: the fleet store URL, the local root and the reader's cache come from
// @lake/layout (ARCHITECTURE.md; the collector's clean deletes the cache).
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { defaultLocalRoot, defaultReaderCache, defaultStoreUrl } from "@lake/layout/defaults";

/** The local root: `$LAKE_ROOT`, else `$XDG_DATA_HOME/lake`, else `~/.local/share/lake`. */
export function defaultRoot(env: NodeJS.ProcessEnv = process.env): string {
  return defaultLocalRoot(env);
}

/** The fleet store: `$LAKE_STORE`, else the `fleet/` directory inside the local root. */
export function defaultStore(env: NodeJS.ProcessEnv = process.env): string {
  return defaultStoreUrl(env);
}

/** The reader's cache: `$LAKE_READER_CACHE`, else `$XDG_CACHE_HOME/lake/reader`, else `~/.cache/lake/reader`. */
export function defaultCache(env: NodeJS.ProcessEnv = process.env): string {
  return defaultReaderCache(env);
}

/** A plain absolute or relative path given where a store URL is expected becomes a file URL. */
export function normalizeStoreArg(s: string): string {
  if (s.startsWith("s3://") || s.startsWith("file:")) return s;
  return pathToFileURL(isAbsolute(s) ? s : resolve(s)).href;
}

// Default locations: the fleet store URL, the local root and the reader's cache come from
// @lake/layout (docs/ARCHITECTURE.md; the collector's clean deletes the cache).
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

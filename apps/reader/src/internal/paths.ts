// Default locations: the fleet store URL and local root come from @lake/layout (ARCHITECTURE.md);
// the reader's cache is its own.
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { defaultLocalRoot, defaultStoreUrl } from "@lake/layout/store";

/** The local root: `$LAKE_ROOT`, else `$XDG_DATA_HOME/lake`, else `~/.local/share/lake`. */
export function defaultRoot(env: NodeJS.ProcessEnv = process.env): string {
  return defaultLocalRoot(env);
}

/** The fleet store: `$LAKE_STORE`, else a `fleet/` directory beside the local root. */
export function defaultStore(env: NodeJS.ProcessEnv = process.env): string {
  return defaultStoreUrl(env);
}

/** The reader's cache: `$LAKE_READER_CACHE`, else `$XDG_CACHE_HOME/lake/reader`, else `~/.cache/lake/reader`. */
export function defaultCache(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LAKE_READER_CACHE) return resolve(env.LAKE_READER_CACHE);
  if (env.XDG_CACHE_HOME) return join(resolve(env.XDG_CACHE_HOME), "lake", "reader");
  return join(homedir(), ".cache", "lake", "reader");
}

/** A plain absolute or relative path given where a store URL is expected becomes a file URL. */
export function normalizeStoreArg(s: string): string {
  if (s.startsWith("s3://") || s.startsWith("file:")) return s;
  return pathToFileURL(isAbsolute(s) ? s : resolve(s)).href;
}

// `@lake/cli/store`: the --store option. Its own subpath so a command without a store (the
// collector's hook) never loads @lake/layout.
import { defaultStoreUrl, parseStoreUrl } from "@lake/layout/store";
import { usage } from "./internal/errors.js";
import { value, type Option } from "./internal/options.js";

/**
 * Check a store URL with @lake/layout's one parser and return its normal form: `file:///abs/dir`,
 * a plain absolute path (as a file URL) or `s3://bucket/prefix`. Anything else (`ftp://x`,
 * `relative/dir`) throws, naming the URL.
 */
export function parseStoreArg(raw: string): string {
  try {
    return parseStoreUrl(raw).url;
  } catch (e) {
    // LayoutError's message already names the URL: `store URL "ftp://x": expected …`.
    throw new Error((e instanceof Error ? e.message : String(e)).replace(/^store URL "[^"]*": /, ""), { cause: e });
  }
}

/** The --store option: a checked store URL, or undefined (the command takes {@link defaultStoreUrl}). */
export function storeOption(help = "fleet store: file:///dir, /abs/dir or s3://bucket/prefix\n(default $LAKE_STORE, else ~/.local/share/lake/fleet inside the local root)"): Option<string | undefined> {
  return value("URL", help, parseStoreArg);
}

/** The store a command uses: the --store value, else $LAKE_STORE (checked the same way), else the default. */
export function resolveStore(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (flag !== undefined) return flag;
  const url = defaultStoreUrl(env);
  try {
    return parseStoreArg(url);
  } catch (e) {
    throw usage(`$LAKE_STORE ${JSON.stringify(url)}: ${(e as Error).message}`, "$LAKE_STORE");
  }
}

// Where lake keeps things when no flag says: the local root, the fleet store, the reader's cache and
// the agent id. One place resolves each, in one order: a flag (the caller's) > the environment >
// the optional config file ($XDG_CONFIG_HOME/lake/config.json, else ~/.config/lake/config.json) >
// the built-in default. Light on purpose (node built-ins; zod only when a config file exists): the
// collector's hook resolves its root through here on every Claude Code hook.
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { LayoutError } from "./errors.js";

/** The settings the config file may hold; every key is optional. */
export interface LakeConfig {
  /** The local storage root (absolute, or `~/…`). */
  readonly root?: string;
  /** The fleet store URL (`file:///abs/dir`, `s3://bucket/prefix`, or an absolute path). */
  readonly store?: string;
  /** The reader's cache directory (absolute, or `~/…`). */
  readonly reader_cache?: string;
  /** This machine's agent id in the fleet. */
  readonly agent?: string;
}

/** The config file's path: `$XDG_CONFIG_HOME/lake/config.json`, else `~/.config/lake/config.json`. */
export function configFile(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  return join(env.XDG_CONFIG_HOME ? resolve(env.XDG_CONFIG_HOME) : join(home, ".config"), "lake", "config.json");
}

const requireCjs = createRequire(import.meta.url);
// Required, not imported: an ESM import of node:fs reads every export of fs, which loads its
// stream and promise modules — a cost on every hook and status line run.
const { readFileSync } = requireCjs("node:fs") as typeof import("node:fs");
type Zod = typeof import("zod");
let schema: ReturnType<typeof buildSchema> | undefined;

function buildSchema(z: Zod) {
  const path = z.string().refine((s) => isAbsolute(s) || s.startsWith("~/"), "expected an absolute path or ~/…");
  return z.strictObject({
    root: path.optional(),
    store: z
      .string()
      .refine((s) => s.startsWith("file:") || s.startsWith("s3://") || isAbsolute(s), "expected file:///abs/dir, s3://bucket/prefix or an absolute path")
      .optional(),
    reader_cache: path.optional(),
    agent: z.string().regex(/[A-Za-z0-9]/, "expected a name with a letter or digit").optional(),
  });
}

const cache = new Map<string, LakeConfig>();

/**
 * Read and validate the config file (absent: `{}`). A file that is not JSON, or holds a key or
 * value the schema does not allow, is a `InvalidConfig` LayoutError naming the file and the key.
 * `~/` in a path is expanded. Read once per process and path.
 */
export function readConfig(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): LakeConfig {
  const file = configFile(env, home);
  const known = cache.get(file);
  if (known) return known;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT" || (e as NodeJS.ErrnoException).code === "ENOTDIR") return {};
    throw new LayoutError("InvalidConfig", `${file}: cannot read (${(e as Error).message})`, { data: { key: file }, cause: e });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new LayoutError("InvalidConfig", `${file}: not JSON (${(e as Error).message})`, { data: { key: file }, cause: e });
  }
  schema ??= buildSchema(requireCjs("zod") as Zod);
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join(".") : issue.code === "unrecognized_keys" ? (issue as { keys?: string[] }).keys?.join(", ") : "";
    const what = issue.code === "unrecognized_keys" ? `unknown key ${where} (allowed: root, store, reader_cache, agent)` : `${where ? `${where}: ` : ""}${issue.message}`;
    throw new LayoutError("InvalidConfig", `${file}: ${what}`, { data: { key: file, detail: where || issue.code } });
  }
  const tilde = (p: string | undefined) => (p === undefined ? undefined : p.startsWith("~/") ? join(home, p.slice(2)) : resolve(p));
  const out: LakeConfig = {
    ...(parsed.data.root !== undefined ? { root: tilde(parsed.data.root)! } : {}),
    ...(parsed.data.store !== undefined ? { store: parsed.data.store } : {}),
    ...(parsed.data.reader_cache !== undefined ? { reader_cache: tilde(parsed.data.reader_cache)! } : {}),
    ...(parsed.data.agent !== undefined ? { agent: parsed.data.agent } : {}),
  };
  cache.set(file, out);
  return out;
}

/**
 * The local root: `$LAKE_ROOT`, else the config file's `root`, else `$XDG_DATA_HOME/lake`, else
 * `~/.local/share/lake`.
 */
export function defaultLocalRoot(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  if (env.LAKE_ROOT) return resolve(env.LAKE_ROOT);
  const file = readConfig(env, home).root;
  if (file) return file;
  if (env.XDG_DATA_HOME) return join(resolve(env.XDG_DATA_HOME), "lake");
  return join(home, ".local", "share", "lake");
}

/**
 * The reader's cache (derived: mirrored s3:// objects, the search index; deletable at any time):
 * `$LAKE_READER_CACHE`, else the config file's `reader_cache`, else `$XDG_CACHE_HOME/lake/reader`,
 * else `~/.cache/lake/reader`. The collector's `clean` deletes it, the reader fills it.
 */
export function defaultReaderCache(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  if (env.LAKE_READER_CACHE) return resolve(env.LAKE_READER_CACHE);
  const file = readConfig(env, home).reader_cache;
  if (file) return file;
  if (env.XDG_CACHE_HOME) return join(resolve(env.XDG_CACHE_HOME), "lake", "reader");
  return join(home, ".cache", "lake", "reader");
}

/**
 * The default fleet store URL: `$LAKE_STORE`, else the config file's `store`, else the `fleet/`
 * directory inside the local root (`~/.local/share/lake/fleet` by default), as a file URL. The
 * storage root never takes `fleet/` for a session (@lake/store reserves the name).
 */
export function defaultStoreUrl(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  if (env.LAKE_STORE) return env.LAKE_STORE;
  const file = readConfig(env, home).store;
  if (file) return isAbsolute(file) ? pathToFileURL(file).href : file;
  return pathToFileURL(join(defaultLocalRoot(env, home), "fleet")).href;
}

/** This machine's agent id as given: `$LAKE_AGENT`, else the config file's `agent`, else undefined (the caller uses the host name). */
export function configuredAgent(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string | undefined {
  return env.LAKE_AGENT || readConfig(env, home).agent || undefined;
}

/**
 * Where the default fleet store was before it moved into the local root: a `fleet/` directory
 * beside it (`~/.local/share/fleet`). A store found there is moved by `lake-collector push`.
 */
export function legacyDefaultStorePath(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  return join(dirname(defaultLocalRoot(env, home)), "fleet");
}

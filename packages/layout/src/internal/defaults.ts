// Where lake keeps things when no flag says: the local root, the fleet store, the reader's cache and
// the agent id. One place resolves each, in one order: a flag (the caller's) > the environment >
// the optional config file ($XDG_CONFIG_HOME/lake/config.json, else ~/.config/lake/config.json) >
// the built-in default. Light on purpose (node built-ins only): the collector's hook resolves its root
// through here on every Claude Code hook, and lake-reader's status line on every refresh.
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

/** The config file's keys, each with its check: undefined when the value is allowed, else what is expected. */
const KEYS: Readonly<Record<keyof LakeConfig, (v: string) => string | undefined>> = {
  root: (v) => (isAbsolute(v) || v.startsWith("~/") ? undefined : "expected an absolute path or ~/…"),
  store: (v) => (v.startsWith("file:") || v.startsWith("s3://") || isAbsolute(v) ? undefined : "expected file:///abs/dir, s3://bucket/prefix or an absolute path"),
  reader_cache: (v) => (isAbsolute(v) || v.startsWith("~/") ? undefined : "expected an absolute path or ~/…"),
  agent: (v) => (/[A-Za-z0-9]/.test(v) ? undefined : "expected a name with a letter or digit"),
};

/** What a JSON value is, for a message. */
function kindOf(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

/**
 * The one check of the config file: a JSON object whose keys are among {@link KEYS}, each a string
 * its check allows. Written out, not a zod schema: loading zod took some 90 ms, paid by every hook
 * and status line run on a machine with a config file. The first problem (`detail`: the key, or the
 * unknown keys), or undefined.
 */
function configProblem(json: unknown): { readonly message: string; readonly detail: string } | undefined {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return { message: `expected object, received ${kindOf(json)}`, detail: "invalid_type" };
  for (const [key, check] of Object.entries(KEYS)) {
    if (!Object.hasOwn(json, key)) continue;
    const v = (json as Record<string, unknown>)[key];
    const problem = typeof v === "string" ? check(v) : `expected string, received ${kindOf(v)}`;
    if (problem !== undefined) return { message: `${key}: ${problem}`, detail: key };
  }
  const unknown = Object.keys(json).filter((k) => !Object.hasOwn(KEYS, k));
  if (unknown.length > 0) return { message: `unknown key ${unknown.join(", ")} (allowed: ${Object.keys(KEYS).join(", ")})`, detail: unknown.join(", ") };
  return undefined;
}

const cache = new Map<string, LakeConfig>();

/**
 * Read and validate the config file (absent: `{}`). A file that is not JSON, or holds a key or
 * value it does not allow, is an `InvalidConfig` LayoutError naming the file and the key.
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
  const problem = configProblem(json);
  if (problem !== undefined) throw new LayoutError("InvalidConfig", `${file}: ${problem.message}`, { data: { key: file, detail: problem.detail } });
  const data = json as LakeConfig;
  const tilde = (p: string | undefined) => (p === undefined ? undefined : p.startsWith("~/") ? join(home, p.slice(2)) : resolve(p));
  const out: LakeConfig = {
    ...(data.root !== undefined ? { root: tilde(data.root)! } : {}),
    ...(data.store !== undefined ? { store: data.store } : {}),
    ...(data.reader_cache !== undefined ? { reader_cache: tilde(data.reader_cache)! } : {}),
    ...(data.agent !== undefined ? { agent: data.agent } : {}),
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

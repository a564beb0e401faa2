// What every command shares: output streams, the store/cache/root options, and opening the read model.
import { join } from "node:path";
import { ReaderError } from "./errors.js";
import { openReadableStore, resolveFleet, type Damage, type FleetFiles } from "./fleet.js";
import { text } from "@lake/cli";
import { parseStoreArg, storeOption } from "@lake/cli/store";
import { defaultCache, defaultRoot, defaultStore } from "./paths.js";
import type { ReadModel } from "./readmodel.js";

/** Where a command writes, and its environment. */
export interface Io {
  out(s: string): void;
  err(s: string): void;
  readonly env: NodeJS.ProcessEnv;
  /** Standard input, for the commands that read it (default: fd 0). */
  readonly stdin?: (() => string) | undefined;
  /** Where the damaged objects a command left out are collected (main reports them, exit 3). */
  readonly damaged?: Damage[];
  /** What `out` writes to: a TTY (colour) and its width; tables fit it (format.ts `terminalOf`). */
  readonly stdout?: { readonly isTTY?: boolean | undefined; readonly columns?: number | undefined } | undefined;
}

/** The options every store-reading command takes. */
export interface CommonValues {
  store?: string | undefined;
  cache?: string | undefined;
  root?: string | undefined;
}

/** The options every store-reading command takes (their values are {@link CommonValues}). */
export const COMMON = {
  store: storeOption(),
  cache: text("DIR", "reader cache: S3 mirror, search index (default $LAKE_READER_CACHE,\nelse $XDG_CACHE_HOME/lake/reader, else ~/.cache/lake/reader)"),
  root: text("DIR", "local root, for labels and the round chain (default $LAKE_ROOT,\nelse $XDG_DATA_HOME/lake, else ~/.local/share/lake)"),
} as const;

/** Resolved locations. */
export interface Locations {
  readonly store: string;
  readonly cache: string;
  readonly root: string;
  readonly labelsFile: string;
  /** A long-running process's fleet state (serve): its files, read model and answers, kept while the fleet is unchanged. */
  readonly fleet?: FleetCache | undefined;
  /** A long-running process's memo of built answers (serve), each keyed by what it was built from. */
  readonly memo?: Memo | undefined;
  /** Damaged objects left out while reading (shared with the command's Io). */
  readonly damaged: Damage[];
}

/**
 * What a long-running process keeps of the fleet it reads, for as long as the fleet is unchanged
 * (the same FleetFiles.fingerprint): its read model, open, and the answers built over it. A changed
 * fleet (a push, a compaction, a new snapshot) is a new state: nothing of the old one is answered.
 */
export interface FleetCache {
  /**
   * The fleet's files now: `resolve` runs, or the call joins a resolution that starts after it
   * (calls arriving together share one), so every change made before the call is seen.
   */
  files(resolve: () => Promise<FleetFiles>): Promise<FleetFiles>;
  /** Run `fn` on an open read model of `files` (opened, or reused when the fleet has not changed). */
  use<T>(files: FleetFiles, labelsFile: string, fn: (rm: ReadModel) => Promise<T>): Promise<T>;
  /** `build`'s value for `key` over the fleet state of `files`: built once while that state is current. */
  keep<T>(files: FleetFiles, key: string, build: () => Promise<T>): Promise<T>;
}

/**
 * Keeps values a long-running process built, by a key naming everything the value was built from
 * (a changed input is a new key): `get` answers the kept value, or builds, keeps and answers it.
 */
export interface Memo {
  get<T>(key: string, build: () => Promise<T>): Promise<T>;
}

/**
 * The store URL of --store (else $LAKE_STORE, else the default) in normal form, checked by
 * @lake/layout's parser: `file:///abs/dir`, an absolute path, `s3://bucket/prefix`; anything else
 * (`ftp://x`, `relative/dir`) is a usage error naming it.
 */
export function storeArg(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const [what, url] = flag !== undefined ? ["--store", flag] : ["$LAKE_STORE", defaultStore(env)];
  try {
    return parseStoreArg(url);
  } catch (e) {
    throw new ReaderError("Usage", `${what} ${JSON.stringify(url)}: ${(e as Error).message}`, { data: { file: url }, cause: e });
  }
}

/** Resolve the store URL, cache and root from options and environment. */
export function locations(v: CommonValues, env: NodeJS.ProcessEnv, damaged: Damage[] = []): Locations {
  const store = storeArg(v.store, env);
  const cache = v.cache ?? defaultCache(env);
  const root = v.root ?? defaultRoot(env);
  return { store, cache, root, labelsFile: join(root, "labels", "labels.ndjson"), damaged };
}

/**
 * Resolve the fleet files of a store, mirroring S3 objects into the cache — all of them, or with
 * `mirror: false` only those the command then asks for (FleetFiles.fetch).
 */
export async function fleetFiles(loc: Locations, options: { mirror?: boolean } = {}): Promise<FleetFiles> {
  const resolve = async (mirror: { mirror?: boolean }, damaged: Damage[]) => {
    const store = await openReadableStore(loc.store);
    try {
      return await resolveFleet(store, loc.cache, { ...mirror, damaged });
    } finally {
      store.close();
    }
  };
  // A kept fleet mirrors every object (its read model reads them all); each resolution names its own damage.
  if (loc.fleet) return loc.fleet.files(() => resolve({}, []));
  return resolve(options, loc.damaged);
}

/**
 * `build`'s value for `key` over the fleet state of `files`: kept while the fleet is unchanged in
 * a long-running process (loc.fleet), built every time otherwise.
 */
export function keptAnswer<T>(loc: Locations, files: FleetFiles, key: string, build: () => Promise<T>): Promise<T> {
  return loc.fleet ? loc.fleet.keep(files, key, build) : build();
}

/** Open the read model of a store, run `fn`, close it. */
export async function withReadModel<T>(loc: Locations, fn: (rm: ReadModel) => Promise<T>, options: { materialize?: boolean; views?: boolean } = {}): Promise<T> {
  return useReadModel(loc, await fleetFiles(loc), fn, options);
}

/** Open the read model of `files` (resolved by {@link fleetFiles}), run `fn`, close it (a kept fleet's stays open). */
export async function useReadModel<T>(loc: Locations, files: FleetFiles, fn: (rm: ReadModel) => Promise<T>, options: { materialize?: boolean; views?: boolean } = {}): Promise<T> {
  if (loc.fleet) return loc.fleet.use(files, loc.labelsFile, fn);
  // DuckDB and the views load only for the commands that use them.
  const { ReadModel } = await import("./readmodel.js");
  const rm = await ReadModel.open(files, { labelsFile: loc.labelsFile, metricsRoot: loc.root, damaged: loc.damaged, materialize: options.materialize ?? false, views: options.views ?? true });
  try {
    return await fn(rm);
  } finally {
    rm.close();
  }
}

/** A usage error. */
export function usageError(msg: string): ReaderError {
  return new ReaderError("Usage", msg);
}

/**
 * An enumerated option's value, checked: an unknown value is a Usage error listing the valid ones
 * (`--by "x": expected one of model, runtime`).
 */
export function oneOf<const T extends string>(flag: string, v: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(v)) throw usageError(`${flag} ${JSON.stringify(v)}: expected one of ${allowed.join(", ")}`);
  return v as T;
}

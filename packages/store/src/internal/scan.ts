import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { errno, ioError } from "./errors.js";
import { CURSOR_RE, parseLandedName, type Area } from "./names.js";
import { TEMP_PREFIX } from "./fsx.js";

/** A landed file found on disk, located by its name. */
export interface LandedRef {
  readonly seq: number;
  readonly name: string;
  readonly area: Area;
  readonly stream: string;
  readonly kind: string;
  readonly stamp: string;
  /** Path relative to the session directory: `<area>/<stream>/<name>`. */
  readonly rel: string;
}

/** A cursor file found on disk. */
export interface CursorRef {
  readonly area: Area;
  readonly stream: string;
  readonly kind: string;
  /** Path relative to the session directory. */
  readonly rel: string;
}

/** What a session directory holds. */
export interface SessionScan {
  readonly landed: LandedRef[];
  readonly cursors: CursorRef[];
  /** Temporary files (relative paths) a crashed writer left. */
  readonly temps: string[];
  readonly streams: number;
}

/** List a directory; [] when it does not exist. */
export function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (e) {
    if (errno(e) === "ENOENT" || errno(e) === "ENOTDIR") return [];
    throw ioError(dir, "list directory", e);
  }
}

/** List every landed file, cursor and leftover temporary file of a session directory. */
export function scanSession(sessionDir: string): SessionScan {
  const landed: LandedRef[] = [];
  const cursors: CursorRef[] = [];
  const temps: string[] = [];
  let streams = 0;
  for (const area of ["streams", "runs"] as const) {
    for (const stream of listDir(join(sessionDir, area))) {
      if (stream.startsWith(".")) continue;
      streams++;
      for (const name of listDir(join(sessionDir, area, stream))) {
        const rel = `${area}/${stream}/${name}`;
        const l = parseLandedName(name);
        if (l) {
          landed.push({ ...l, name, area, stream, rel });
          continue;
        }
        const c = CURSOR_RE.exec(name);
        if (c) cursors.push({ area, stream, kind: c[1]!, rel });
        else if (name.startsWith(TEMP_PREFIX)) temps.push(rel);
      }
    }
  }
  for (const name of listDir(sessionDir)) if (name.startsWith(TEMP_PREFIX)) temps.push(name);
  for (const name of listDir(join(sessionDir, "index"))) if (name.startsWith(TEMP_PREFIX)) temps.push(`index/${name}`);
  landed.sort((a, b) => a.seq - b.seq);
  return { landed, cursors, temps, streams };
}

/**
 * Names in a storage root that are never sessions, though they start with neither `_` nor `.`:
 * `labels/` (the operator labels, docs/spec/transcript-lake-architecture.md), `fleet/` (the default
 * local fleet store, @lake/layout's defaultStoreUrl) and `watch.lock/` (lake-collector watch's
 * directory lease, @lake/durable acquireDirLease).
 */
export const RESERVED_ROOT_NAMES: ReadonlySet<string> = new Set(["labels", "fleet", "watch.lock"]);

/** Session ids in a storage root: directories whose names start with neither `_` nor `.`, other than {@link RESERVED_ROOT_NAMES}. */
export function listSessionIds(root: string): string[] {
  let ents;
  try {
    ents = readdirSync(root, { withFileTypes: true });
  } catch (e) {
    if (errno(e) === "ENOENT") return [];
    throw ioError(root, "list storage root", e);
  }
  return ents.filter((d) => d.isDirectory() && sessionName(d.name)).map((d) => d.name).sort();
}

const sessionName = (name: string): boolean => !name.startsWith("_") && !name.startsWith(".") && !RESERVED_ROOT_NAMES.has(name);

/**
 * {@link listSessionIds}, only those `keep` keeps: the root's names listed, and only a kept one's
 * type looked at (lstat, as a listing's entry types are), not an entry object made for each of a
 * thousand sessions when `keep` keeps few.
 */
export function listSessionIdsWhere(root: string, keep: (id: string) => boolean): string[] {
  let names;
  try {
    names = readdirSync(root);
  } catch (e) {
    if (errno(e) === "ENOENT") return [];
    throw ioError(root, "list storage root", e);
  }
  const out: string[] = [];
  for (const name of names) {
    if (!sessionName(name) || !keep(name)) continue;
    try {
      if (lstatSync(join(root, name)).isDirectory()) out.push(name);
    } catch {
      // Gone since the listing (or not to be looked at): nothing to check.
    }
  }
  return out.sort();
}

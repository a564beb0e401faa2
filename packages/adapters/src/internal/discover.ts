// Read-only directory walking, globs and the shared discovery filter.
import { closeSync, openSync, readSync, readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { normalize, relative, sep } from "node:path";
import { AdaptersError } from "./errors.js";
import type { DiscoveredSource, DiscoverOptions, DiscoveryProblem, SourceRef } from "./types.js";

/**
 * Compile a glob to a RegExp: `**` any path (including `/`), `*` anything but `/`, `?` one
 * character but `/`, `{a,b}` alternatives; everything else literal.
 */
export function globToRegExp(glob: string): RegExp {
  let re = "";
  let depth = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        i++;
        if (glob[i + 1] === "/") {
          i++;
          re += "(?:.*/)?";
        } else re += ".*";
      } else re += "[^/]*";
    } else if (c === "?") re += "[^/]";
    else if (c === "{") {
      depth++;
      re += "(?:";
    } else if (c === "}" && depth > 0) {
      depth--;
      re += ")";
    } else if (c === "," && depth > 0) re += "|";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  if (depth) throw new AdaptersError("InvalidGlob", `glob ${JSON.stringify(glob)}: unclosed "{"`, { data: { glob } });
  return new RegExp(`^${re}$`);
}

/** A filter over (relative path, session id) from include and exclude globs. */
export function sourceFilter(options: Pick<DiscoverOptions, "include" | "exclude">): (rel: string, sessionId: string) => boolean {
  const inc = (options.include ?? []).map(globToRegExp);
  const exc = (options.exclude ?? []).map(globToRegExp);
  return (rel, sessionId) => {
    const hit = (r: RegExp) => r.test(rel) || r.test(sessionId);
    if (inc.length && !inc.some(hit)) return false;
    return !exc.some(hit);
  };
}

/** Default home directory. */
export function homeOf(home?: string): string {
  return home ?? homedir();
}

/** Relative path with `/` separators. */
export function relPath(root: string, path: string): string {
  const r = relative(root, path);
  return r.startsWith("..") || r === "" ? path : r.split(sep).join("/");
}

/** A directory entry found by `walk`. */
export interface WalkEntry {
  readonly path: string;
  readonly rel: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ino: number;
}

/**
 * Walk a directory tree read-only (no symlink following into loops: depth-limited), calling
 * `keep(rel)` for files; unreadable directories become problems. Listing and stat are synchronous:
 * a thousand stats through the thread pool, one after another, cost more in waiting than in work.
 */
export async function walk(root: string, keep: (rel: string) => boolean, problems: DiscoveryProblem[], maxDepth = 8): Promise<WalkEntry[]> {
  const out: WalkEntry[] = [];
  // `rel` is built from the names walked (what relPath(root, path) gives for a path under root,
  // without path.relative's resolving of both paths for every file).
  // A child's path is its directory's and its name joined by a separator: the names come from a
  // listing (no separator, never "." or ".."), and the root is normalized once, so each path is what
  // path.join would give without normalizing it again per file (a twentieth of a no-op collect).
  const top = normalize(root);
  const child = (dir: string, name: string): string => (dir === "." ? name : dir.endsWith(sep) ? dir + name : dir + sep + name);
  const visit = async (dir: string, relDir: string, depth: number): Promise<void> => {
    let names;
    try {
      names = readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (dir === top && code === "ENOENT") return;
      problems.push({ path: dir === top ? root : dir, reason: code === "EACCES" ? "permission denied" : ((e as Error).message ?? String(e)) });
      return;
    }
    names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of names) {
      const p = child(dir, d.name);
      const rel = relDir === "" ? d.name : `${relDir}/${d.name}`;
      if (d.isDirectory()) {
        if (depth < maxDepth) await visit(p, rel, depth + 1);
      } else {
        if (!keep(rel)) continue;
        if (!d.isFile() && !d.isSymbolicLink()) {
          // Never opened: a FIFO would block the reader, a socket or device is no transcript.
          problems.push({ path: p, reason: `not a regular file (${entryType(d)}): never opened`, scope: "file" });
          continue;
        }
        try {
          const s = statSync(p);
          if (s.isFile()) out.push({ path: p, rel, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino });
          else if (!s.isDirectory()) problems.push({ path: p, reason: `not a regular file (${entryType(s)}): never opened`, scope: "file" });
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          const reason = code === "ENOENT" ? "dangling symbolic link (its target does not exist)" : code === "ELOOP" ? "symbolic link loop (ELOOP)" : code === "EACCES" ? "permission denied (EACCES)" : ((e as Error).message ?? String(e));
          problems.push({ path: p, reason, scope: "file" });
        }
      }
    }
  };
  await visit(top, "", 0);
  return out;
}

function entryType(d: { isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string {
  if (d.isFIFO()) return "a FIFO";
  if (d.isSocket()) return "a socket";
  if (d.isCharacterDevice() || d.isBlockDevice()) return "a device";
  return "unknown type";
}

/**
 * Read up to `max` bytes from the start of a file (read-only), or "" when unreadable. Synchronous, as
 * the walk's listing and stats are (and without node:fs/promises, which a pass that describes every
 * file from its name never loads).
 */
export async function peek(path: string, max = 256 * 1024): Promise<string> {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const buf = Buffer.allocUnsafe(max);
    let got = 0;
    for (let r; got < max && (r = readSync(fd, buf, got, max - got, got)) > 0; ) got += r;
    return buf.toString("utf8", 0, got);
  } catch {
    return "";
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The first `"key":"value"` string value in a text (cheap peek without parsing the whole file). */
export function peekField(text: string, key: string): string | undefined {
  const m = new RegExp(`"${key}"\\s*:\\s*"([^"\\\\]{1,200})"`).exec(text);
  return m?.[1];
}

/** Shared discovery driver: walk each root, describe the kept files, filter by globs. */
export async function discoverWith(
  runtime: string,
  roots: readonly string[],
  options: DiscoverOptions,
  keep: (rel: string) => boolean,
  describe: (path: string, root: string, rel: string) => SourceRef | undefined | Promise<SourceRef | undefined>,
): Promise<{ runtime: string; roots: string[]; sources: DiscoveredSource[]; problems: DiscoveryProblem[] }> {
  const problems: DiscoveryProblem[] = [];
  const sources: DiscoveredSource[] = [];
  const filter = sourceFilter(options);
  for (const root of roots) {
    for (const e of await walk(root, keep, problems)) {
      // The walk's `rel` is relPath(root, path) (but for a name starting with "..", which relPath
      // takes for a path outside the root and gives whole): no path.relative, which resolves both
      // paths, per file.
      // A describe that needs no read answers at once: awaited only when it is a promise.
      const d = describe(e.path, root, e.rel.startsWith("..") ? relPath(root, e.path) : e.rel);
      const ref = d instanceof Promise ? await d : d;
      if (!ref || !filter(ref.rel, ref.session_id)) continue;
      // Written out, not spread: one is made per file on every pass, and in code run that rarely a
      // spread costs several times a literal (lake-collector README "Start-up").
      sources.push({ runtime: ref.runtime, path: ref.path, rel: ref.rel, session_id: ref.session_id, stream: ref.stream, kind: ref.kind, mode: ref.mode, root, size: e.size, mtimeMs: e.mtimeMs, ino: e.ino });
    }
  }
  return { runtime, roots: [...roots], sources, problems };
}

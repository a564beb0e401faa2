import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { walAddress, type SessionTriple } from "./addr.js";
import { ioError, isWalError, WalError } from "./errors.js";
import { listArchive } from "./archive.js";

/** The live WAL trees, in the order they are checked. */
export const LIVE_DIRS = ["wal", "wal-durable", "wal-ephemeral"] as const;
/** The archive directories. */
export const ARCHIVE_DIRS = ["wal-archive", "wal-archive-durable"] as const;

/** Where a session's WAL was found: the JSON `lake-reader wal find … --json` prints. */
export interface SessionLocation {
  /** The session's address. */
  readonly addr: string;
  /** live: a file in wal/, wal-durable/ or wal-ephemeral/; archive: a member of a sealed container; absent: neither. */
  readonly where: "live" | "archive" | "absent";
  /** The file holding the bytes: the live WAL or the container; null when absent. */
  readonly path: string | null;
  /** For an archive hit, the container's path relative to the state root (e.g. wal-archive/fold-17.ark); otherwise null. */
  readonly container: string | null;
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch (e) {
    if ((e as { code?: unknown }).code === "ENOENT" || (e as { code?: unknown }).code === "ENOTDIR") return false;
    throw ioError(p, "cannot stat", e);
  }
}

async function findLive(root: string, addr: string): Promise<string | null> {
  const hits: string[] = [];
  for (const d of LIVE_DIRS) {
    const p = join(root, d, `${addr}.wal`);
    if (await exists(p)) hits.push(p);
  }
  if (hits.length > 1) {
    throw new WalError("Ambiguous", `live WAL ${addr} exists in more than one live tree (${hits.join(", ")})`, { data: { file: hits[0]! } });
  }
  return hits[0] ?? null;
}

/** One archive container found in the state root. */
export interface ArchiveContainerRef {
  /** Its path relative to the state root. */
  readonly rel: string;
  /** Its absolute path. */
  readonly path: string;
  /** The numeric fold stamp (unix ms). */
  readonly stamp: bigint;
}

/**
 * List the archive containers (`fold-<stamp>.ark`) of wal-archive/ and wal-archive-durable/,
 * newest stamp first. Journals and other files are ignored.
 */
export async function listArchiveContainers(stateRoot: string): Promise<ArchiveContainerRef[]> {
  const out: ArchiveContainerRef[] = [];
  for (const d of ARCHIVE_DIRS) {
    let names: string[];
    try {
      names = await readdir(join(stateRoot, d));
    } catch (e) {
      if ((e as { code?: unknown }).code === "ENOENT") continue;
      throw ioError(join(stateRoot, d), "cannot list archive directory", e);
    }
    for (const n of names) {
      const m = /^fold-([0-9]+)\.ark$/.exec(n);
      if (m === null) continue;
      out.push({ rel: `${d}/${n}`, path: join(stateRoot, d, n), stamp: BigInt(m[1]!) });
    }
  }
  out.sort((a, b) => (a.stamp === b.stamp ? 0 : a.stamp > b.stamp ? -1 : 1));
  return out;
}

/**
 * Resolve a session live-first (spec 3.3): a file in wal/, wal-durable/ or wal-ephemeral/ (even
 * zero bytes) wins; otherwise the archive containers newest stamp first, skipping containers that
 * disappeared or are unsealed; the first holding the address wins. Two containers with one stamp
 * (reached before a hit) are refused as Ambiguous, and so are two live copies. Before answering
 * "absent" the live trees are checked once more, since a restore may have raced the scan.
 */
export async function findSession(stateRoot: string, triple: SessionTriple): Promise<SessionLocation> {
  return findAddress(stateRoot, walAddress(triple));
}

/** {@link findSession} for an address already computed. */
export async function findAddress(stateRoot: string, addr: string): Promise<SessionLocation> {
  const live = await findLive(stateRoot, addr);
  if (live !== null) return { addr, where: "live", path: live, container: null };
  const containers = await listArchiveContainers(stateRoot);
  for (let i = 0; i < containers.length; i++) {
    const c = containers[i]!;
    const twin = containers.find((o, j) => j !== i && o.stamp === c.stamp);
    if (twin !== undefined) {
      throw new WalError("Ambiguous", `two archive containers share stamp ${c.stamp} (${c.rel}, ${twin.rel})`, { data: { file: c.path } });
    }
    let listing;
    try {
      listing = await listArchive(c.path);
    } catch (e) {
      if (isWalError(e) && (e.code === "NotFound" || e.code === "Unsealed")) continue;
      throw e;
    }
    if (listing.members.some((m) => m.addr === addr)) return { addr, where: "archive", path: c.path, container: c.rel };
  }
  const again = await findLive(stateRoot, addr);
  if (again !== null) return { addr, where: "live", path: again, container: null };
  return { addr, where: "absent", path: null, container: null };
}

// broca discovery alone: live WALs and archive containers through @lake/wal/archive, without the
// WAL decoder and its record schemas (zod), so discovering (a collector pass that may find nothing
// new) does not load them. broca.ts builds the adapter on it. @lake/wal/archive itself is loaded by
// the first broca discovery or description: a pass with no broca root (most) never loads it.
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { MAIN_STREAM } from "@lake/events/record";
import { relPath, sourceFilter } from "./discover.js";
import { AdaptersError } from "./errors.js";
import type { Adapter, DiscoveredSource, DiscoverOptions, DiscoveryProblem, SourceRef } from "./types.js";

const ADAPTER = { name: "broca", version: "1.0.0" };

/** @lake/wal/archive, loaded once (a failed load is tried again by the next call). */
let walArchive: Promise<typeof import("@lake/wal/archive")> | undefined;
function loadArchive(): Promise<typeof import("@lake/wal/archive")> {
  return (walArchive ??= import("@lake/wal/archive").catch((e: unknown) => {
    walArchive = undefined;
    throw e;
  }));
}

/** The default broca state root: $BROCA_STATE_ROOT, else beside $SUBC_CONNECTION_FILE; none otherwise. */
export function defaultBrocaRoot(env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  if (env.BROCA_STATE_ROOT) return [env.BROCA_STATE_ROOT];
  if (env.SUBC_CONNECTION_FILE) return [join(dirname(env.SUBC_CONNECTION_FILE), "broca-state")];
  return [];
}

/** The broca adapter's discovery half. */
export const brocaDiscoverer: Pick<Adapter, "runtime" | "name" | "version" | "defaultRoots" | "discover" | "describe"> = {
  runtime: "broca",
  name: ADAPTER.name,
  version: ADAPTER.version,
  defaultRoots: (env = process.env) => defaultBrocaRoot(env),
  async discover(options: DiscoverOptions = {}) {
    const roots = [...(options.roots ?? defaultBrocaRoot(options.env ?? process.env))];
    const problems: DiscoveryProblem[] = [];
    const sources: DiscoveredSource[] = [];
    const filter = sourceFilter(options);
    if (roots.length === 0) return { runtime: "broca", roots, sources, problems };
    const { isWalFileName, listArchive, listArchiveContainers, LIVE_DIRS } = await loadArchive();
    for (const root of roots) {
      const live = new Set<string>();
      for (const d of LIVE_DIRS) {
        let names: string[] = [];
        try {
          names = readdirSync(join(root, d)).sort();
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "ENOENT") problems.push({ path: join(root, d), reason: (e as Error).message });
        }
        for (const n of names) {
          if (!isWalFileName(n)) continue;
          const addr = n.slice(0, 16);
          const path = join(root, d, n);
          const rel = relPath(root, path);
          live.add(addr);
          if (filter(rel, addr)) sources.push({ runtime: "broca", path, rel, root, session_id: addr, stream: MAIN_STREAM, kind: "wal", mode: "append", size: 0, mtimeMs: 0 });
        }
      }
      try {
        for (const c of await listArchiveContainers(root)) {
          try {
            for (const m of (await listArchive(c.path)).members) {
              if (live.has(m.addr)) continue; // live-first
              live.add(m.addr); // newest container first: the first holding the address wins
              const rel = `${c.rel}#${m.addr}`;
              if (filter(rel, m.addr)) sources.push({ runtime: "broca", path: c.path, rel, root, session_id: m.addr, stream: MAIN_STREAM, kind: "wal", mode: "snapshot", size: m.payloadLen, mtimeMs: 0 });
            }
          } catch (e) {
            problems.push({ path: c.path, reason: (e as Error).message });
          }
        }
      } catch (e) {
        problems.push({ path: root, reason: (e as Error).message });
      }
    }
    return { runtime: "broca", roots, sources, problems };
  },
  async describe(path: string, root?: string): Promise<SourceRef> {
    const name = path.split("/").pop() ?? path;
    const { isWalFileName } = await loadArchive();
    if (!isWalFileName(name)) throw new AdaptersError("InvalidSource", `${path}: not a WAL file name (16 hex digits + .wal)`, { data: { path } });
    return { runtime: "broca", path, rel: root ? relPath(root, path) : path, session_id: name.slice(0, 16), stream: MAIN_STREAM, kind: "wal", mode: "append" };
  }
};

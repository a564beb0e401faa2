// Restore a session into a new storage root from records kept elsewhere (the fleet store): the
// landed files are written again under their own sequence numbers, each as one landed file, then
// session.state and the index. No cursor is written: a cursor never travels.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { StoreError } from "./errors.js";
import { landNoReplace, replaceAtomic } from "./fsx.js";
import { encodeKv } from "./kv.js";
import { checkId, checkKind, formatStamp, isoMicros, landedName, nowNs, type Area } from "./names.js";
import { buildLanded } from "./landed.js";
import type { LandedRef } from "./scan.js";
import { updateIndexFor, type IndexUpdate } from "./indexer.js";

/** One landed file to restore: its header fields and its record lines (canonical record JSON, in row order). */
export interface RestoredFile {
  readonly seq: number;
  readonly area?: Area;
  readonly stream: string;
  readonly kind: string;
  readonly cursor: "append" | "snapshot";
  readonly source: string;
  readonly adapter: string;
  readonly adapterVersion: string;
  readonly firstOffset: number;
  readonly endOffset: number;
  readonly firstLine: number;
  readonly lastLine: number;
  readonly records: readonly string[];
}

/** What {@link restoreSession} wrote. */
export interface RestoreResult {
  readonly session: string;
  readonly files: number;
  readonly records: number;
  /** Each landed file written: path relative to the session directory, and the SHA-256 of the whole file. */
  readonly landed: { readonly rel: string; readonly sha256: string }[];
  readonly index: IndexUpdate;
}

/**
 * Write a session's landed files into `root` (which must not hold the session yet), under their own
 * sequence numbers and one stamp (`stamp`, default now), then session.state and the index. Throws
 * StoreError `Exists` when the session directory is there already, `InvalidArgument` for a repeated seq.
 */
export function restoreSession(root: string, sessionId: string, files: readonly RestoredFile[], options: { stamp?: string } = {}): RestoreResult {
  checkId("session id", sessionId);
  const dir = join(root, sessionId);
  if (existsSync(dir)) throw new StoreError("Exists", `${dir}: session directory already exists; not restored over`, { data: { file: dir } });
  const sorted = [...files].sort((a, b) => a.seq - b.seq);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.seq === sorted[i - 1]!.seq) throw new StoreError("InvalidArgument", `${dir}: seq ${sorted[i]!.seq} given twice`, { data: { file: dir } });
  }
  const stamp = options.stamp ?? formatStamp(nowNs());
  mkdirSync(dir, { recursive: true });
  const landed: LandedRef[] = [];
  const written: { rel: string; sha256: string }[] = [];
  let records = 0;
  for (const f of sorted) {
    checkKind(f.kind);
    checkId("stream", f.stream);
    const area = f.area ?? "streams";
    const built = buildLanded(
      {
        session: sessionId, area, stream: f.stream, kind: f.kind, cursor: f.cursor, source: f.source, seq: f.seq, collected_at: stamp,
        first_offset: f.firstOffset, end_offset: f.endOffset, first_line: f.firstLine, last_line: f.lastLine, adapter: f.adapter, adapter_version: f.adapterVersion,
      },
      f.records,
    );
    const rel = `${area}/${f.stream}`;
    const name = landedName(f.kind, stamp, f.seq);
    mkdirSync(join(dir, rel), { recursive: true });
    landNoReplace(join(dir, rel), name, built.chunks);
    landed.push({ seq: f.seq, name, area, stream: f.stream, kind: f.kind, stamp, rel: `${rel}/${name}` });
    const h = createHash("sha256");
    for (const c of built.chunks) h.update(c);
    written.push({ rel: `${rel}/${name}`, sha256: h.digest("hex") });
    records += f.records.length;
  }
  const next = (sorted[sorted.length - 1]?.seq ?? 0) + 1;
  replaceAtomic(join(dir, "session.state"), dir, encodeKv([["schema", 1], ["session", sessionId], ["next_seq", next], ["liveness", "unknown"], ["last_scan", isoMicros(nowNs())]]));
  const index = updateIndexFor({ dir, landed, opts: {} });
  return { session: sessionId, files: sorted.length, records, landed: written, index };
}

import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { StoreError } from "./errors.js";
import { landNoReplace, replaceAtomic } from "./fsx.js";
import { encodeKv } from "./kv.js";
import { acquireLock } from "./lock.js";
import { formatStamp, isoMicros, landedName, nowNs } from "./names.js";
import { encodeCursor, readCursorFile } from "./cursor.js";
import { buildLanded, readLandedPath, type LandedHeader } from "./landed.js";
import { listSessionIds, scanSession } from "./scan.js";
import { updateIndexFor, type IndexUpdate } from "./indexer.js";
import { DEFAULT_MAX_DELTA_BYTES } from "./contracts.js";

/** Options of {@link repack}. */
export interface RepackOptions {
  /** The new budget (max_delta_bytes) for each file's records; default 2 MiB. */
  readonly maxDeltaBytes?: number;
  /** How long to wait for each source session's lock (ms, default 0). */
  readonly waitMs?: number;
}

/** What {@link repack} did. */
export interface RepackResult {
  readonly sessions: number;
  /** Files read from the source root and written to the destination. */
  readonly filesIn: number;
  readonly filesOut: number;
  readonly records: number;
  readonly cursors: number;
  readonly index: Record<string, IndexUpdate>;
}

interface Row {
  text: string;
  offset: number | undefined;
  line: number | undefined;
}

interface Piece {
  key: number; // order key: first original seq * 1e6 + part
  header: Omit<LandedHeader, "records" | "body_sha256" | "format" | "schema" | "seq" | "collected_at">;
  rows: string[];
  origSeqs: number[];
}

/**
 * Re-cut every landed file of `root` under a new budget into a new storage root `dest`, keeping
 * each record's bytes and order, and carry the cursors over (their last_seq mapped to the new
 * files). A file is split only between records of different source lines whose records carry
 * source_offset and source_line; contiguous files of one source are merged up to the budget.
 * Snapshot versions stay one file each. Sequence numbers are issued afresh in the original order,
 * and every file of one session carries the repack's stamp. `dest` must not exist or be empty.
 */
export async function repack(root: string, dest: string, options: RepackOptions = {}): Promise<RepackResult> {
  const budget = options.maxDeltaBytes ?? DEFAULT_MAX_DELTA_BYTES;
  if (!Number.isInteger(budget) || budget <= 0) throw new StoreError("InvalidArgument", `maxDeltaBytes must be a positive integer, got ${budget}`);
  if (existsSync(dest) && readdirSync(dest).length > 0) throw new StoreError("Exists", `${dest}: repack destination is not empty`, { data: { file: dest } });
  mkdirSync(dest, { recursive: true });
  let filesIn = 0;
  let filesOut = 0;
  let records = 0;
  let cursors = 0;
  const index: Record<string, IndexUpdate> = {};
  const ids = listSessionIds(root);
  for (const id of ids) {
    const srcDir = join(root, id);
    const lock = await acquireLock(srcDir, { waitMs: options.waitMs ?? 0 });
    try {
      const scan = scanSession(srcDir);
      const groups = new Map<string, Array<{ seq: number; header: LandedHeader; rows: string[] }>>();
      for (const ref of scan.landed) {
        const f = readLandedPath(join(srcDir, ref.rel));
        filesIn++;
        const h = f.header;
        const key = `${h.area}/${h.stream}/${h.kind}/${h.cursor}`;
        let g = groups.get(key);
        if (!g) groups.set(key, (g = []));
        g.push({ seq: ref.seq, header: h, rows: f.rows });
      }
      const pieces: Piece[] = [];
      for (const g of groups.values()) {
        let cur: Piece | undefined;
        let curBytes = 0;
        let part = 0;
        const close = () => {
          if (cur) pieces.push(cur);
          cur = undefined;
          curBytes = 0;
        };
        for (const f of g) {
          const h = f.header;
          const rows: Row[] = f.rows.map((text) => {
            let offset: number | undefined;
            let line: number | undefined;
            try {
              const v = JSON.parse(text) as { source_offset?: unknown; source_line?: unknown };
              if (typeof v.source_offset === "number") offset = v.source_offset;
              if (typeof v.source_line === "number") line = v.source_line;
            } catch {
              /* kept as is */
            }
            return { text, offset, line };
          });
          const base = { session: h.session, area: h.area, stream: h.stream, kind: h.kind, cursor: h.cursor, source: h.source, adapter: h.adapter, adapter_version: h.adapter_version };
          const mergeable =
            h.cursor === "append" && cur !== undefined && cur.header.source === h.source && cur.header.end_offset === h.first_offset && cur.header.adapter === h.adapter &&
            cur.header.adapter_version === h.adapter_version;
          if (!mergeable) close();
          const start = (first_offset: number, first_line: number) => {
            cur = {
              key: f.seq * 1e6 + part++,
              header: { ...base, first_offset, end_offset: first_offset, first_line, last_line: first_line - 1, ...(h.content_sha256 !== undefined ? { content_sha256: h.content_sha256 } : {}) },
              rows: [],
              origSeqs: [],
            };
            curBytes = 0;
          };
          if (!cur) start(h.first_offset, h.first_line);
          if (h.cursor === "append") {
            for (let i = 0; i < rows.length; i++) {
              const r = rows[i]!;
              const prev = i > 0 ? rows[i - 1] : undefined;
              const splittable = i === 0 || (r.offset !== undefined && r.line !== undefined && prev?.offset !== undefined && r.offset > prev.offset && r.offset > h.first_offset && (prev.line === undefined || r.line > prev.line));
              if (cur!.rows.length > 0 && curBytes + r.text.length + 1 > budget && splittable) {
                const at = i === 0 ? { o: h.first_offset, l: h.first_line } : { o: r.offset!, l: r.line! };
                cur!.header = { ...cur!.header, end_offset: at.o, last_line: at.l - 1 };
                close();
                start(at.o, at.l);
              }
              cur!.rows.push(r.text);
              if (!cur!.origSeqs.includes(f.seq)) cur!.origSeqs.push(f.seq);
              curBytes += Buffer.byteLength(r.text) + 1;
            }
          } else {
            cur!.rows.push(...f.rows);
          }
          if (!cur!.origSeqs.includes(f.seq)) cur!.origSeqs.push(f.seq);
          cur!.header = { ...cur!.header, end_offset: h.end_offset, last_line: h.last_line };
          if (h.cursor === "snapshot") close();
        }
        close();
      }
      pieces.sort((a, b) => a.key - b.key);
      const stamp = formatStamp(nowNs());
      const outDir = join(dest, id);
      mkdirSync(outDir, { recursive: true });
      const newSeqOf = new Map<number, number>();
      const landed: ReturnType<typeof scanSession>["landed"] = [];
      let seq = 1;
      for (const p of pieces) {
        const n = seq++;
        const built = buildLanded({ ...p.header, seq: n, collected_at: stamp }, p.rows);
        const dirRel = `${p.header.area}/${p.header.stream}`;
        const name = landedName(p.header.kind, stamp, n);
        mkdirSync(join(outDir, dirRel), { recursive: true });
        landNoReplace(join(outDir, dirRel), name, built.chunks);
        landed.push({ seq: n, name, area: p.header.area, stream: p.header.stream, kind: p.header.kind, stamp, rel: `${dirRel}/${name}` });
        for (const o of p.origSeqs) newSeqOf.set(o, Math.max(newSeqOf.get(o) ?? 0, n));
        filesOut++;
        records += p.rows.length;
      }
      for (const c of scan.cursors) {
        const cur = readCursorFile(join(srcDir, c.rel));
        if (!cur) continue;
        const moved = { ...cur, last_seq: newSeqOf.get(cur.last_seq) ?? 0, updated_at: isoMicros(nowNs()) };
        const d = join(outDir, c.area, c.stream);
        mkdirSync(d, { recursive: true });
        replaceAtomic(join(d, `${c.kind}.cursor`), d, encodeCursor(moved));
        cursors++;
      }
      replaceAtomic(join(outDir, "session.state"), outDir, encodeKv([["schema", 1], ["session", id], ["next_seq", seq], ["liveness", "unknown"], ["last_scan", isoMicros(nowNs())]]));
      index[id] = updateIndexFor({ dir: outDir, landed, opts: {} });
    } finally {
      lock.release();
    }
  }
  return { sessions: ids.length, filesIn, filesOut, records, cursors, index };
}

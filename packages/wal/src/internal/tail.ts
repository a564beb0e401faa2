// The writer's tail cache: where a WAL ended as its writer left it, so the next writer of the file
// need not decode it whole to append. A cache: absent, unreadable or not matching the file means
// "decode it".
import { readFileSync, renameSync, writeFileSync, type BigIntStats } from "node:fs";

/** The cache's `format`. */
export const WAL_TAIL_FORMAT = "lake.wal-tail";
/** The cache's `schema`. */
export const WAL_TAIL_SCHEMA = 1;

/** Where a WAL ended as its writer left it. */
export interface WalTail {
  /** The WAL file as its writer left it: `<ino>:<size>:<mtime ns>:<ctime ns>` ({@link walFileStamp}). */
  readonly stat: string;
  /** The last record's sequence number (0: none). */
  readonly lastSeq: number;
  /** The file's lineage id (UUID form). */
  readonly lineageId: string;
}

/** A WAL file's identity and state as a stat shows them; any write, truncation or replacement changes it. */
export function walFileStamp(st: BigIntStats): string {
  return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

const STAMP = /^\d+:\d+:\d+:\d+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Encode a tail cache: one JSON object, one trailing newline. */
export function encodeWalTail(t: WalTail): string {
  return JSON.stringify({ format: WAL_TAIL_FORMAT, schema: WAL_TAIL_SCHEMA, stat: t.stat, last_seq: t.lastSeq, lineage: t.lineageId }) + "\n";
}

/** Decode a tail cache; undefined for anything that is not one (a cache is never an error). */
export function decodeWalTail(text: string): WalTail | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (o.format !== WAL_TAIL_FORMAT || o.schema !== WAL_TAIL_SCHEMA) return undefined;
  if (typeof o.stat !== "string" || !STAMP.test(o.stat) || typeof o.lineage !== "string" || !UUID.test(o.lineage)) return undefined;
  if (typeof o.last_seq !== "number" || !Number.isSafeInteger(o.last_seq) || o.last_seq < 0) return undefined;
  return { stat: o.stat, lastSeq: o.last_seq, lineageId: o.lineage };
}

/** Read a tail cache; undefined when there is none or it does not decode. */
export function readWalTail(path: string): WalTail | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  return decodeWalTail(text);
}

/** Replace a tail cache (temp file and rename; not synced: a cache that is lost or stale only costs a decode). */
export function writeWalTail(path: string, t: WalTail): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, encodeWalTail(t), { mode: 0o600 });
  renameSync(tmp, path);
}

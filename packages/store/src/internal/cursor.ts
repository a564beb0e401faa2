import { readFileSync } from "node:fs";
import { StoreError, errno, ioError } from "./errors.js";
import { decodeKv, encodeKv, kvInt } from "./kv.js";

/** Cursor schema version. */
export const CURSOR_SCHEMA = 1;

/** A cursor's state: `active` moves; `conflict` stays until a person acts; `source_gone` when the file went away. */
export type CursorState = "active" | "conflict" | "source_gone";

/** Fields both cursor kinds share. */
interface CursorBase {
  readonly schema: number;
  /** The source, as the adapter names it (path relative to its source root). */
  readonly source: string;
  /** Device of the source when last saved. Saved, never read back. */
  readonly dev: number;
  /** Inode of the source when last saved. */
  readonly ino: number;
  /** Source size when last saved. */
  readonly size: number;
  /** Source mtime (whole seconds) when last saved. Informational: a change is never judged by mtime. */
  readonly mtime: number;
  /** Sequence of the last file landed from this source (0 when none). */
  readonly last_seq: number;
  /** When the cursor was saved, ISO 8601 UTC with microseconds. */
  readonly updated_at: string;
  readonly state: CursorState;
  /** For a cursor in conflict: why, as the pass that found it named it (one line). */
  readonly conflict_reason?: string;
}

/** Position cursor of a source that only grows. */
export interface AppendCursor extends CursorBase {
  readonly kind: "append";
  /** Bytes consumed: every landed record ends before it. */
  readonly offset: number;
  /** Complete source lines consumed. */
  readonly ord: number;
  /** record_id of the last landed record that has one. */
  readonly last_uuid?: string;
  /** SHA-256 hex of the (up to) 1 MiB of source before offset. Absent on cursors that cannot be checked. */
  readonly tail_sha256?: string;
  /** The converter's cross-window state at offset (opaque one-line text), so a pass reads only new bytes. */
  readonly adapter_state?: string;
}

/** Digest cursor of a source that is rewritten whole. */
export interface SnapshotCursor extends CursorBase {
  readonly kind: "snapshot";
  /** SHA-256 hex of the content with trailing newlines trimmed, as last landed. */
  readonly content_sha256: string;
}

/** Either cursor. */
export type Cursor = AppendCursor | SnapshotCursor;

/** Encode a cursor in its key/value text, keys in the spec's order. */
export function encodeCursor(c: Cursor): string {
  if (c.kind === "append") {
    return encodeKv([
      ["schema", c.schema], ["kind", c.kind], ["source", c.source], ["dev", c.dev], ["ino", c.ino], ["offset", c.offset], ["ord", c.ord],
      ["last_uuid", c.last_uuid], ["tail_sha256", c.tail_sha256], ["size", c.size], ["mtime", c.mtime], ["last_seq", c.last_seq],
      ["updated_at", c.updated_at], ["state", c.state], ["conflict_reason", c.conflict_reason], ["adapter_state", c.adapter_state],
    ]);
  }
  return encodeKv([
    ["schema", c.schema], ["kind", c.kind], ["source", c.source], ["dev", c.dev], ["ino", c.ino], ["content_sha256", c.content_sha256],
    ["size", c.size], ["mtime", c.mtime], ["last_seq", c.last_seq], ["updated_at", c.updated_at], ["state", c.state], ["conflict_reason", c.conflict_reason],
  ]);
}

/** Decode a cursor's text; throws `Corrupt` naming `file`. */
export function decodeCursor(text: string, file: string): Cursor {
  const m = decodeKv(text, file);
  const schema = kvInt(m, "schema", file)!;
  if (schema !== CURSOR_SCHEMA) throw new StoreError("Corrupt", `${file}: cursor schema ${schema} is not supported`, { data: { file } });
  const state = m.get("state");
  if (state !== "active" && state !== "conflict" && state !== "source_gone") throw new StoreError("Corrupt", `${file}: state ${JSON.stringify(state)} is not active, conflict or source_gone`, { data: { file } });
  const source = m.get("source");
  if (!source) throw new StoreError("Corrupt", `${file}: missing source`, { data: { file } });
  const base = {
    schema, source, dev: kvInt(m, "dev", file, true) ?? 0, ino: kvInt(m, "ino", file, true) ?? 0, size: kvInt(m, "size", file, true) ?? 0,
    mtime: kvInt(m, "mtime", file, true) ?? 0, last_seq: kvInt(m, "last_seq", file, true) ?? 0, updated_at: m.get("updated_at") ?? "", state,
  } as { -readonly [K in keyof CursorBase]: CursorBase[K] };
  const why = m.get("conflict_reason");
  if (why) base.conflict_reason = why;
  const kind = m.get("kind");
  if (kind === "append") {
    const c: { -readonly [K in keyof AppendCursor]: AppendCursor[K] } = { ...base, kind, offset: kvInt(m, "offset", file)!, ord: kvInt(m, "ord", file, true) ?? 0 };
    const lu = m.get("last_uuid");
    if (lu) c.last_uuid = lu;
    const as = m.get("adapter_state");
    if (as) c.adapter_state = as;
    const t = m.get("tail_sha256");
    if (t) {
      if (!/^[0-9a-f]{64}$/.test(t)) throw new StoreError("Corrupt", `${file}: tail_sha256 is not a SHA-256 hex digest`, { data: { file } });
      c.tail_sha256 = t;
    }
    return c;
  }
  if (kind === "snapshot") {
    const cs = m.get("content_sha256");
    if (cs === undefined) throw new StoreError("Corrupt", `${file}: missing content_sha256`, { data: { file } });
    return { ...base, kind, content_sha256: cs };
  }
  throw new StoreError("Corrupt", `${file}: cursor kind ${JSON.stringify(kind)} is not append or snapshot`, { data: { file } });
}

/** Read a cursor file; undefined when it does not exist. */
export function readCursorFile(path: string): Cursor | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if (errno(e) === "ENOENT" || errno(e) === "ENOTDIR") return undefined;
    throw ioError(path, "read cursor", e);
  }
  return decodeCursor(text, path);
}

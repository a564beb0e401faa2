// index/index.state: a session index's watermark and sizes (README "Index format"). Its own module
// so a pass that only asks whether an index moved (@lake/store/pass: push's and collect's checks)
// loads no index writer.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { errno, ioError } from "./errors.js";
import { fileStamp } from "./fsx.js";
import { decodeKv, encodeKv, kvInt } from "./kv.js";
import { checkId, isoMicros, nowNs } from "./names.js";

/** Index schema. A different schema on disk is discarded and rebuilt, never migrated. */
export const INDEX_SCHEMA = 2;

/** index.state. */
export interface IndexState {
  schema: number;
  indexed_seq: number;
  files: number;
  entries: number;
  blocks: number;
  strings: number;
  bytes: number;
}

export function readState(path: string): IndexState | undefined {
  return readStateText(path)?.state;
}

/** index.state with its exact text (the text names one write: it carries updated_at), or undefined when absent or unreadable. */
export function readStateText(path: string): { state: IndexState; text: string } | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if (errno(e) === "ENOENT") return undefined;
    throw ioError(path, "read index state", e);
  }
  const state = parseState(text, path);
  return state ? { state, text } : undefined;
}

function parseState(text: string, path: string): IndexState | undefined {
  try {
    const m = decodeKv(text, path);
    return {
      schema: kvInt(m, "schema", path)!, indexed_seq: kvInt(m, "indexed_seq", path)!, files: kvInt(m, "files", path, true) ?? 0, entries: kvInt(m, "entries", path)!,
      blocks: kvInt(m, "blocks", path)!, strings: kvInt(m, "strings", path)!, bytes: kvInt(m, "bytes", path)!,
    };
  } catch {
    return undefined; // unreadable state: the index is rebuilt
  }
}

export function stateText(s: IndexState): string {
  return encodeKv([
    ["schema", s.schema], ["indexed_seq", s.indexed_seq], ["files", s.files], ["entries", s.entries], ["blocks", s.blocks], ["strings", s.strings],
    ["bytes", s.bytes], ["updated_at", isoMicros(nowNs())],
  ]);
}

/**
 * The index's watermark: `indexed_seq` of `<root>/<id>/index/index.state`, or undefined when there is
 * none of this schema (absent, or another schema; `readIndex` then derives the index in memory). Reads
 * index.state only: a consumer that recorded the watermark of the index it last read (push) knows
 * nothing new was indexed since while it is unchanged. Throws `Corrupt` or `Io`.
 */
export function indexedSeq(root: string, sessionId: string): number | undefined {
  checkId("session id", sessionId);
  const state = readState(join(root, sessionId, "index", "index.state"));
  return state && state.schema === INDEX_SCHEMA ? state.indexed_seq : undefined;
}

/**
 * index.state as a stat shows it now (`<ino>:<size>:<mtime ns>:<ctime ns>`), or undefined when it
 * cannot be stat'ed. index.state is only ever replaced by rename, so while the stamp a consumer
 * took before reading {@link indexedSeq} is unchanged, so is the watermark: push checks it instead
 * of reading every session's index.state.
 */
export function indexStamp(root: string, sessionId: string): string | undefined {
  checkId("session id", sessionId);
  return fileStamp(join(root, sessionId, "index", "index.state"));
}

/**
 * The records of a window, encoded as they land: each record's landed line (the one encoder of the
 * line format: `JSON.stringify` of the record, then `\n`) and the facts the index keeps of it. A
 * pass encodes here, and so does a convert worker of the caller's (`@lake/store/records`): the pass
 * then lands the bytes as they come, without parsing or serialising a record again.
 */
import type { CanonicalRecord } from "@lake/events";
import { StoreError } from "./errors.js";
import { BodyWriter } from "./landed.js";
import { splitLines } from "./window.js";
import type { Area } from "./names.js";
import type { Convert, ConvertContext, MaskUnknown, SourceLine } from "./contracts.js";
import type { PendingEntry } from "./indexer.js";

/** The optional string fields of an index entry, in their on-disk order. */
export const ENTRY_STRING_FIELDS = ["record_id", "parent_id", "tool_call_id", "child_stream", "vendor_type", "message_id", "request_id", "usage_key", "tool_name"] as const;

const isOwnEnumerable = Object.prototype.propertyIsEnumerable;
const ENTRY_KEYS = ["kind", ...ENTRY_STRING_FIELDS, "is_sidechain", "replayed", "is_error"] as const;

/**
 * What the index keeps of one record: its kind, identifiers and roles, as JSON.parse of its landed
 * line gives them back (see {@link recordFacts}).
 */
export type RecordFacts = { readonly kind: string } & { readonly [K in (typeof ENTRY_STRING_FIELDS)[number]]?: string } & {
  readonly is_sidechain?: true;
  readonly replayed?: true;
  readonly is_error?: true;
};

/**
 * The facts of one record as written: `r` is the object that was serialised. Fields are read as
 * JSON.parse would give them back; an object with its own toJSON (or a field holding an object)
 * goes through a JSON round trip so the result is exactly that.
 */
export function recordFacts(r: object): RecordFacts {
  let o = r as Record<string, unknown>;
  let round = typeof o.toJSON === "function";
  if (!round) {
    for (const k of ENTRY_KEYS) {
      const v = o[k];
      if (v === undefined) continue;
      if ((typeof v === "object" && v !== null) || !isOwnEnumerable.call(o, k)) {
        round = true;
        break;
      }
    }
  }
  if (round) {
    const v: unknown = JSON.parse(JSON.stringify(r));
    o = typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {};
  }
  const e: Record<string, unknown> = { kind: typeof o.kind === "string" ? o.kind : "" };
  for (const k of ENTRY_STRING_FIELDS) if (typeof o[k] === "string") e[k] = o[k];
  if (o.is_sidechain === true) e.is_sidechain = true;
  if (o.replayed === true) e.replayed = true;
  if (o.is_error === true) e.is_error = true;
  return e as RecordFacts;
}

/** The index entry of the record at `row` of a landed file, from its facts. */
export function factsEntry(f: RecordFacts, file: { seq: number; area: Area; stream: string; kind: string }, row: number): PendingEntry {
  const e: Record<string, unknown> = { seq: file.seq, row, area: file.area, stream: file.stream, kind: f.kind, file_kind: file.kind };
  for (const k of ENTRY_STRING_FIELDS) if (f[k] !== undefined) e[k] = f[k];
  if (f.is_sidechain) e.is_sidechain = true;
  if (f.replayed) e.replayed = true;
  if (f.is_error) e.is_error = true;
  return e as unknown as PendingEntry;
}

/** Records encoded for landing: their lines and, for each, its facts. */
export interface EncodedRecords {
  /** The record lines, each ending in `\n`, in order (one landed body when joined). */
  readonly body: readonly Uint8Array[];
  /** Number of record lines (= facts.length). */
  readonly records: number;
  readonly facts: readonly RecordFacts[];
  /** The last record id among them. */
  readonly lastId?: string;
}

/** The records of a window of lines, encoded: with the number of source lines the window holds. */
export interface EncodedWindow extends EncodedRecords {
  /** Source lines of the window (a torn line split in two is still one). */
  readonly sourceLines: number;
}

const utf8Fatal = new TextDecoder("utf-8", { fatal: true });

/** The unknown record of a line that is not JSON: its text (masked), or its bytes in base64. */
async function unknownRecord(l: SourceLine, ctx: ConvertContext, maskUnknown: MaskUnknown | undefined): Promise<CanonicalRecord> {
  // Loaded on first use: a pass that meets no invalid line never loads the record schema.
  const { canonicalize } = await import("@lake/events");
  const src = ctx.source;
  let text: string;
  let attrs: string | undefined;
  try {
    text = utf8Fatal.decode(l.bytes);
  } catch {
    text = l.bytes.toString("base64");
    attrs = JSON.stringify({ raw_encoding: "base64" });
  }
  const masked = maskUnknown ? maskUnknown(text, ctx) : { text, rules: [] };
  return canonicalize(
    {
      runtime: src.runtime, session_id: ctx.sessionId, stream: src.stream, kind: "unknown", raw: masked.text,
      ...(attrs ? { attrs } : {}), source_path: src.source, source_offset: l.offset, source_line: l.line, adapter: src.adapter, adapter_version: src.adapterVersion,
    },
    masked.rules,
  );
}

/**
 * Convert a window's lines and encode the records, once, straight into a landed body: each run of
 * valid lines through `convert`, each invalid line as an unknown record (its text masked by
 * `maskUnknown`).
 */
export async function encodeLines(lines: readonly SourceLine[], invalid: readonly boolean[], ctx: ConvertContext, convert: Convert, maskUnknown: MaskUnknown | undefined, sizeHint: number): Promise<EncodedRecords> {
  const path = ctx.source.path;
  const body = new BodyWriter(sizeHint);
  const facts: RecordFacts[] = [];
  let lastId: string | undefined;
  const add = (r: object): void => {
    body.add(JSON.stringify(r) ?? "");
    facts.push(recordFacts(r));
  };
  let i = 0;
  while (i < lines.length) {
    if (invalid[i]) {
      add(await unknownRecord(lines[i]!, ctx, maskUnknown));
      i++;
      continue;
    }
    let j = i;
    while (j < lines.length && !invalid[j]) j++;
    const out = await convert(lines.slice(i, j), ctx);
    if (!Array.isArray(out)) throw new StoreError("InvalidArgument", `${path}: convert did not return an array`, { data: { file: path } });
    for (const r of out as readonly CanonicalRecord[]) {
      if (typeof r !== "object" || r === null) throw new StoreError("InvalidArgument", `${path}: convert returned a non-object record`, { data: { file: path } });
      add(r);
      if (typeof r.record_id === "string") lastId = r.record_id;
    }
    i = j;
  }
  return { body: [body.bytes()], records: body.records, facts, ...(lastId !== undefined ? { lastId } : {}) };
}

/**
 * Encode the records of `text`, complete lines of a line-based source without the last line's
 * newline (a window as the pass reads it, or a piece of one {@link windowPieces} cut): the same
 * split, conversion and encoding the pass does itself. `at` places the first line: its byte offset
 * in the source and the number of source lines before it.
 */
export async function encodeWindow(text: Buffer, at: { readonly offset: number; readonly ord: number }, ctx: ConvertContext, convert: Convert, maskUnknown?: MaskUnknown): Promise<EncodedWindow> {
  const { lines, invalid, sourceLines } = splitLines(text, at.offset, at.ord);
  const enc = await encodeLines(lines, invalid, ctx, convert, maskUnknown, text.length + (text.length >> 1) + 4096);
  return { ...enc, sourceLines: sourceLines ?? lines.length };
}

/** One piece of a window: its bytes `[start, end)` of the window's text, and where its first line is. */
export interface WindowPiece {
  readonly start: number;
  readonly end: number;
  /** Byte offset of its first line in the source. */
  readonly offset: number;
  /** Source lines before its first line. */
  readonly ord: number;
}

/**
 * Cut a window's text (as {@link encodeWindow} takes it) into pieces of about `target` bytes at
 * line ends, so that encoding each piece on its own and joining the results ({@link joinEncoded})
 * gives what encoding the whole does: each cut drops one newline, after a line that is not empty.
 */
export function windowPieces(text: Uint8Array, at: { readonly offset: number; readonly ord: number }, target: number): WindowPiece[] {
  const out: WindowPiece[] = [];
  let start = 0;
  let ord = at.ord;
  const buf = Buffer.from(text.buffer, text.byteOffset, text.byteLength);
  while (start < buf.length) {
    let end = buf.length;
    let p = start + Math.max(1, target) - 1;
    while (p < buf.length) {
      const nl = buf.indexOf(10, p);
      if (nl < 0) break;
      // A cut needs a non-empty line before it: a piece never ends in an empty line, which a
      // split would drop where the whole window keeps it.
      if (nl > start && buf[nl - 1] !== 10) {
        end = nl;
        break;
      }
      p = nl + 1;
    }
    let lines = 1;
    for (let q = buf.indexOf(10, start); q >= 0 && q < end; q = buf.indexOf(10, q + 1)) lines++;
    out.push({ start, end, offset: at.offset + start, ord });
    ord += lines;
    start = end + 1;
  }
  return out;
}

/** Join the encoded pieces of a window, in order. */
export function joinEncoded(parts: readonly EncodedWindow[]): EncodedWindow {
  const body: Uint8Array[] = [];
  const facts: RecordFacts[] = [];
  let records = 0;
  let sourceLines = 0;
  let lastId: string | undefined;
  for (const p of parts) {
    for (const b of p.body) body.push(b);
    for (const f of p.facts) facts.push(f);
    records += p.records;
    sourceLines += p.sourceLines;
    if (p.lastId !== undefined) lastId = p.lastId;
  }
  return { body, records, facts, sourceLines, ...(lastId !== undefined ? { lastId } : {}) };
}

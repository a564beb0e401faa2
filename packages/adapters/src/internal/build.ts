// Building raw records: provenance, deterministic ids, usage normalisation, safe JSON access.
import { createRequire } from "node:module";
import type { RawRecord, Usage } from "@lake/events";
import { isIsoMillis } from "@lake/events/usage";
import type { SourceLine, SourceRef } from "./types.js";

const decoder = new TextDecoder("utf-8", { fatal: false });

type NodeCrypto = typeof import("node:crypto");
let crypto: NodeCrypto | undefined;

/** SHA-256 of a text as hex, node:crypto loaded by the first call (discovery, which every pass runs, hashes nothing). */
function sha256Hex(text: string): string {
  return (crypto ??= createRequire(import.meta.url)("node:crypto") as NodeCrypto).createHash("sha256").update(text).digest("hex");
}

/** The text of a line without its trailing CR. */
export function lineText(line: SourceLine): string {
  const b = line.bytes;
  const s = typeof b === "string" ? b : Buffer.isBuffer(b) ? b.toString("utf8") : decoder.decode(b);
  return s.endsWith("\r") ? s.slice(0, -1) : s;
}

/**
 * A line's text (without a trailing CR) and its JSON value (undefined: not JSON): what the caller
 * decoded and parsed when it did (the value of a line with or without its CR is the same), else
 * decoded and parsed here.
 */
export function lineJson(line: SourceLine): { text: string; value: unknown } {
  const t = line.text;
  if (t !== undefined && !t.endsWith("\r")) return { text: t, value: line.value };
  const text = lineText(line);
  return { text, value: t !== undefined ? line.value : parseJson(text) };
}

/** A deterministic id for content without a vendor id: identical for the same text in any file. */
export function textId(text: string): string {
  return "h" + sha256Hex(text).slice(0, 32);
}

/** Short content digest (for per-version ids of re-appended messages). */
export function shortHash(text: string): string {
  return sha256Hex(text).slice(0, 12);
}

/** A plain JSON object or undefined. */
export type Obj = Record<string, unknown>;
export function obj(v: unknown): Obj | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
}
export function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}
export function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}
export function bool(v: unknown): boolean | undefined {
  return typeof v === "boolean" ? v : undefined;
}
/** A token count: a non-negative integer, else undefined (absent, never zero). */
export function count(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined;
}

/** Parse a JSON line; undefined when it is not valid JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** ISO 8601 UTC with milliseconds, from an ISO string or epoch ms/s; undefined when not a time. */
export function isoTs(v: unknown): string | undefined {
  // Vendors mostly write the form itself: a valid one is its own answer (no Date to make and print).
  if (typeof v === "string" && isIsoMillis(v)) return v;
  let d: Date | undefined;
  if (typeof v === "string" && v.length >= 10) d = new Date(v);
  else if (typeof v === "number" && Number.isFinite(v)) d = new Date(v < 1e11 ? v * 1000 : v);
  if (!d || Number.isNaN(d.getTime())) return undefined;
  return d.toISOString();
}

/** JSON text of a value for `tool_input`/`attrs`; a string that already holds JSON is kept as it is. */
export function jsonText(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v === "string") {
    const t = v.trim();
    if ((t.startsWith("{") || t.startsWith("[")) && parseJson(t) !== undefined) return t;
  }
  return JSON.stringify(v);
}

/** `attrs` JSON text from an object, dropping undefined values; undefined when nothing is left. */
export function attrsText(a: Obj): string | undefined {
  // JSON.stringify drops undefined members itself: the object is written as it is when any is left.
  for (const k in a) if (a[k] !== undefined) return JSON.stringify(a);
  return undefined;
}

/** Usage with absent keys left out; undefined when no key is reported. */
export function usageOf(u: Partial<Record<keyof Usage, number | undefined>>): Usage | undefined {
  const out: Usage = {};
  let any = false;
  for (const k in u) {
    const v = u[k as keyof Usage];
    if (v === undefined) continue;
    out[k as keyof Usage] = v;
    any = true;
  }
  return any ? out : undefined;
}

const own = Object.prototype.hasOwnProperty;

type Rec = Record<string, unknown>;

/**
 * A named store for each field a record may have (RawRecord's, in its order). V8 turns an object
 * into a slow dictionary once keyed stores (`r[k] = v`) have added more than a dozen properties past
 * those it holds in the object itself (a record begun as a three-field literal became one at its
 * 19th field), and a record has up to two dozen: a named store (`r.text = v`) keeps it a fast object,
 * which contentHash reads and JSON.stringify writes 15-20 % faster, and which is itself made in
 * half the time. A key not listed here (none is, today) is set by a keyed store. Exported for the
 * test that holds it to @lake/events' record schema, field for field.
 */
export const SETTERS: ReadonlyMap<string, (r: Rec, v: unknown) => void> = new Map<string, (r: Rec, v: unknown) => void>([
  ["runtime", (r, v) => { r.runtime = v; }],
  ["session_id", (r, v) => { r.session_id = v; }],
  ["stream", (r, v) => { r.stream = v; }],
  ["record_id", (r, v) => { r.record_id = v; }],
  ["parent_id", (r, v) => { r.parent_id = v; }],
  ["ts", (r, v) => { r.ts = v; }],
  ["kind", (r, v) => { r.kind = v; }],
  ["vendor_type", (r, v) => { r.vendor_type = v; }],
  ["role", (r, v) => { r.role = v; }],
  ["model", (r, v) => { r.model = v; }],
  ["text", (r, v) => { r.text = v; }],
  ["tool_name", (r, v) => { r.tool_name = v; }],
  ["tool_call_id", (r, v) => { r.tool_call_id = v; }],
  ["tool_input", (r, v) => { r.tool_input = v; }],
  ["is_error", (r, v) => { r.is_error = v; }],
  ["exit_code", (r, v) => { r.exit_code = v; }],
  ["usage", (r, v) => { r.usage = v; }],
  ["usage_mode", (r, v) => { r.usage_mode = v; }],
  ["usage_key", (r, v) => { r.usage_key = v; }],
  ["cost_usd", (r, v) => { r.cost_usd = v; }],
  ["is_sidechain", (r, v) => { r.is_sidechain = v; }],
  ["replayed", (r, v) => { r.replayed = v; }],
  ["message_id", (r, v) => { r.message_id = v; }],
  ["request_id", (r, v) => { r.request_id = v; }],
  ["child_stream", (r, v) => { r.child_stream = v; }],
  ["cwd", (r, v) => { r.cwd = v; }],
  ["repo", (r, v) => { r.repo = v; }],
  ["branch", (r, v) => { r.branch = v; }],
  ["attrs", (r, v) => { r.attrs = v; }],
  ["raw", (r, v) => { r.raw = v; }],
  ["source_path", (r, v) => { r.source_path = v; }],
  ["source_offset", (r, v) => { r.source_offset = v; }],
  ["source_line", (r, v) => { r.source_line = v; }],
  ["adapter", (r, v) => { r.adapter = v; }],
  ["adapter_version", (r, v) => { r.adapter_version = v; }],
]);

/** `r[k] = v`, by a named store for a record field (see SETTERS). */
function put(r: Rec, k: string, v: unknown): void {
  const set = SETTERS.get(k);
  if (set !== undefined) set(r, v);
  else r[k] = v;
}

/**
 * Set on `r` what `{ ...parts[0], ...parts[1], … }` holds, in that order, but the keys whose value
 * is undefined: each key where it first appears, with the value of the last part that has it.
 */
function mergeInto(r: Rec, parts: readonly Rec[]): void {
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    for (const k in p) {
      let earlier = false;
      for (let j = 0; j < i && !earlier; j++) earlier = own.call(parts[j], k);
      if (earlier) continue;
      let v = p[k];
      for (let j = parts.length - 1; j > i; j--) {
        if (own.call(parts[j], k)) {
          v = parts[j]![k];
          break;
        }
      }
      if (v !== undefined) put(r, k, v);
    }
  }
}

/** Fields a record builder accepts: any RawRecord field, undefined meaning "leave out". */
export type Fields = { [K in keyof RawRecord]?: RawRecord[K] | undefined };

/** Builds records of one source line with the source's provenance. */
export class LineRecords {
  readonly out: RawRecord[] = [];
  constructor(
    private readonly source: SourceRef,
    private readonly line: SourceLine | undefined,
    private readonly adapter: { name: string; version: string },
    /** The id of the line's first record; later ones get `#<n>`. */
    private readonly baseId: string | undefined,
  ) {}

  /**
   * Add one record: `{ ...bases[0], ...bases[1], …, ...fields }` with the source's provenance around
   * it, fields left undefined left out. `kind` and anything given override the defaults.
   */
  add(fields: Fields & { kind: RawRecord["kind"] }, ...bases: readonly Fields[]): RawRecord {
    const n = this.out.length;
    const src = this.source;
    // Built by assignment, never by spreading: in this V8, each property an object literal defines
    // after a spread costs about a microsecond and leaves an object slow to read and stringify, and
    // records are made by the hundred thousand. The order is the spread's: a given runtime,
    // session_id, stream or record_id overrides the default in its place; source_path, the line's
    // place and the adapter override a given one.
    const r: Record<string, unknown> = { runtime: src.runtime, session_id: src.session_id, stream: src.stream };
    if (this.baseId !== undefined) r.record_id = n === 0 ? this.baseId : `${this.baseId}#${n}`;
    if (bases.length === 0) {
      for (const k in fields) {
        const v = (fields as Record<string, unknown>)[k];
        if (v !== undefined) put(r, k, v);
      }
    } else mergeInto(r, [...bases, fields] as readonly Record<string, unknown>[]);
    r.source_path = src.rel;
    if (this.line) {
      r.source_offset = this.line.offset;
      r.source_line = this.line.line;
    }
    r.adapter = this.adapter.name;
    r.adapter_version = this.adapter.version;
    const rec = r as unknown as RawRecord;
    this.out.push(rec);
    return rec;
  }
}

/** The record of a line that is not valid JSON (or not an object): kind `unknown`, its text in `raw`. */
export function unknownRecord(source: SourceRef, line: SourceLine | undefined, text: string, adapter: { name: string; version: string }, reason: string): RawRecord {
  const b = new LineRecords(source, line, adapter, textId(text));
  return b.add({ kind: "unknown", raw: text, attrs: attrsText({ reason }) });
}

/** Text of a content value: a string, or the text parts of an array of blocks. */
export function contentText(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (!Array.isArray(v)) return undefined;
  const parts: string[] = [];
  for (const b of v) {
    if (typeof b === "string") parts.push(b);
    const o = obj(b);
    if (!o) continue;
    const t = str(o.text) ?? str(o.input_text) ?? str(o.output_text);
    if (t !== undefined) parts.push(t);
    else if (o.type === "image" || o.type === "input_image") parts.push("[image]");
  }
  return parts.length ? parts.join("\n") : undefined;
}

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { StoreError, ioError } from "./errors.js";
import type { Area } from "./names.js";

/** Version of the landed-file header. */
export const LANDED_SCHEMA = 1;
/** Value of the header's `format` field. */
export const LANDED_FORMAT = "lake.sd";

/** The header line of a landed file (see README "Landed file format"). */
export interface LandedHeader {
  /** Always `lake.sd`. */
  readonly format: string;
  /** Header schema version (1). */
  readonly schema: number;
  /** Session id. */
  readonly session: string;
  /** `streams` or `runs`: the area of the session directory the file is in. */
  readonly area: Area;
  /** The stream (agent id, `main`) or run id: the directory the file is in. */
  readonly stream: string;
  /** The file's kind (its name's prefix): transcript, meta, journal, manifest … */
  readonly kind: string;
  /** Which cursor tracked the source: `append` or `snapshot`. */
  readonly cursor: "append" | "snapshot";
  /** The source as the cursor records it (path relative to the adapter's source root). */
  readonly source: string;
  /** Landed sequence number (also in the name). */
  readonly seq: number;
  /** The pass stamp (also in the name), `20260831T091204.481523000Z`. */
  readonly collected_at: string;
  /** Byte offset in the source of the first byte this file covers. */
  readonly first_offset: number;
  /** Byte offset in the source just past the last byte this file covers (exclusive). */
  readonly end_offset: number;
  /** 1-based source line number of the first line covered. */
  readonly first_line: number;
  /** 1-based source line number of the last line covered (first_line - 1 when it covers none). */
  readonly last_line: number;
  /** Number of record lines after the header. */
  readonly records: number;
  /** SHA-256 hex of every byte after the header line. */
  readonly body_sha256: string;
  /** Snapshot sources: SHA-256 hex of the content with trailing newlines trimmed. */
  readonly content_sha256?: string;
  /** The adapter that converted the source, and its version. */
  readonly adapter: string;
  readonly adapter_version: string;
}

const HEADER_KEYS: ReadonlyArray<keyof LandedHeader> = [
  "format", "schema", "session", "area", "stream", "kind", "cursor", "source", "seq", "collected_at",
  "first_offset", "end_offset", "first_line", "last_line", "records", "body_sha256", "content_sha256", "adapter", "adapter_version",
];

/** Serialise a header with its keys in the documented order. */
export function encodeHeader(h: LandedHeader): string {
  const o: Record<string, unknown> = {};
  for (const k of HEADER_KEYS) if (h[k] !== undefined) o[k] = h[k];
  return JSON.stringify(o) + "\n";
}

/** Build a landed file's bytes: header line, then the record lines. Fills records and body_sha256. */
export function buildLanded(h: Omit<LandedHeader, "records" | "body_sha256" | "format" | "schema">, recordLines: readonly string[]): { chunks: Buffer[]; header: LandedHeader; bytes: number } {
  const body = Buffer.from(recordLines.length ? recordLines.join("\n") + "\n" : "");
  const header: LandedHeader = { format: LANDED_FORMAT, schema: LANDED_SCHEMA, ...h, records: recordLines.length, body_sha256: createHash("sha256").update(body).digest("hex") };
  const head = Buffer.from(encodeHeader(header));
  return { chunks: [head, body], header, bytes: head.length + body.length };
}

/**
 * Collects a landed file's record lines straight into one buffer (each line and its `\n`), so a
 * window's rows are encoded once, not joined and then encoded.
 */
export class BodyWriter {
  private buf: Buffer;
  private pos = 0;
  /** Record lines added. */
  records = 0;
  constructor(sizeHint = 1 << 16) {
    this.buf = Buffer.allocUnsafe(Math.max(1 << 12, sizeHint));
  }
  /** Add one record line (without its newline). */
  add(line: string): void {
    const need = this.pos + line.length * 3 + 1;
    if (need > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2));
      this.buf.copy(next, 0, 0, this.pos);
      this.buf = next;
    }
    this.pos += this.buf.write(line, this.pos, "utf8");
    this.buf[this.pos++] = 10;
    this.records++;
  }
  /** The body bytes (a view of the writer's buffer). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/**
 * Build a landed file's bytes from a body of `records` newline-terminated lines (given in pieces,
 * in order). Fills records and body_sha256, and gives the SHA-256 of the whole file.
 */
export function buildLandedBody(h: Omit<LandedHeader, "records" | "body_sha256" | "format" | "schema">, body: readonly Uint8Array[], records: number): { chunks: Uint8Array[]; header: LandedHeader; bytes: number; sha256: string } {
  const bodyHash = createHash("sha256");
  let size = 0;
  for (const b of body) {
    bodyHash.update(b);
    size += b.length;
  }
  const header: LandedHeader = { format: LANDED_FORMAT, schema: LANDED_SCHEMA, ...h, records, body_sha256: bodyHash.digest("hex") };
  const head = Buffer.from(encodeHeader(header));
  const file = createHash("sha256").update(head);
  for (const b of body) file.update(b);
  return { chunks: [head, ...body], header, bytes: head.length + size, sha256: file.digest("hex") };
}

/** A decoded landed file. `rows` are the record lines' exact text (no newline). */
export interface LandedFile {
  readonly header: LandedHeader;
  readonly rows: string[];
  /** SHA-256 hex of the whole file. */
  readonly sha256: string;
  readonly bytes: number;
}

function num(h: Record<string, unknown>, k: string, file: string): number {
  const v = h[k];
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw new StoreError("Corrupt", `${file}: header ${k} is not a non-negative integer`, { data: { file, key: k } });
  return v;
}
function str(h: Record<string, unknown>, k: string, file: string): string {
  const v = h[k];
  if (typeof v !== "string") throw new StoreError("Corrupt", `${file}: header ${k} is not a string`, { data: { file, key: k } });
  return v;
}

/** Decode a header object, checking every field's type. */
export function decodeHeader(v: unknown, file: string): LandedHeader {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new StoreError("Corrupt", `${file}: header is not a JSON object`, { data: { file } });
  const h = v as Record<string, unknown>;
  if (h.format !== LANDED_FORMAT) throw new StoreError("Corrupt", `${file}: not a landed file (format ${JSON.stringify(h.format)})`, { data: { file } });
  const schema = num(h, "schema", file);
  if (schema !== LANDED_SCHEMA) throw new StoreError("Corrupt", `${file}: landed file schema ${schema} is not supported (expected ${LANDED_SCHEMA})`, { data: { file, schema } });
  const area = str(h, "area", file);
  if (area !== "streams" && area !== "runs") throw new StoreError("Corrupt", `${file}: header area ${JSON.stringify(area)} is not streams or runs`, { data: { file } });
  const cursor = str(h, "cursor", file);
  if (cursor !== "append" && cursor !== "snapshot") throw new StoreError("Corrupt", `${file}: header cursor ${JSON.stringify(cursor)} is not append or snapshot`, { data: { file } });
  const out: LandedHeader = {
    format: LANDED_FORMAT, schema, session: str(h, "session", file), area, stream: str(h, "stream", file), kind: str(h, "kind", file), cursor,
    source: str(h, "source", file), seq: num(h, "seq", file), collected_at: str(h, "collected_at", file),
    first_offset: num(h, "first_offset", file), end_offset: num(h, "end_offset", file), first_line: num(h, "first_line", file), last_line: num(h, "last_line", file),
    records: num(h, "records", file), body_sha256: str(h, "body_sha256", file), adapter: str(h, "adapter", file), adapter_version: str(h, "adapter_version", file),
  };
  if (h.content_sha256 !== undefined) return { ...out, content_sha256: str(h, "content_sha256", file) };
  return out;
}

/** Options of {@link parseLanded}. */
export interface ParseLandedOptions {
  /**
   * The whole file's SHA-256 as recorded when it landed (the session index's `sha256`). When the
   * bytes hash to it, they are the bytes the store wrote, whose body digest was right by
   * construction, so the body is not hashed a second time. Any other digest: every check runs.
   */
  readonly sha256?: string;
}

/** A decoded landed file whose record lines are left as bytes (views of the file's buffer, no newline). */
export interface LandedBytes {
  readonly header: LandedHeader;
  /** The record lines (with their newlines): every row is a view of it. */
  readonly body: Buffer;
  readonly rows: Buffer[];
  /** SHA-256 hex of the whole file. */
  readonly sha256: string;
  readonly bytes: number;
}

/** A landed file's header and body, the body's digest and termination checked (parseLanded's checks but the record count). */
function checkedBody(buf: Buffer, file: string, options: ParseLandedOptions): { header: LandedHeader; body: Buffer; sha256: string } {
  const nl = buf.indexOf(10);
  if (nl < 0) throw new StoreError("Corrupt", `${file}: no header line`, { data: { file } });
  let hv: unknown;
  try {
    hv = JSON.parse(buf.subarray(0, nl).toString("utf8"));
  } catch (e) {
    throw new StoreError("Corrupt", `${file}: header is not JSON`, { data: { file }, cause: e });
  }
  const header = decodeHeader(hv, file);
  const body = buf.subarray(nl + 1);
  const sha256 = createHash("sha256").update(buf).digest("hex");
  const digest = sha256 === options.sha256 ? header.body_sha256 : createHash("sha256").update(body).digest("hex");
  if (digest !== header.body_sha256) throw new StoreError("Corrupt", `${file}: body digest ${digest} does not match header body_sha256 ${header.body_sha256}`, { data: { file } });
  if (body.length > 0 && body[body.length - 1] !== 10) throw new StoreError("Corrupt", `${file}: last record line is not terminated`, { data: { file } });
  return { header, body, sha256 };
}

function checkCount(rows: number, header: LandedHeader, file: string): void {
  if (rows !== header.records) throw new StoreError("Corrupt", `${file}: ${rows} record lines, header says ${header.records}`, { data: { file } });
}

/**
 * Parse a landed file's bytes: header, body digest, record count, one JSON object per line.
 * Throws StoreError `Corrupt` naming the file and the first problem.
 */
export function parseLanded(buf: Buffer, file: string, options: ParseLandedOptions = {}): LandedFile {
  const { header, body, sha256 } = checkedBody(buf, file, options);
  const text = body.toString("utf8");
  const rows = text === "" ? [] : text.slice(0, -1).split("\n");
  checkCount(rows.length, header, file);
  return { header, rows, sha256, bytes: buf.length };
}

/**
 * {@link parseLanded}, the record lines left as bytes: each a view of `buf` (no newline), never
 * decoded. The same checks; the lines are not parsed either.
 */
export function parseLandedBytes(buf: Buffer, file: string, options: ParseLandedOptions = {}): LandedBytes {
  const { header, body, sha256 } = checkedBody(buf, file, options);
  const rows: Buffer[] = [];
  for (let at = 0; at < body.length; ) {
    const nl = body.indexOf(10, at);
    rows.push(body.subarray(at, nl));
    at = nl + 1;
  }
  checkCount(rows.length, header, file);
  return { header, body, rows, sha256, bytes: buf.length };
}

/** Read a landed file's bytes (an I/O failure names the file). */
export function readLandedBuffer(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw ioError(path, "read landed file", e);
  }
}

/** Read and parse one landed file. */
export function readLandedPath(path: string, options: ParseLandedOptions = {}): LandedFile {
  return parseLanded(readLandedBuffer(path), path, options);
}

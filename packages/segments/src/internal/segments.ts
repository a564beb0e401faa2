import { createHash, randomBytes } from "node:crypto";
import { closeSync, createReadStream, openSync, rmSync, write } from "node:fs";
import type { DuckDBConnection } from "@duckdb/node-api";
import { COLUMNS, COMPACTED_COLUMNS, SEGMENT_COLUMNS, duckdbType, rowToRecord, type Column } from "@lake/events/columns";
import type { CanonicalRecord } from "@lake/events/record";
import { USAGE_KEYS } from "@lake/events/usage";
import { CopyConnection, duckdb, type SqlRunner } from "./duckdb.js";
import { SegmentError } from "./errors.js";
import { CONTENT_HASH_COPY_OPTION, sealFile, type SealedFile } from "./hash.js";

/** A canonical record as a row of the fleet table. */
export type FleetRow = CanonicalRecord & {
  /** The fleet agent (collector) that pushed the record. */
  agent: string;
  landed_seq?: number;
  landed_row?: number;
};

/** `bronze`: a session segment (runtime and agent are in its Hive path); `compacted`: a compacted part (all columns). */
export type SegmentLayout = "bronze" | "compacted";

/** The columns a file of the given layout stores. */
export function segmentColumns(layout: SegmentLayout): readonly Column[] {
  return layout === "bronze" ? SEGMENT_COLUMNS : COMPACTED_COLUMNS;
}

/** What a written segment holds. */
export interface SegmentInfo {
  readonly path: string;
  readonly rows: number;
  readonly bytes: number;
  /** SHA-256 hex of the file's bytes (as written, content hash included). */
  readonly sha256: string;
  /** The content hash recorded in the file's footer (`lake.sha256`: see checkContentHash). */
  readonly contentHash: string;
}

/** DuckDB's default rows per Parquet row group, the most {@link rowGroupRowsFor} gives. */
export const MAX_ROW_GROUP_ROWS = 122_880;
/** The fewest rows per row group DuckDB writes (its vector size), the least {@link rowGroupRowsFor} gives. */
export const MIN_ROW_GROUP_ROWS = 2_048;

/**
 * Rows per row group for a COPY under `memoryLimitBytes`: DuckDB holds a whole row group in memory
 * while it writes it and cannot spill that, so a group of rows of `rowBytes` each (their
 * uncompressed Parquet size, from the footers of the files they come from) is kept to an eighth of
 * the limit, between MIN_ROW_GROUP_ROWS and MAX_ROW_GROUP_ROWS (DuckDB's default, for small rows).
 */
export function rowGroupRowsFor(rowBytes: number, memoryLimitBytes: number): number {
  if (!(rowBytes > 0)) return MAX_ROW_GROUP_ROWS;
  return Math.max(MIN_ROW_GROUP_ROWS, Math.min(MAX_ROW_GROUP_ROWS, Math.floor(memoryLimitBytes / 8 / rowBytes)));
}

/** The average uncompressed size of a row of `paths` (Parquet files), from their footers; 0 for no rows. */
export async function averageRowBytes(conn: DuckDBConnection, paths: readonly string[]): Promise<number> {
  if (paths.length === 0) return 0;
  const list = `[${paths.map(sqlString).join(", ")}]`;
  const r = await conn.runAndReadAll(
    `SELECT (SELECT sum(total_uncompressed_size) FROM parquet_metadata(${list}))::DOUBLE AS bytes, (SELECT sum(num_rows) FROM parquet_file_metadata(${list}))::DOUBLE AS rows`,
  );
  const [bytes, rows] = [Number(r.getRows()[0]![0] ?? 0), Number(r.getRows()[0]![1] ?? 0)];
  return rows > 0 ? bytes / rows : 0;
}

/** What {@link copyParquet} wrote. */
export interface ParquetFileInfo {
  readonly path: string;
  /** The rows COPY wrote. */
  readonly rows: number;
  readonly bytes: number;
  /** SHA-256 hex of the file's bytes (as written, content hash included). */
  readonly sha256: string;
  /** The content hash recorded in the file's footer. */
  readonly contentHash: string;
}

/**
 * Write the rows of a SELECT to a Parquet file with DuckDB (`COPY … (FORMAT parquet, COMPRESSION
 * zstd)`) and record its content hash in its footer (`lake.sha256`). Every Parquet file of the fleet
 * — a bronze segment (SegmentWriter), a compacted part (lake-maint compact) — is written here.
 * `conn` is a node-api DuckDBConnection (compact's) or a SegmentWriter's own {@link CopyConnection}.
 */
export async function copyParquet(
  conn: SqlRunner,
  select: string,
  path: string,
  options: { zstdLevel?: number | undefined; fsync?: boolean | undefined; rowGroupRows?: number | undefined } = {},
): Promise<ParquetFileInfo> {
  const level = options.zstdLevel === undefined ? "" : `, COMPRESSION_LEVEL ${options.zstdLevel}`;
  const group = options.rowGroupRows === undefined ? "" : `, ROW_GROUP_SIZE ${options.rowGroupRows}`;
  let rows: number;
  try {
    rows = Number((await conn.run(`COPY (${select}) TO ${sqlString(path)} (FORMAT parquet, COMPRESSION zstd${level}${group}, ${CONTENT_HASH_COPY_OPTION})`)).rowsChanged);
  } catch (err) {
    throw new SegmentError("WriteFailed", `${path}: cannot write Parquet: ${(err as Error).message}`, { cause: err, data: { path } });
  }
  let sealed: SealedFile;
  try {
    sealed = sealFile(path, { fsync: options.fsync !== false });
  } catch (err) {
    throw new SegmentError("WriteFailed", `${path}: cannot record the content hash: ${(err as Error).message}`, { cause: err, data: { path } });
  }
  return { path, rows, bytes: sealed.bytes, sha256: sealed.sha256, contentHash: sealed.contentHash };
}

/** Quote a string as a SQL literal. */
export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

const USAGE = new Set<string>(USAGE_KEYS);

/**
 * Columns added to the record after segments were first written: files of an older writer do not
 * have them, and a reader selects them as NULL (never a guess: absent ≠ zero).
 */
export const LATER_COLUMNS: readonly Column[] = COLUMNS.filter((col) => col.name === "cache_write_1h_tokens" || col.name === "cost_usd");

/**
 * A DuckDB table expression over Parquet files (`read_parquet(paths, options)`) in which the
 * LATER_COLUMNS exist even when no file has them (NULL), so one query reads old and new segments
 * alike. Projection and filters still go down into read_parquet. `virtualColumns` (e.g.
 * `file_index`) are selected too (`*` leaves them out).
 */
export function parquetSource(paths: readonly string[], options: string, virtualColumns: readonly string[] = []): string {
  const later = LATER_COLUMNS.map((c) => `CAST(NULL AS ${duckdbType(c)}) AS "${c.name}"`).join(", ");
  const extra = virtualColumns.map((v) => `, ${v}`).join("");
  return `(SELECT *${extra} FROM read_parquet([${paths.map(sqlString).join(", ")}], ${options}) UNION ALL BY NAME SELECT ${later} WHERE false)`;
}

/**
 * One record of a segment as JSON text — a canonical record's object (its fields by name, `usage`
 * nested), e.g. a landed file's line — with the columns beside it. The text must be a record
 * @lake/events `checkStoredRecord` accepts (every field of the type its column has): DuckDB reads
 * it as it is. Fields no column names are ignored.
 */
export interface RecordLine {
  /** The record's JSON text, or its UTF-8 bytes (a landed line as read from its file: not decoded). */
  readonly json: string | Uint8Array;
  /** `ts` in ms since the epoch (`Date.parse` of the record's ts); null or undefined: NULL. */
  readonly tsMs?: number | null | undefined;
  readonly landed_seq?: number | undefined;
  readonly landed_row?: number | undefined;
  /** The `agent` column of a compacted part (a bronze segment's path carries it). */
  readonly agent?: string | undefined;
}

/** Options of {@link SegmentWriter.writeLines}. */
export interface WriteLinesOptions {
  /** The `agent` column of a compacted part, for lines without one of their own. */
  readonly agent?: string;
  /**
   * Called once the rows file is written and DuckDB's COPY is under way (on a thread of its own):
   * from then on the caller's thread is free until the segment is sealed — a caller may read its
   * next rows meanwhile.
   */
  readonly onCopy?: () => void;
}

/** Options of {@link SegmentWriter.open}. */
export interface SegmentWriterOptions {
  /** DuckDB threads (default 1: a segment is one row group, and the caller's own thread works meanwhile). */
  readonly threads?: number;
  /**
   * Segments written at once (default 1): each on a connection of its own to the writer's DuckDB,
   * its COPY on a thread of its own. A write that finds every connection busy waits for one.
   */
  readonly connections?: number;
  /** DuckDB memory_limit (default DuckDB's); what does not fit spills to its temp directory. */
  readonly memoryLimit?: string;
  /** fsync each file written (default true); false for scratch copies the caller copies elsewhere (push uploads, then removes them). */
  readonly fsync?: boolean;
}

/** Record fields that are not read from the record's own object (`ts` comes as ms, usage keys from `usage`). */
const LINE_OWN = new Set(["ts", "agent", "landed_seq", "landed_row"]);

/**
 * The `read_json` columns of the rows file a writer feeds DuckDB — one JSON object per line:
 * `{"s": landed_seq, "r": landed_row, "t": ts ms, "a": agent, "d": <the record>}` — and the SELECT
 * list that makes them the layout's columns, in order, with the types of the table (`duckdbType`).
 */
function lineSql(cols: readonly Column[]): { columns: string; select: string } {
  const fields = COLUMNS.filter((c) => !USAGE.has(c.name) && !LINE_OWN.has(c.name)).map((c) => `"${c.name}" ${duckdbType(c)}`);
  const usage = USAGE_KEYS.map((k) => `"${k}" ${duckdbType(COLUMNS.find((c) => c.name === k)!)}`);
  const record = `STRUCT(${fields.join(", ")}, "usage" STRUCT(${usage.join(", ")}))`;
  const columns = `{'s': 'BIGINT', 'r': 'INTEGER', 't': 'BIGINT', 'a': 'VARCHAR', 'd': ${sqlString(record)}}`;
  const select = cols
    .map((c) => {
      if (c.name === "landed_seq") return `s AS "landed_seq"`;
      if (c.name === "landed_row") return `r AS "landed_row"`;
      if (c.name === "agent") return `a AS "agent"`;
      if (c.type === "timestamp") return `epoch_ms(t) AS "${c.name}"`;
      if (USAGE.has(c.name)) return `d."usage"."${c.name}" AS "${c.name}"`;
      if (c.type === "varchar[]") return `coalesce(d."${c.name}", []) AS "${c.name}"`;
      return `d."${c.name}" AS "${c.name}"`;
    })
    .join(", ");
  return { columns, select };
}

/** A FleetRow as the JSON object text of a {@link RecordLine}: each column's value converted as its type says. */
function rowJson(row: FleetRow): RecordLine {
  const src = row as unknown as Record<string, unknown>;
  const usageIn = row.usage as Record<string, unknown> | undefined;
  const d: Record<string, unknown> = {};
  const usage: Record<string, unknown> = {};
  let tsMs: number | null = null;
  for (const col of COLUMNS) {
    const v = USAGE.has(col.name) ? usageIn?.[col.name] : src[col.name];
    if (v === undefined || v === null) {
      if (!col.nullable && col.type !== "varchar[]") throw new SegmentError("InvalidRow", `column ${col.name} is required`, { data: { column: col.name } });
      continue;
    }
    let out: unknown;
    switch (col.type) {
      case "varchar":
        out = String(v);
        break;
      case "boolean":
        out = Boolean(v);
        break;
      case "integer":
      case "double":
        out = Number(v);
        break;
      case "bigint":
        out = Number(BigInt(v as number)); // a fraction throws, as DuckDB's BIGINT would refuse it
        break;
      case "timestamp": {
        const ms = Date.parse(String(v));
        tsMs = Number.isNaN(ms) ? null : ms;
        continue;
      }
      case "varchar[]":
        out = (v as unknown[]).map(String);
        break;
    }
    if (USAGE.has(col.name)) usage[col.name] = out;
    else d[col.name] = out;
  }
  d.usage = usage;
  const agent = row.agent === undefined || row.agent === null ? undefined : String(row.agent);
  return { json: JSON.stringify(d), tsMs, landed_seq: row.landed_seq, landed_row: row.landed_row, agent };
}

/** Bytes of rows gathered before one write to the rows file. */
const ROWS_CHUNK = 4 << 20;

/**
 * Writes Parquet segments with DuckDB: the rows go, one JSON object per line, into a rows file
 * beside the segment, which DuckDB reads (`read_json` with the columns' types) straight into
 * `COPY … (FORMAT parquet, COMPRESSION zstd)` — the rows cross into DuckDB as one text, not value
 * by value. One writer keeps one in-memory DuckDB (on the native bindings: {@link CopyConnection});
 * close it.
 */
export class SegmentWriter {
  #conn: CopyConnection | undefined;
  /** Connections not writing now, and writes waiting for one. */
  #free: CopyConnection[] = [];
  #waiting: ((c: CopyConnection) => void)[] = [];
  #sql = new Map<SegmentLayout, { columns: string; select: string }>();
  #fsync = true;
  /** Rows-file buffers free to fill, shared by this writer's writes. */
  #buffers: Buffer[] = [];

  private constructor() {}

  /** Open a writer (an in-memory DuckDB). */
  static async open(options: SegmentWriterOptions = {}): Promise<SegmentWriter> {
    const w = new SegmentWriter();
    const config: Record<string, string> = { threads: String(options.threads ?? 1) };
    if (options.memoryLimit !== undefined) config.memory_limit = options.memoryLimit;
    w.#fsync = options.fsync !== false;
    w.#conn = await CopyConnection.open(config);
    w.#free.push(w.#conn);
    try {
      for (let i = 1; i < Math.max(1, options.connections ?? 1); i++) w.#free.push(await w.#conn.connect());
    } catch (err) {
      w.close();
      throw err;
    }
    return w;
  }

  /** A connection to write on: a free one, else the next one given back. */
  #take(): Promise<CopyConnection> {
    const c = this.#free.pop();
    return c ? Promise.resolve(c) : new Promise((resolve) => this.#waiting.push(resolve));
  }

  #give(c: CopyConnection): void {
    const next = this.#waiting.shift();
    if (next) next(c);
    else this.#free.push(c);
  }

  /** Write `rows` to a Parquet file at `path` in the given layout. The file must not exist. */
  async write(path: string, rows: Iterable<FleetRow>, layout: SegmentLayout): Promise<SegmentInfo> {
    return this.#write(path, (function* () {
      for (const row of rows) yield rowJson(row);
    })(), layout, undefined);
  }

  /**
   * Write records given as JSON text (push's landed lines: no object is rebuilt) to a Parquet file
   * at `path`: the same file {@link write} writes from the same records. The file must not exist.
   * `lines` is read as the rows file is written (across its writes), and a line's bytes longer than
   * a rows buffer (4 MiB) are written as they are: neither may change until the promise settles.
   */
  async writeLines(path: string, lines: Iterable<RecordLine>, layout: SegmentLayout, options: WriteLinesOptions = {}): Promise<SegmentInfo> {
    return this.#write(path, lines, layout, options.agent, options.onCopy);
  }

  async #write(path: string, lines: Iterable<RecordLine>, layout: SegmentLayout, agent: string | undefined, onCopy?: () => void): Promise<SegmentInfo> {
    if (!this.#conn) throw new SegmentError("WriteFailed", `${path}: segment writer is closed`);
    const rowsFile = `${path}.rows-${randomBytes(4).toString("hex")}.ndjson`;
    const withAgent = layout === "compacted";
    let count = 0;
    try {
      let longest = 0;
      const fd = openSync(rowsFile, "wx");
      const out = new RowsBuffer(fd, this.#buffers);
      try {
        for (const line of lines) {
          let a = "";
          if (withAgent) {
            const name = line.agent ?? agent;
            if (name === undefined) throw new SegmentError("InvalidRow", "column agent is required", { data: { column: "agent" } });
            a = `,"a":${wellFormed(JSON.stringify(name))}`;
          }
          const start = out.size;
          const head = `{"s":${num(line.landed_seq)},"r":${num(line.landed_row)},"t":${num(line.tsMs)}`;
          if (a === "") out.ascii(`${head},"d":`);
          else out.text(`${head}${a},"d":`);
          const json = line.json;
          if (typeof json === "string") out.text(wellFormed(json));
          else if (mayHoldLoneSurrogate(json)) out.text(wellFormed(Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString("utf8")));
          else out.bytes(json);
          out.ascii("}\n");
          if (out.size - start > longest) longest = out.size - start;
          count++;
          if (out.busy) await out.room();
        }
        await out.end();
      } finally {
        // A write still under way (the loop threw) finishes before its file descriptor is closed.
        await out.settled();
        closeSync(fd);
      }
      let sql = this.#sql.get(layout);
      if (!sql) this.#sql.set(layout, (sql = lineSql(segmentColumns(layout))));
      // DuckDB's default object limit is 16 MiB.
      const maxObject = Math.min(Math.max(16 << 20, longest + 1024), 0xffff_ffff);
      const source = `read_json(${sqlString(rowsFile)}, format = 'newline_delimited', auto_detect = false, columns = ${sql.columns}, maximum_object_size = ${maxObject})`;
      const conn = await this.#take();
      let info: ParquetFileInfo;
      try {
        if (!this.#conn) throw new SegmentError("WriteFailed", `${path}: segment writer is closed`);
        const copying = copyParquet(conn, `SELECT ${sql.select} FROM ${source}`, path, { fsync: this.#fsync });
        try {
          onCopy?.();
        } finally {
          info = await copying;
        }
      } finally {
        this.#give(conn);
      }
      if (info.rows !== count) throw new SegmentError("WriteFailed", `${path}: wrote ${info.rows} rows of ${count}`, { data: { path } });
      return info;
    } catch (err) {
      if (err instanceof SegmentError && err.code === "WriteFailed") throw err; // copyParquet named the file
      throw new SegmentError("WriteFailed", `${path}: cannot write segment: ${(err as Error).message}`, { cause: err, data: { path } });
    } finally {
      rmSync(rowsFile, { force: true });
    }
  }

  /** Close the writer's DuckDB (a write under way fails). */
  close(): void {
    const conn = this.#conn;
    conn?.close();
    this.#conn = undefined;
    this.#free = [];
    // Writes waiting for a connection get the closed one: each fails as closed.
    if (conn) for (const w of this.#waiting.splice(0)) w(conn);
  }
}

/**
 * The rows file's bytes, gathered in a buffer of ROWS_CHUNK bytes: text is encoded into it and a
 * landed line's bytes copied in as they are (no string is made of them). A full buffer is written
 * at its place in the file on libuv's thread pool while the next one fills (the copy into the page
 * cache is not the main thread's): once ROWS_WRITES writes are under way, `room()` waits for the
 * oldest past that, and `end()` for all of them.
 */
class RowsBuffer {
  #buf: Buffer;
  #at = 0;
  /** Writes under way, oldest first. */
  #writes: Promise<void>[] = [];
  #failed: { e: unknown } | undefined;
  /** Bytes given so far (written, being written or held). */
  size = 0;
  /**
   * `spare`: buffers free to fill (the writer's, shared by its writes: a push of many small
   * sessions does not allocate 4 MiB for each — that external memory made V8 collect garbage
   * again and again); the buffers it takes go back there as their writes finish and at `settled()`.
   */
  constructor(
    private readonly fd: number,
    private readonly spare: Buffer[],
  ) {
    this.#buf = spare.pop() ?? Buffer.allocUnsafe(ROWS_CHUNK);
  }

  text(s: string): void {
    // A UTF-16 unit is at most 3 bytes of UTF-8.
    if (this.#at + s.length * 3 > this.#buf.length) {
      this.#send();
      if (s.length * 3 > this.#buf.length) {
        this.#write(Buffer.from(s, "utf8"));
        return;
      }
    }
    const n = this.#buf.write(s, this.#at, "utf8");
    this.#at += n;
    this.size += n;
  }

  /** Text known to be ASCII (numbers and JSON punctuation): one byte a unit, no UTF-8 encoder. */
  ascii(s: string): void {
    if (this.#at + s.length > this.#buf.length) {
      this.text(s);
      return;
    }
    this.#at += this.#buf.write(s, this.#at, "latin1");
    this.size += s.length;
  }

  /** A landed line's bytes: copied in, or written as they are when longer than a buffer (they must not change until `end()`). */
  bytes(b: Uint8Array): void {
    if (this.#at + b.length > this.#buf.length) {
      this.#send();
      if (b.length > this.#buf.length) {
        this.#write(b);
        return;
      }
    }
    this.#buf.set(b, this.#at);
    this.#at += b.length;
    this.size += b.length;
  }

  /** ROWS_WRITES writes are under way: wait for `room()` before giving more. */
  get busy(): boolean {
    return this.#writes.length >= ROWS_WRITES;
  }

  /** Resolves when fewer than ROWS_WRITES writes are under way (rejects with a write's failure). */
  async room(): Promise<void> {
    while (this.#writes.length >= ROWS_WRITES) await this.#writes[0];
    if (this.#failed) throw this.#failed.e;
  }

  /** Write what is held and wait for every write (rejects with the first failure). Nothing may be added after. */
  async end(): Promise<void> {
    this.#send(false);
    await Promise.all(this.#writes);
    if (this.#failed) throw this.#failed.e;
  }

  /** Resolves when no write is under way (whatever their outcome); the buffer being filled is given back then: nothing may be added after. */
  async settled(): Promise<void> {
    await Promise.all(this.#writes);
    this.#giveBack(this.#buf);
    this.#buf = NO_BUFFER;
  }

  #giveBack(b: Buffer): void {
    if (b.length > 0 && this.spare.length < SPARE_BUFFERS) this.spare.push(b);
  }

  /** Hand the held bytes to a write and (`refill`) fill a spare buffer, a new one when none is free. */
  #send(refill = true): void {
    if (this.#at === 0) return;
    const full = this.#buf;
    const held = this.#at;
    this.#buf = refill ? (this.spare.pop() ?? Buffer.allocUnsafe(ROWS_CHUNK)) : NO_BUFFER;
    this.#at = 0;
    this.size -= held;
    this.#write(full.subarray(0, held), full);
  }

  /**
   * Write `b` at the file's offset `size` (then past it); `owner`, the buffer it is part of, is a
   * spare once written. After a write failed no other is started (the rows file is refused whole).
   */
  #write(b: Uint8Array, owner?: Buffer): void {
    const at = this.size;
    this.size += b.length;
    if (this.#failed) return;
    const w = writeAllAt(this.fd, b, at).then(
      () => {
        if (owner) this.#giveBack(owner);
      },
      (e: unknown) => void (this.#failed ??= { e }),
    );
    const done = w.finally(() => this.#writes.splice(this.#writes.indexOf(done), 1));
    this.#writes.push(done);
  }
}

/** Write all of `buf` at `position` of `fd` on the thread pool: a write may take fewer bytes than it is given. */
async function writeAllAt(fd: number, buf: Uint8Array, position: number): Promise<void> {
  for (let at = 0; at < buf.length; ) {
    const n = await new Promise<number>((done, fail) => write(fd, buf, at, buf.length - at, position + at, (e, written) => (e ? fail(e) : done(written))));
    at += n;
  }
}

/** Writes of the rows file under way before the rows wait for room (checked between rows: one long row may start two more). */
const ROWS_WRITES = 2;
/** What a RowsBuffer holds once it has given its buffer back (or handed it to its last write). */
const NO_BUFFER = Buffer.alloc(0);
/** ROWS_CHUNK buffers a writer keeps free between writes (enough for two writes of a few MiB at once). */
const SPARE_BUFFERS = 4;

const ESCAPE_U = Buffer.from("\\u", "latin1");

/** Whether JSON bytes may hold a lone surrogate's escape (`\\udXXX`, JSON.stringify's form of one): one scan for `\\u`. */
function mayHoldLoneSurrogate(json: Uint8Array): boolean {
  const b = Buffer.isBuffer(json) ? json : Buffer.from(json.buffer, json.byteOffset, json.byteLength);
  for (let at = b.indexOf(ESCAPE_U); at >= 0; at = b.indexOf(ESCAPE_U, at + 2)) {
    const c = b[at + 2];
    if (c === 0x64 || c === 0x44) return true;
  }
  return false;
}

/**
 * `text` with every lone surrogate (`\\udXXX` unpaired: JSON.stringify's escape for it) read as
 * U+FFFD, as DuckDB's appender and every UTF-8 encoder take it; DuckDB's JSON reader refuses one.
 * Text without such an escape is returned as it is.
 */
function wellFormed(text: string): string {
  if (!text.includes("\\ud") && !text.includes("\\uD")) return text;
  return JSON.stringify(JSON.parse(text, (_k, v: unknown) => (typeof v === "string" ? (v as string & { toWellFormed(): string }).toWellFormed() : v)));
}

/** A number as JSON (null for none). */
function num(v: number | null | undefined): string {
  return v === undefined || v === null || !Number.isFinite(v) ? "null" : String(v);
}

/** Write one segment with a writer of its own. */
export async function writeSegment(path: string, rows: Iterable<FleetRow>, layout: SegmentLayout): Promise<SegmentInfo> {
  const w = await SegmentWriter.open();
  try {
    return await w.write(path, rows, layout);
  } finally {
    w.close();
  }
}

/**
 * Read a segment back as fleet rows, in file order. A bronze segment does not store runtime and
 * agent (its path does): pass them.
 */
export async function readSegment(path: string, layout: SegmentLayout, partition: { runtime?: string; agent?: string } = {}): Promise<FleetRow[]> {
  const db = await duckdb().DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  try {
    const reader = await conn.runAndReadAll(`SELECT * FROM read_parquet(${sqlString(path)}, hive_partitioning = false)`);
    const rows = reader.getRowObjectsJS();
    return rows.map((r) => {
      const rec = rowToRecord(r as Record<string, unknown>) as FleetRow;
      if (layout === "bronze") {
        if (partition.runtime !== undefined) rec.runtime = partition.runtime;
        if (partition.agent !== undefined) rec.agent = partition.agent;
      } else if (r.agent !== null && r.agent !== undefined) rec.agent = String(r.agent);
      if (r.landed_seq !== null && r.landed_seq !== undefined) rec.landed_seq = Number(r.landed_seq);
      if (r.landed_row !== null && r.landed_row !== undefined) rec.landed_row = Number(r.landed_row);
      return rec;
    });
  } catch (err) {
    throw new SegmentError("ReadFailed", `${path}: cannot read segment: ${(err as Error).message}`, { cause: err, data: { path } });
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/**
 * The landed files a segment holds rows of (`landed_seq`, the non-null ones) and its row count,
 * reading that one column: what a writer needs of a segment it finds already written (a push
 * that stopped before saving its state), without converting its rows.
 */
export async function readLandedSeqs(path: string): Promise<{ seqs: number[]; rows: number }> {
  const db = await duckdb().DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  try {
    const reader = await conn.runAndReadAll(`SELECT landed_seq, count(*) AS n FROM read_parquet(${sqlString(path)}, hive_partitioning = false) GROUP BY landed_seq ORDER BY landed_seq`);
    const seqs: number[] = [];
    let rows = 0;
    for (const [seq, n] of reader.getRowsJS() as [bigint | number | null, bigint | number][]) {
      rows += Number(n);
      if (seq !== null) seqs.push(Number(seq));
    }
    return { seqs, rows };
  } catch (err) {
    throw new SegmentError("ReadFailed", `${path}: cannot read segment: ${(err as Error).message}`, { cause: err, data: { path } });
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** SHA-256 hex of a file, streamed. */
export async function sha256File(path: string): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest("hex");
}

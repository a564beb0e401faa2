// The content hash a Parquet file of the fleet (a bronze segment, a compacted part) carries in its
// own footer: key-value metadata `lake.sha256`, the SHA-256 of the file's bytes with that value read
// as 64 ASCII "0". The writer puts the placeholder in (DuckDB's COPY … KV_METADATA), hashes the file,
// and overwrites the placeholder with the hash — same length, so the footer stays valid Parquet and
// any Parquet reader still reads the file. Checking needs no Parquet reader (no DuckDB): find the
// value at the end of the footer, hash the file with it read as the placeholder, compare. Every bit
// of the file is covered, the hash itself included (a flipped hash digit no longer matches).
import { createHash, type Hash } from "node:crypto";
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, statSync, writeSync } from "node:fs";
import { fsyncFile, writeAtomic } from "@lake/durable";
import { dirname } from "node:path";

/** The Parquet key-value metadata key that holds a file's content hash. */
export const CONTENT_HASH_KEY = "lake.sha256";
/** The placeholder value a writer puts in before hashing: 64 ASCII "0". */
export const CONTENT_HASH_PLACEHOLDER = "0".repeat(64);

/** The option of DuckDB's `COPY … (FORMAT parquet, …)` that writes the placeholder into the footer. */
export const CONTENT_HASH_COPY_OPTION = `KV_METADATA {'${CONTENT_HASH_KEY}': '${CONTENT_HASH_PLACEHOLDER}'}`;

// Thrift compact encoding of KeyValue{1: key, 2: value} with a 64-byte value: field header 0x18
// (delta 1, binary), length 11, "lake.sha256", field header 0x18, length 64 (0x40), then the value.
const NEEDLE = Buffer.concat([Buffer.from([0x18, CONTENT_HASH_KEY.length]), Buffer.from(CONTENT_HASH_KEY, "latin1"), Buffer.from([0x18, 0x40])]);
const MAGIC = Buffer.from("PAR1", "latin1");
const HEX64 = /^[0-9a-f]{64}$/;
const CHUNK = 1 << 20;

/** What a content-hash check found: the recorded hash, or why the file is damaged (one line). */
export type ContentHashCheck = { readonly status: "ok"; readonly sha256: string } | { readonly status: "damaged"; readonly reason: string };

function readAt(fd: number, length: number, position: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let off = 0;
  while (off < length) {
    const n = readSync(fd, buf, off, length - off, position + off);
    if (n === 0) break;
    off += n;
  }
  return off === length ? buf : buf.subarray(0, off);
}

/** Where the hash value sits in the file (an absolute offset), or why it cannot be found. */
function locate(fd: number, size: number): number | string {
  if (size < 12) return "not a Parquet file (too short: cut?)";
  const head = readAt(fd, 4, 0);
  const tail = readAt(fd, 8, size - 8);
  if (!head.equals(MAGIC)) return "not a Parquet file (no PAR1 at the start)";
  if (!tail.subarray(4).equals(MAGIC)) return "not a Parquet file (no PAR1 at the end: cut or damaged footer)";
  const footerLen = tail.readUInt32LE(0);
  const start = size - 8 - footerLen;
  if (footerLen === 0 || start < 4) return "Parquet footer length out of range (damaged footer)";
  const footer = readAt(fd, footerLen, start);
  // Key-value metadata follows the row groups (and their statistics, which hold column values):
  // the last match is the footer's own.
  const at = footer.lastIndexOf(NEEDLE);
  if (at < 0 || at + NEEDLE.length + 64 > footer.length) return `no ${CONTENT_HASH_KEY} in the Parquet footer (no content hash recorded, or a damaged footer)`;
  return start + at + NEEDLE.length;
}

/** A SHA-256 state over the file's first `end` bytes, read 1 MiB at a time. */
function hashBefore(fd: number, end: number): Hash {
  const h = createHash("sha256");
  for (let pos = 0; pos < end; pos += CHUNK) h.update(readAt(fd, Math.min(CHUNK, end - pos), pos));
  return h;
}

const PLACEHOLDER_BYTES = Buffer.from(CONTENT_HASH_PLACEHOLDER, "latin1");

/**
 * SHA-256 of the file with the 64 bytes at `at` read as the placeholder. `at` lies in the footer,
 * so what follows it is read whole.
 */
function hashWithPlaceholder(fd: number, size: number, at: number): string {
  return hashBefore(fd, at).update(PLACEHOLDER_BYTES).update(readAt(fd, size - at - 64, at + 64)).digest("hex");
}

/** A file {@link sealFile} sealed: its content hash, and the SHA-256 and size of its bytes as they now are. */
export interface SealedFile {
  readonly contentHash: string;
  readonly sha256: string;
  readonly bytes: number;
}

/**
 * Record the content hash in a Parquet file written with the placeholder ({@link CONTENT_HASH_COPY_OPTION}):
 * in place, then fsync (unless `fsync: false`: a scratch copy that is copied elsewhere and removed).
 * Returns the hash. Throws (a plain Error naming the file) when the file has no placeholder.
 */
export function sealContentHash(path: string, options: { fsync?: boolean } = {}): string {
  return sealFile(path, options).contentHash;
}

/**
 * {@link sealContentHash}, also giving the SHA-256 of the sealed file's bytes. The file is read
 * once: its bytes before the placeholder are hashed once for both hashes (the hash state copied at
 * the placeholder), and the rest, within the footer, is held to finish each.
 */
export function sealFile(path: string, options: { fsync?: boolean } = {}): SealedFile {
  const fd = openSync(path, "r+");
  try {
    const size = fstatSync(fd).size;
    const at = locate(fd, size);
    if (typeof at === "string") throw new Error(`${path}: ${at}`);
    const h = hashBefore(fd, at);
    const rest = readAt(fd, size - at, at);
    if (rest.length !== size - at) throw new Error(`${path}: file shrank while it was sealed`);
    if (rest.subarray(0, 64).toString("latin1") !== CONTENT_HASH_PLACEHOLDER) throw new Error(`${path}: ${CONTENT_HASH_KEY} is already set`);
    const contentHash = h.copy().update(rest).digest("hex");
    const value = Buffer.from(contentHash, "latin1");
    for (let off = 0; off < 64; ) off += writeSync(fd, value, off, 64 - off, at + off);
    if (options.fsync !== false) fsyncFile(fd);
    const sha256 = h.update(value).update(rest.subarray(64)).digest("hex");
    return { contentHash, sha256, bytes: size };
  } finally {
    closeSync(fd);
  }
}

/** Check a Parquet file's recorded content hash against its bytes (reads the file once). */
export function checkContentHash(path: string): ContentHashCheck {
  return checkOpened(path, (fd, size) => {
    const at = locate(fd, size);
    if (typeof at === "string") return { status: "damaged", reason: at };
    const recorded = readAt(fd, 64, at).toString("latin1");
    if (recorded === CONTENT_HASH_PLACEHOLDER) return { status: "damaged", reason: `${CONTENT_HASH_KEY} is the placeholder (the writer stopped before recording the hash)` };
    if (!HEX64.test(recorded)) return { status: "damaged", reason: `${CONTENT_HASH_KEY} in the footer is not 64 hex digits (damaged)` };
    const actual = hashWithPlaceholder(fd, size, at);
    if (actual !== recorded) return { status: "damaged", reason: `content hashes to ${actual.slice(0, 12)}…, its footer records ${recorded.slice(0, 12)}… (damaged)` };
    return { status: "ok", sha256: recorded };
  });
}

/** Check that a whole file hashes (SHA-256) to `expected` — for objects whose hash a marker records. */
export function checkFileSha256(path: string, expected: string): ContentHashCheck {
  return checkOpened(path, (fd, size) => {
    const actual = hashBefore(fd, size).digest("hex");
    if (actual !== expected) return { status: "damaged", reason: `content hashes to ${actual.slice(0, 12)}…, expected ${expected.slice(0, 12)}… (damaged)` };
    return { status: "ok", sha256: actual };
  });
}

/** Run a check on the opened file and its size; a file that cannot be opened is damaged ("cannot read"). */
function checkOpened(path: string, check: (fd: number, size: number) => ContentHashCheck): ContentHashCheck {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    return { status: "damaged", reason: `cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
  }
  try {
    return check(fd, fstatSync(fd).size);
  } finally {
    closeSync(fd);
  }
}

/**
 * Checks remembered across runs: a file checked ok is not read again while it is the same file —
 * same device, inode, size, modification and change time (nanoseconds; an S3 mirror's local copy is
 * named by the object's etag, so a new object is a new file). A damaged result is never remembered.
 * Kept in one JSON file (`{"format":1,"files":{"<kind>:<path>":"<dev>:<ino>:<size>:<mtimeNs>:<ctimeNs>:<sha256>"}}`);
 * a missing or unreadable cache file is an empty cache, and {@link CheckedFiles.save} replaces it atomically.
 */
export class CheckedFiles {
  readonly #file: string | undefined;
  readonly #entries: Map<string, string>;
  #changed = false;

  private constructor(file: string | undefined, entries: Map<string, string>) {
    this.#file = file;
    this.#entries = entries;
  }

  /** Open the cache kept in `file` (undefined: remember nothing beyond this process). */
  static open(file: string | undefined): CheckedFiles {
    const entries = new Map<string, string>();
    if (file !== undefined) {
      try {
        const v = JSON.parse(readFileSync(file, "utf8")) as { format?: unknown; files?: unknown };
        if (v.format === 1 && typeof v.files === "object" && v.files !== null) {
          for (const [k, s] of Object.entries(v.files as Record<string, unknown>)) if (typeof s === "string") entries.set(k, s);
        }
      } catch {
        /* no cache yet, or a damaged one: start empty */
      }
    }
    return new CheckedFiles(file, entries);
  }

  /** {@link checkContentHash}, remembered. */
  content(path: string): ContentHashCheck {
    return this.#check(`c:${path}`, path, () => checkContentHash(path));
  }

  /** {@link checkFileSha256}, remembered. */
  file(path: string, expected: string): ContentHashCheck {
    return this.#check(`f:${path}`, path, () => checkFileSha256(path, expected), expected);
  }

  #check(key: string, path: string, run: () => ContentHashCheck, expected?: string): ContentHashCheck {
    let id: string;
    try {
      const s = statSync(path, { bigint: true });
      id = `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
    } catch (e) {
      return { status: "damaged", reason: `cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
    }
    const seen = this.#entries.get(key);
    if (seen !== undefined && seen.startsWith(`${id}:`)) {
      const sha256 = seen.slice(id.length + 1);
      if (expected === undefined || sha256 === expected) return { status: "ok", sha256 };
    }
    const r = run();
    if (r.status === "ok") {
      this.#entries.delete(key);
      this.#entries.set(key, `${id}:${r.sha256}`);
      this.#changed = true;
    } else if (seen !== undefined) {
      this.#entries.delete(key);
      this.#changed = true;
    }
    return r;
  }

  /** Write the cache file when a check was added (@lake/durable's writeAtomic); errors are ignored (it is a cache). */
  save(): void {
    if (this.#file === undefined || !this.#changed) return;
    const all = [...this.#entries];
    const files = Object.fromEntries(all.slice(Math.max(0, all.length - MAX_CACHED)));
    try {
      mkdirSync(dirname(this.#file), { recursive: true });
      writeAtomic(this.#file, JSON.stringify({ format: 1, files }), { temp: `${this.#file}.tmp-${process.pid}-${Date.now()}`, mode: 0o644 });
      this.#changed = false;
    } catch {
      /* a cache: the next run checks again (writeAtomic left no temporary file) */
    }
  }
}

/** Most entries a {@link CheckedFiles} keeps (the newest). */
const MAX_CACHED = 200_000;

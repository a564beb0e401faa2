/**
 * Reading a source: what it is before it is opened, the tail window a cursor's digest covers, and
 * the windows of complete lines (or a framing's units) a pass reads from an append source.
 */
import { createHash } from "node:crypto";
import { lstatSync, readSync, statSync, type Stats } from "node:fs";
import { StoreError, errno } from "./errors.js";
import { TAIL_WINDOW, type Framing, type SourceLine } from "./contracts.js";

export function sha256(b: Uint8Array): string {
  return createHash("sha256").update(b).digest("hex");
}

export function readAt(fd: number, pos: number, len: number, file: string): Buffer {
  const buf = Buffer.allocUnsafe(len);
  let got = 0;
  while (got < len) {
    const n = readSync(fd, buf, got, len - got, pos + got);
    if (n === 0) break;
    got += n;
  }
  if (got < len) throw new StoreError("Io", `${file}: short read at ${pos + got} (file shrank while read)`, { data: { file } });
  return buf;
}

/** What {@link parseLine} returns for text that is not JSON (one shared value: no allocation per line). */
export const NOT_JSON: unique symbol = Symbol("not JSON");

/** One line's JSON value, or {@link NOT_JSON} when the text does not parse. */
export function parseLine(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

/** The tail window's bytes: the (up to) 1 MiB before `offset`. */
export function tailBytes(fd: number, offset: number, file: string): Buffer {
  const start = Math.max(0, offset - TAIL_WINDOW);
  return readAt(fd, start, offset - start, file);
}

export function tailDigest(fd: number, offset: number, file: string): string {
  return sha256(tailBytes(fd, offset, file));
}

/** The tail window after `win` is taken: the last bytes of `before` (the window before it) and `win`. */
export function nextTail(before: Buffer, win: Buffer): Buffer {
  if (win.length >= TAIL_WINDOW) return win.subarray(win.length - TAIL_WINDOW);
  const keep = Math.min(before.length, TAIL_WINDOW - win.length);
  return Buffer.concat([before.subarray(before.length - keep), win]);
}

/** The one-line reason a source cannot be read, from an fs error. */
export function sourceReason(e: unknown): string {
  const code = errno(e);
  if (code === "EACCES" || code === "EPERM") return `permission denied (${code})`;
  if (code === "ELOOP") return "symbolic link loop (ELOOP)";
  return code ? `cannot read (${code})` : `cannot read (${e instanceof Error ? e.message : String(e)})`;
}

function fileType(st: Stats): string {
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  if (st.isDirectory()) return "a directory";
  return "not a regular file";
}

/** What a source is before it is opened: gone, a problem (unreadable, not a regular file, a dangling link), or a regular file. */
export function inspectSource(path: string): { gone?: true; problem?: string; st?: Stats } {
  let st: Stats;
  try {
    st = statSync(path);
  } catch (e) {
    const code = errno(e);
    if (code === "ENOENT" || code === "ENOTDIR") {
      try {
        if (lstatSync(path).isSymbolicLink()) return { problem: "dangling symbolic link (its target does not exist)" };
      } catch {
        /* gone */
      }
      return { gone: true };
    }
    return { problem: sourceReason(e) };
  }
  if (!st.isFile()) {
    const t = fileType(st);
    return { problem: t === "not a regular file" ? t : `not a regular file (${t}): never opened` };
  }
  return { st };
}

export function mtimeSec(st: Stats): number {
  return Math.floor(st.mtimeMs / 1000);
}

/** At most this many positions of a line that is not JSON are tried as the start of a complete one. */
const MAX_TAIL_TRIES = 4096;

/**
 * The complete JSON object that ends a line which is not JSON itself: the last line a writer tore
 * (no newline) followed by the next writer's whole line. Tried from the right, at each `{` after the
 * line's first byte; the first suffix that parses as a JSON object is the complete line (an object
 * opened inside the fragment cannot close at the end of a balanced line after it).
 */
function completeTail(bytes: Buffer, line: string): { at: number; text: string; value: unknown } | undefined {
  let i = line.length;
  for (let tries = 0; tries < MAX_TAIL_TRIES; tries++) {
    i = i > 0 ? line.lastIndexOf("{", i - 1) : -1;
    if (i <= 0) return undefined;
    const text = line.slice(i);
    const value = parseLine(text);
    if (value === NOT_JSON) continue; // not here: further left
    if (typeof value !== "object" || value === null || Array.isArray(value)) continue;
    const at = bytes.length - Buffer.byteLength(text);
    // The decoded text must be the bytes themselves (no replaced invalid UTF-8 in the tail).
    if (at <= 0 || !bytes.subarray(at).equals(Buffer.from(text))) return undefined;
    return { at, text, value };
  }
  return undefined;
}

/** Read one window starting at offset: up to the budget, cut at the last complete newline; a longer single line is read whole. null: nothing complete. */
export function readWindow(fd: number, offset: number, size: number, budget: number, file: string, framing?: Framing): Buffer | null {
  if (size <= offset) return null;
  const want = Math.min(budget, size - offset);
  const buf = readAt(fd, offset, want, file);
  if (framing) {
    const n = framing.complete(buf);
    if (n > 0) return buf.subarray(0, n);
    const need = framing.unitLength(buf);
    if (need === undefined || offset + need > size || need <= buf.length) return null;
    return readAt(fd, offset, need, file);
  }
  const nl = buf.lastIndexOf(10);
  if (nl >= 0) return buf.subarray(0, nl + 1);
  if (offset + want >= size) return null;
  const chunks: Buffer[] = [buf];
  let pos = offset + want;
  while (pos < size) {
    const chunk = readAt(fd, pos, Math.min(budget, size - pos), file);
    const idx = chunk.indexOf(10);
    if (idx >= 0) {
      chunks.push(chunk.subarray(0, idx + 1));
      return Buffer.concat(chunks);
    }
    chunks.push(chunk);
    pos += chunk.length;
  }
  return null;
}

/** The source lines {@link splitLines} counts in a window (without its last newline), without splitting it. */
export function lineCount(buf: Buffer): number {
  if (buf.length === 0) return 0;
  let n = buf[buf.length - 1] === 10 ? 0 : 1;
  for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) n++;
  return n;
}

/** Cut a window (without its last newline) into lines, each JSON or not; a torn line a complete one followed is two. */
export function splitLines(buf: Buffer, offset: number, ord: number): { lines: SourceLine[]; invalid: boolean[]; refuse?: string; sourceLines?: number } {
  const lines: SourceLine[] = [];
  const invalid: boolean[] = [];
  let pos = 0;
  let n = ord;
  while (pos < buf.length) {
    const nl = buf.indexOf(10, pos);
    const end = nl < 0 ? buf.length : nl;
    const bytes = buf.subarray(pos, end);
    const text = bytes.toString("utf8");
    const parsed = parseLine(text);
    const bad = parsed === NOT_JSON;
    const value = bad ? undefined : parsed;
    n++;
    const tail = bad ? completeTail(bytes, text) : undefined;
    if (tail) {
      // A torn line that a complete one followed (a writer died mid-line, another appended): the
      // fragment lands as unknown bytes (or as its record, when it is JSON itself), the line after it as its record.
      const frag = bytes.subarray(0, tail.at);
      const fragText = frag.toString("utf8");
      const fragParsed = parseLine(fragText);
      const fragBad = fragParsed === NOT_JSON;
      const fragValue = fragBad ? undefined : fragParsed;
      lines.push({ bytes: frag, text: fragText, value: fragValue, offset: offset + pos, line: n });
      invalid.push(fragBad);
      lines.push({ bytes: bytes.subarray(tail.at), text: tail.text, value: tail.value, offset: offset + pos + tail.at, line: n });
      invalid.push(false);
    } else {
      lines.push({ bytes, text, value, offset: offset + pos, line: n });
      invalid.push(bad);
    }
    pos = end + 1;
  }
  return { lines, invalid, sourceLines: n - ord };
}

// Streaming line reader with byte offsets: never holds more than one chunk plus the current line.
import { createReadStream } from "node:fs";
import { AdaptersError } from "./errors.js";
import type { SourceLine } from "./types.js";

/** Options of `readLines`. */
export interface ReadLinesOptions {
  /** Byte offset to start at (the start of a line). Default 0. */
  readonly start?: number;
  /** Line number of the first line read (1-based). Default 1. */
  readonly firstLine?: number;
  /** Yield a last line that has no newline (a write in progress). Default false: the store leaves it for later. */
  readonly partial?: boolean;
  /** Read chunk size. Default 1 MiB. */
  readonly chunkSize?: number;
}

/**
 * Stream the complete lines of a file from a byte offset: each line's bytes (without `\n`), its
 * byte offset and its line number. Empty lines are skipped (they still count as lines).
 */
export async function* readLines(path: string, options: ReadLinesOptions = {}): AsyncGenerator<SourceLine> {
  let offset = options.start ?? 0;
  let lineNo = options.firstLine ?? 1;
  let carry: Buffer[] = [];
  let carryLen = 0;
  const stream = createReadStream(path, { start: offset, highWaterMark: options.chunkSize ?? 1 << 20 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let pos = 0;
      for (;;) {
        const nl = chunk.indexOf(10, pos);
        if (nl < 0) break;
        let bytes: Buffer;
        if (carryLen) {
          carry.push(chunk.subarray(pos, nl));
          bytes = Buffer.concat(carry, carryLen + nl - pos);
          carry = [];
          carryLen = 0;
        } else bytes = chunk.subarray(pos, nl);
        if (bytes.length) yield { bytes, offset, line: lineNo };
        offset += bytes.length + 1;
        lineNo++;
        pos = nl + 1;
      }
      if (pos < chunk.length) {
        carry.push(chunk.subarray(pos));
        carryLen += chunk.length - pos;
      }
    }
  } catch (e) {
    throw new AdaptersError("Unreadable", `${path}: cannot read: ${(e as Error).message}`, { data: { path }, cause: e });
  } finally {
    stream.destroy();
  }
  if (carryLen && options.partial) yield { bytes: Buffer.concat(carry, carryLen), offset, line: lineNo };
}

// The public record codec: the zod-free decoder and encoder (decode.ts, encode.ts) bound to the
// record schemas of records.ts. The writer does not come through here, so a writer of skippable
// records (lake-collector's hook) never loads zod.
import { encodeFrame } from "./frame.js";
import { decodeWalWith, readWalFileWith, WalScannerWith, type WalDecodeOptions, type WalDecodeResult, type WalScanState } from "./decode.js";
import { prepareRecordWith, type EncodeRecordOptions, type PreparedRecord } from "./encode.js";
import { WalError } from "./errors.js";
import { parseRecordValue, validateKnownRecord } from "./records.js";

/**
 * Decode a whole WAL held in memory. Stops at a torn tail (reported, not an error); throws a
 * WalError (Corrupt, Spliced, SequenceError, NewerWriter, TooLarge) for a refusal, naming the
 * label `file` and the byte offset.
 */
export function decodeWal(bytes: Uint8Array, options: WalDecodeOptions & { readonly file?: string } = {}): WalDecodeResult {
  return decodeWalWith(bytes, options, parseRecordValue);
}

/**
 * Decode a WAL file, streaming: the file is read in chunks and never held whole (memory is
 * bounded by the largest frame, at most 64 MiB). Opens read-only; never modifies the file. Reads
 * to end-of-file as it is when reached; a torn tail is reported, not an error.
 */
export function readWalFile(path: string, options: WalDecodeOptions = {}): Promise<WalDecodeResult> {
  return readWalFileWith(path, options, parseRecordValue);
}

/**
 * Validate a record and compute its payload. A known type is validated against its schema (the
 * defaulted members are written); an unknown type is written as given (a newer build's skippable
 * record). The requirements are the record's own (see `recordRequirements`) plus `extra`.
 */
export function prepareRecord(record: { readonly type: string } & Record<string, unknown>, extra: readonly string[] = []): PreparedRecord {
  return prepareRecordWith(record, extra, validateKnownRecord);
}

/**
 * Encode one record frame: ver 1 when the record requires nothing, ver 3 (`{requires, record}`)
 * otherwise. The encoder adds the record's own requirements itself.
 */
export function encodeRecordFrame(record: { readonly type: string } & Record<string, unknown>, options: EncodeRecordOptions): Buffer {
  const seq = BigInt(options.seq);
  if (seq < 1n) throw new WalError("InvalidArgument", `record seq ${seq} is below 1`);
  const p = prepareRecord(record, options.requires ?? []);
  return encodeFrame({ ver: p.ver, seq, fence: options.fence ?? 0n, payload: p.payload });
}

/**
 * The incremental frame scanner: the decoder of {@link decodeWal}, fed a file piece by piece. Each
 * `scan` takes the bytes that follow the last complete frame, verifies every complete frame with
 * every refusal rule, and stops at a torn tail. A refusal throws the WalError `decodeWal` throws for
 * the same bytes; the scanner then stays where it was. Start one at a saved {@link WalScanState} to
 * go on where a previous pass stopped.
 */
export class WalScanner extends WalScannerWith {
  constructor(options: { readonly file?: string; readonly from?: WalScanState; readonly framesOnly?: boolean } = {}) {
    super(options, parseRecordValue);
  }
}

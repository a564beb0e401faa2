import { EXIT, describeError as describeAnyError } from "@lake/cli";

export { EXIT };
/** What went wrong, as a small closed set; each maps to one documented exit code. */
export type ReaderErrorCode =
  /** Bad command line: unknown command or option, missing argument (exit 2). */
  | "Usage"
  /** A store object, a cache file or a label line is malformed (exit 6). */
  | "Corrupt"
  /** A session, a file or a store that was asked for does not exist (exit 8). */
  | "NotFound"
  /** The fleet store could not be read or written (exit 5). */
  | "Store"
  /** A local file (the cache, an export, labels) could not be read or written (exit 7). */
  | "Io"
  /** A SQL query failed or was refused (exit 2, like a bad option value). */
  | "Query"
  /** `mcp`: a lease renew or release refused — the lease is not held by this owner at this epoch (exit 9). */
  | "Refused";

/** Data carried by a ReaderError. */
export interface ReaderErrorData {
  /** The file, key or URL the error is about, when there is one. */
  readonly file?: string;
}

const BRAND = Symbol.for("lake-reader/ReaderError");

/** The one error class of lake-reader: a code, a one-line message naming the file and the reason, typed data. */
export class ReaderError extends Error {
  override readonly name = "ReaderError";
  readonly code: ReaderErrorCode;
  readonly data: ReaderErrorData;
  readonly [BRAND] = true;

  constructor(code: ReaderErrorCode, message: string, options: { data?: ReaderErrorData; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = options.data ?? {};
  }
}

/** True for a ReaderError from any copy of this package. */
export function isReaderError(e: unknown): e is ReaderError {
  return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
}

/** Exit code per error code: a row of @lake/cli's one table. */
const EXIT_OF: Readonly<Record<ReaderErrorCode, number>> = {
  Usage: EXIT.usage,
  Corrupt: EXIT.corrupt,
  NotFound: EXIT.notFound,
  Store: EXIT.store,
  Io: EXIT.io,
  // A query that fails or is refused is bad input, like a bad option value.
  Query: EXIT.usage,
  Refused: EXIT.refused,
};

/** The exit code of an error code. */
export function exitCodeOf(code: ReaderErrorCode): number {
  return EXIT_OF[code];
}

/** One-line message and exit code of any error: a ReaderError by its code, the rest by @lake/cli. */
export function describeError(e: unknown): { message: string; code: number } {
  return isReaderError(e) ? { message: e.message, code: exitCodeOf(e.code) } : describeAnyError(e);
}

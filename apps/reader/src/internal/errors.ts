import { EXIT, describeErrorWith } from "@lake/cli";
import { brandGuard, defineError, type ErrorDataMap } from "@lake/errors";

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
export interface ReaderErrorFacts {
  /** The file, key or URL the error is about, when there is one. */
  readonly file?: string;
}

/** Typed `data` of each {@link ReaderErrorCode}: every code carries the same facts. */
export type ReaderErrorData = ErrorDataMap<ReaderErrorCode, ReaderErrorFacts>;

/** The one error class of lake-reader: a code, a one-line message naming the file and the reason, typed data. */
export class ReaderError<C extends ReaderErrorCode = ReaderErrorCode> extends defineError<ReaderErrorCode, ReaderErrorData>("lake-reader/ReaderError")<C> {}

/** True for a ReaderError from any copy of this package; with `code`, of that code. */
export const isReaderError = brandGuard<ReaderError, ReaderErrorData>(ReaderError.brand);

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

/** One-line message and exit code of any error: a ReaderError by its code, the rest by @lake/cli. */
export const describeError = describeErrorWith(isReaderError, EXIT_OF);

import { EXIT, describeErrorWith } from "@lake/cli";
import { brandGuard, defineError, type ErrorDataMap } from "@lake/errors";

export { EXIT };
/**
 * What went wrong, as a small closed set, each code with its exit code (a row of @lake/cli's one
 * table): the one list of codes.
 */
const EXIT_OF = {
  /** Bad command line: unknown command or option, missing argument. */
  Usage: EXIT.usage,
  /** A store object, a cache file or a label line is malformed. */
  Corrupt: EXIT.corrupt,
  /** A session, a file or a store that was asked for does not exist. */
  NotFound: EXIT.notFound,
  /** The fleet store could not be read or written. */
  Store: EXIT.store,
  /** A local file (the cache, an export, labels) could not be read or written. */
  Io: EXIT.io,
  /** A SQL query failed or was refused: bad input, like a bad option value. */
  Query: EXIT.usage,
  /** `mcp`: a lease renew or release refused — the lease is not held by this owner at this epoch. */
  Refused: EXIT.refused,
} as const;

/** What went wrong; each code maps to one documented exit code. */
export type ReaderErrorCode = keyof typeof EXIT_OF;

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

/** One-line message and exit code of any error: a ReaderError by its code, the rest by @lake/cli. */
export const describeError = describeErrorWith(isReaderError, EXIT_OF);

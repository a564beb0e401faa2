/** What went wrong, as a small closed set; each maps to one documented exit code. */
export type ReaderErrorCode =
  /** Bad command line: unknown command or option, missing argument (exit 2). */
  | "Usage"
  /** A store object, a cache file or a label line is malformed (exit 3). */
  | "Corrupt"
  /** A session, a file or a store that was asked for does not exist (exit 5). */
  | "NotFound"
  /** The store or the cache could not be read or written (exit 6). */
  | "Io"
  /** A SQL query failed or was refused (exit 7). */
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

/** Exit codes of lake-reader (README, "Exit codes"). */
export const EXIT = {
  ok: 0,
  internal: 1,
  usage: 2,
  corrupt: 3,
  newerWriter: 4,
  notFound: 5,
  io: 6,
  query: 7,
  /** The answer is partial: damaged objects were left out (each named on stderr). */
  partial: 8,
  refused: 9,
} as const;

/** The exit code of an error code. */
export function exitCodeOf(code: ReaderErrorCode): number {
  switch (code) {
    case "Usage":
      return EXIT.usage;
    case "Corrupt":
      return EXIT.corrupt;
    case "NotFound":
      return EXIT.notFound;
    case "Io":
      return EXIT.io;
    case "Query":
      return EXIT.query;
    case "Refused":
      return EXIT.refused;
  }
}

const BRAND = Symbol.for("@lake/cli/CliError");

/** What went wrong on a command line. */
export type CliErrorCode =
  /** An unknown command or option, a missing or malformed value, a bad store URL (exit 2). */
  "Usage";

/** Typed data of a {@link CliError}. */
export interface CliErrorData {
  /** The option the error is about (`--store`), when there is one. */
  readonly option?: string;
}

/** The one error class of @lake/cli: a usage error with a one-line message naming the option and the reason. */
export class CliError extends Error {
  override readonly name = "CliError";
  readonly code: CliErrorCode;
  readonly data: CliErrorData;
  readonly [BRAND] = true;

  constructor(code: CliErrorCode, message: string, options: { data?: CliErrorData; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = options.data ?? {};
  }
}

/** True for a CliError from any copy of this package (brand-based, not `instanceof`). */
export function isCliError(e: unknown): e is CliError {
  return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
}

/** A usage error (exit 2). */
export function usage(message: string, option?: string): CliError {
  return new CliError("Usage", message, option === undefined ? {} : { data: { option } });
}

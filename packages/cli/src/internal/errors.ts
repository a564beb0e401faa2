import { brandGuard, defineError } from "@lake/errors";

/** What went wrong on a command line. */
export type CliErrorCode =
  /** An unknown command or option, a missing or malformed value, a bad store URL (exit 2). */
  "Usage";

/** Typed data of a {@link CliError}. */
export interface CliErrorFacts {
  /** The option the error is about (`--store`), when there is one. */
  readonly option?: string;
}

/** Typed `data` of each {@link CliErrorCode}. */
export interface CliErrorData {
  readonly Usage: CliErrorFacts;
}

/** The one error class of @lake/cli: a usage error with a one-line message naming the option and the reason. */
export class CliError<C extends CliErrorCode = CliErrorCode> extends defineError<CliErrorCode, CliErrorData>("@lake/cli/CliError")<C> {}

/** True for a CliError from any copy of this package (brand-based, not `instanceof`); with `code`, of that code. */
export const isCliError = brandGuard<CliError, CliErrorData>(CliError.brand);

/** A usage error (exit 2). */
export function usage(message: string, option?: string): CliError {
  return new CliError("Usage", message, option === undefined ? {} : { data: { option } });
}

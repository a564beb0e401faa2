import { EXIT, describeErrorWith, ioMessage } from "@lake/cli";
import { brandGuard, defineError, type ErrorDataMap } from "@lake/errors";

/** Error codes of lake-collector, each with its exit code (README "Exit codes"). */
export type CollectorErrorCode = "Usage" | "Locked" | "Incomplete" | "Problems" | "Store" | "Input" | "Io" | "Internal";

/** Exit code per error code: a row of @lake/cli's one table. */
export const EXIT_CODES: Readonly<Record<CollectorErrorCode, number>> = {
  Internal: EXIT.internal,
  Usage: EXIT.usage,
  Incomplete: EXIT.partial,
  Problems: EXIT.partial,
  Locked: EXIT.locked,
  Store: EXIT.store,
  Input: EXIT.corrupt,
  Io: EXIT.io,
};

/** Typed `data` of each {@link CollectorErrorCode}: the message names the file, there are no further facts. */
export type CollectorErrorData = ErrorDataMap<CollectorErrorCode>;

/** The one error class of lake-collector. The message is one line naming the file and the reason. */
export class CollectorError<C extends CollectorErrorCode = CollectorErrorCode> extends defineError<CollectorErrorCode, CollectorErrorData>("lake-collector/CollectorError")<C> {}

/** True for a CollectorError from any copy of this app; with `code`, of that code. */
export const isCollectorError = brandGuard<CollectorError, CollectorErrorData>(CollectorError.brand);

/** One-line message and exit code of any error: a CollectorError by its code, the rest by @lake/cli. */
export const describeError = describeErrorWith(isCollectorError, EXIT_CODES);

/** An I/O failure as a CollectorError `Io` (exit 7): one line naming the path and the errno. */
export function ioFailure(e: unknown, code: string): CollectorError {
  return new CollectorError("Io", ioMessage(e, code), { cause: e });
}

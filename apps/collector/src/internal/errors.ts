import { EXIT, ioMessage } from "@lake/cli";
import { LakeError, brandGuard } from "@lake/errors";

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
export type CollectorErrorData = { readonly [C in CollectorErrorCode]: object };

const BRAND = "lake-collector/CollectorError";

/** The one error class of lake-collector. The message is one line naming the file and the reason. */
export class CollectorError<C extends CollectorErrorCode = CollectorErrorCode> extends LakeError<C, object> {
  constructor(code: C, message: string, options: { cause?: unknown } = {}) {
    super(BRAND, code, message, options);
  }
}

/** True for a CollectorError from any copy of this app; with `code`, of that code. */
export const isCollectorError = brandGuard<CollectorError, CollectorErrorData>(BRAND);

/** An I/O failure as a CollectorError `Io` (exit 7): one line naming the path and the errno. */
export function ioFailure(e: unknown, code: string): CollectorError {
  return new CollectorError("Io", ioMessage(e, code), { cause: e });
}

import { EXIT, ioMessage } from "@lake/cli";
const BRAND = Symbol.for("lake-collector/CollectorError");

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

/** The one error class of lake-collector. The message is one line naming the file and the reason. */
export class CollectorError extends Error {
  override readonly name = "CollectorError";
  readonly code: CollectorErrorCode;
  constructor(code: CollectorErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for a CollectorError from any copy of this app. */
export function isCollectorError(e: unknown): e is CollectorError {
  return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
}

/** An I/O failure as a CollectorError `Io` (exit 7): one line naming the path and the errno. */
export function ioFailure(e: unknown, code: string): CollectorError {
  return new CollectorError("Io", ioMessage(e, code), { cause: e });
}

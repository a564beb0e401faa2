const BRAND = Symbol.for("lake-collector/CollectorError");

/** Error codes of lake-collector, each with its exit code (README "Exit codes"). */
export type CollectorErrorCode = "Usage" | "Locked" | "Incomplete" | "Problems" | "Store" | "Input" | "Internal";

/** Exit code per error code. */
export const EXIT_CODES: Readonly<Record<CollectorErrorCode, number>> = {
  Internal: 1,
  Usage: 2,
  Incomplete: 3,
  Problems: 3,
  Locked: 4,
  Store: 5,
  Input: 6,
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

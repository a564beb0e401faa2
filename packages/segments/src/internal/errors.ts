const BRAND = Symbol.for("@lake/segments/SegmentError");

/** Error codes of @lake/segments. */
export type SegmentErrorCode = "WriteFailed" | "ReadFailed" | "InvalidRow";

/** The one error class of @lake/segments. */
export class SegmentError extends Error {
  override readonly name = "SegmentError";
  readonly code: SegmentErrorCode;
  readonly data: Readonly<Record<string, unknown>>;
  constructor(code: SegmentErrorCode, message: string, options: { data?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = options.data ?? {};
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for a SegmentError from any copy of this package. */
export function isSegmentError(e: unknown): e is SegmentError {
  return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
}

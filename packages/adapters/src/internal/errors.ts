const BRAND = Symbol.for("@lake/adapters/AdaptersError");

/** Error codes of @lake/adapters. */
export type AdaptersErrorCode = "UnknownRuntime" | "InvalidSource" | "Unreadable" | "InvalidGlob" | "InvalidState";

/** The one error class of @lake/adapters: `message` is one line naming the file and the reason. */
export class AdaptersError extends Error {
  override readonly name = "AdaptersError";
  readonly code: AdaptersErrorCode;
  readonly data: Readonly<Record<string, unknown>>;
  constructor(code: AdaptersErrorCode, message: string, options: { data?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = options.data ?? {};
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for an AdaptersError from any copy of this package (brand-based, not instanceof). */
export function isAdaptersError(e: unknown): e is AdaptersError {
  return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
}

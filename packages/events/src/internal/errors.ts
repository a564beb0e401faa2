const BRAND = Symbol.for("@lake/events/EventsError");

/** Error codes of @lake/events. */
export type EventsErrorCode = "InvalidRecord" | "InvalidUsage" | "InvalidRollup" | "NewerRollup" | "OlderRollup";

/** The one error class of @lake/events. */
export class EventsError extends Error {
  override readonly name = "EventsError";
  readonly code: EventsErrorCode;
  readonly data: Readonly<Record<string, unknown>>;
  constructor(code: EventsErrorCode, message: string, options: { data?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = options.data ?? {};
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for an EventsError from any copy of this package. */
export function isEventsError(e: unknown): e is EventsError {
  return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
}

import { brandGuard, defineError } from "@lake/errors";

/** Error codes of @lake/events. */
export type EventsErrorCode = "InvalidRecord" | "InvalidUsage" | "InvalidRollup" | "NewerRollup" | "OlderRollup";

/** Typed `data` of each {@link EventsErrorCode}. */
export interface EventsErrorData {
  readonly InvalidRecord: object;
  readonly InvalidUsage: object;
  /** The rollup file that does not decode. */
  readonly InvalidRollup: { readonly file?: string };
  /** The rollup file and the (newer) version it was written with. */
  readonly NewerRollup: { readonly file?: string; readonly version?: number };
  /** The rollup file and the (older) version it was written with. */
  readonly OlderRollup: { readonly file?: string; readonly version?: number };
}

/** The one error class of @lake/events. */
export class EventsError<C extends EventsErrorCode = EventsErrorCode> extends defineError<EventsErrorCode, EventsErrorData>("@lake/events/EventsError")<C> {}

/** True for a EventsError from any copy of this package (brand-based, not `instanceof`); with `code`, of that code. */
export const isEventsError = brandGuard<EventsError, EventsErrorData>(EventsError.brand);

import { brandGuard, defineError } from "@lake/errors";

/** Error codes of @lake/adapters. */
export type AdaptersErrorCode = "UnknownRuntime" | "InvalidSource" | "Unreadable" | "InvalidGlob" | "InvalidState";

/** Typed `data` of each {@link AdaptersErrorCode}. */
export interface AdaptersErrorData {
  /** The runtime name that is not known. */
  readonly UnknownRuntime: { readonly runtime?: string };
  /** The transcript (or directory) that is not a source of the runtime. */
  readonly InvalidSource: { readonly path?: string };
  readonly Unreadable: { readonly path?: string };
  readonly InvalidGlob: { readonly glob?: string };
  /** The source whose saved parse state does not fit it. */
  readonly InvalidState: { readonly path?: string };
}

/** The one error class of @lake/adapters: `message` is one line naming the file and the reason. */
export class AdaptersError<C extends AdaptersErrorCode = AdaptersErrorCode> extends defineError<AdaptersErrorCode, AdaptersErrorData>("@lake/adapters/AdaptersError")<C> {}

/** True for an AdaptersError from any copy of this package (brand-based, not `instanceof`); with `code`, of that code. */
export const isAdaptersError = brandGuard<AdaptersError, AdaptersErrorData>(AdaptersError.brand);

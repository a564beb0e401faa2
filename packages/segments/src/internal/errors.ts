import { brandGuard, defineError } from "@lake/errors";

/** Error codes of @lake/segments. */
export type SegmentErrorCode = "WriteFailed" | "ReadFailed" | "InvalidRow";

/** Typed `data` of each {@link SegmentErrorCode}. */
export interface SegmentErrorData {
  /** The segment being written. */
  readonly WriteFailed: { readonly path?: string };
  /** The segment (`path`) or rollup (`file`) that could not be read. */
  readonly ReadFailed: { readonly path?: string; readonly file?: string };
  /** The column whose value does not fit. */
  readonly InvalidRow: { readonly column?: string };
}

/** The one error class of @lake/segments. */
export class SegmentError<C extends SegmentErrorCode = SegmentErrorCode> extends defineError<SegmentErrorCode, SegmentErrorData>("@lake/segments/SegmentError")<C> {}

/** True for a SegmentError from any copy of this package (brand-based, not `instanceof`); with `code`, of that code. */
export const isSegmentError = brandGuard<SegmentError, SegmentErrorData>(SegmentError.brand);

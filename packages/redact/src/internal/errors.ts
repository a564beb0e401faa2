import { brandGuard, defineError, type ErrorDataMap } from "@lake/errors";

/** Every reason `@lake/redact` can fail with. */
export type RedactErrorCode =
  /** The key file exists but does not hold a valid key (`lake-redact-key v1` + 64 hex). */
  | "KeyCorrupt"
  /** The key file is readable by group or others, or is not a regular file. */
  | "KeyPermissions"
  /** The key file or its directory could not be read or created. */
  | "KeyIo"
  /** A rule in the table is malformed (bad id, no keywords, sticky regex, duplicate id). */
  | "InvalidRule"
  /** An option passed to `createRedactor` is out of range. */
  | "InvalidOption"
  /** A value passed to `redactValue` is not a JSON value (function, bigint, symbol, class instance). */
  | "InvalidValue"
  /** A value nests deeper than `maxDepth` (or is cyclic). */
  | "TooDeep";

/** Structured detail attached to a {@link RedactError}; never holds a secret. */
export interface RedactErrorFacts {
  /** The file the error is about, when there is one. */
  readonly file?: string;
  /** The rule id the error is about, when there is one. */
  readonly rule?: string;
  /** JSON path (keys and indexes) of the offending value, when there is one. */
  readonly path?: readonly (string | number)[];
}

/** Typed `data` of each {@link RedactErrorCode}: every code carries the same facts. */
export type RedactErrorData = ErrorDataMap<RedactErrorCode, RedactErrorFacts>;

/** The one error class of `@lake/redact`: a string-literal `code`, typed `data`, ES2022 `cause`. */
export class RedactError<C extends RedactErrorCode = RedactErrorCode> extends defineError<RedactErrorCode, RedactErrorData>("@lake/redact/RedactError")<C> {}

/** True when `e` is a {@link RedactError} from any copy of this package (brand-based, not `instanceof`); with `code`, of that code. */
export const isRedactError = brandGuard<RedactError, RedactErrorData>(RedactError.brand);

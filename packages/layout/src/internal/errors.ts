import { brandGuard, defineError, type ErrorDataMap } from "@lake/errors";

/** The codes a {@link LayoutError} can carry. */
export type LayoutErrorCode =
  /** A store URL that cannot be opened (bad scheme, relative path, missing bucket). */
  | "InvalidUrl"
  /** The config file (`$XDG_CONFIG_HOME/lake/config.json`) is not JSON or holds a key or value it may not. */
  | "InvalidConfig"
  /** An object key or a partition value that the layout does not allow. */
  | "InvalidKey"
  /** The object does not exist. */
  | "NotFound"
  /** A conditional operation's precondition did not hold and the caller asked for an error. */
  | "PreconditionFailed"
  /** A compare-and-swap loop gave up after its attempt budget. */
  | "Conflict"
  /** A conditional write's outcome could not be established (5xx/timeout and the re-read could not settle it). */
  | "Unknown"
  /** A stored object that should be JSON of a known shape is not. */
  | "Corrupt"
  /** Downloaded or cached bytes do not hash to the name they are stored under. */
  | "HashMismatch"
  /** The local backend's per-key lock could not be taken within its timeout. */
  | "Locked"
  /** The caller does not hold the lease it tried to renew or release. */
  | "NotHolder"
  /** Any other I/O or service error (permission, network, disk). */
  | "Io";

/** Typed data attached to a {@link LayoutError}. */
export interface LayoutErrorFacts {
  /** The object key (or file path) the error is about, when there is one. */
  readonly key?: string;
  /** The store URL, when known. */
  readonly store?: string;
  /** A short machine-readable detail, e.g. the offending field. */
  readonly detail?: string;
}

/** Typed `data` of each {@link LayoutErrorCode}: every code carries the same facts. */
export type LayoutErrorData = ErrorDataMap<LayoutErrorCode, LayoutErrorFacts>;

/**
 * The one error class of @lake/layout. `code` says what went wrong, `data` names the key and the
 * store, `cause` keeps the underlying error. Use {@link isLayoutError} rather than `instanceof`:
 * it works across two copies of the package.
 */
export class LayoutError<C extends LayoutErrorCode = LayoutErrorCode> extends defineError<LayoutErrorCode, LayoutErrorData>("@lake/layout/LayoutError")<C> {}

/** True for a {@link LayoutError} from any copy of @lake/layout (brand-based, not `instanceof`); with `code`, of that code. */
export const isLayoutError = brandGuard<LayoutError, LayoutErrorData>(LayoutError.brand);

import { brandGuard, defineError, type ErrorDataMap, type LakeErrorOptions } from "@lake/errors";

/**
 * The one error class of @lake/wal. Every refusal the package makes is a {@link WalError} with a
 * string-literal `code`, typed `data` naming the file and (where it applies) the byte offset, and
 * an ES2022 `cause` when it wraps a lower-level failure.
 */

/** Every reason @lake/wal refuses something. */
export type WalErrorCode =
  /** A complete frame failed to verify: bad digest, unknown ver, malformed lineage frame, bad JSON, a record that does not decode, or len over 64 MiB. */
  | "Corrupt"
  /** One file carries two different lineage ids. */
  | "Spliced"
  /** Record sequence does not start at 1, has a gap, or goes backwards. */
  | "SequenceError"
  /** A gated (ver 3) frame requires a feature this build does not know: a newer writer wrote the file. Not corruption. */
  | "NewerWriter"
  /** More than the per-pass read limit (1 GiB by default) of one WAL, or a payload over 64 MiB on encode. */
  | "TooLarge"
  /** A caller-supplied value is invalid: a triple field with U+001F, a record that does not validate, a bad feature name. */
  | "InvalidArgument"
  /** The feature floor could not be raised, so the gated append was refused and nothing was written. */
  | "FeatureFloor"
  /** An archive container is not sealed (its last four bytes are not WALK) and must not be read. */
  | "Unsealed"
  /** An archive container's members cannot be found or a member's payload digest does not verify. */
  | "ArchiveCorrupt"
  /** Resolution is ambiguous: two archive containers with one stamp, or two live copies of one address. */
  | "Ambiguous"
  /** A file or member that was asked for does not exist. */
  | "NotFound"
  /** The writer was used after close, or a second writer state was detected. */
  | "Closed"
  /** An operating-system or SQLite failure (the original error is the `cause`). */
  | "Io";

/** Typed context carried by every {@link WalError}. */
export interface WalErrorFacts {
  /** The file the error is about, when there is one. */
  readonly file?: string;
  /** Byte offset in that file of the frame (or member) at fault. */
  readonly offset?: number;
  /** Record sequence number involved, when there is one. */
  readonly seq?: number;
  /** Features a newer writer required that this build does not know (code NewerWriter). */
  readonly unknownFeatures?: readonly string[];
}

/** Typed `data` of each {@link WalErrorCode}: every code carries the same context. */
export type WalErrorData = ErrorDataMap<WalErrorCode, WalErrorFacts>;

/**
 * The error thrown by every @lake/wal function for a refusal. The message is one line naming the
 * file and the reason (`<file>: <reason> at byte <offset>`).
 */
export class WalError<C extends WalErrorCode = WalErrorCode> extends defineError<WalErrorCode, WalErrorData>("@lake/wal/WalError")<C> {
  /** The reason alone, without the file and offset prefix. */
  readonly reason: string;

  constructor(code: C, reason: string, options: LakeErrorOptions<WalErrorFacts> = {}) {
    const where = options.data?.file === undefined ? "" : `${options.data.file}: `;
    const at = options.data?.offset === undefined ? "" : ` at byte ${options.data.offset}`;
    super(code, `${where}${reason}${at}`, options);
    this.reason = reason;
  }
}

/**
 * True for a {@link WalError}, including one thrown by another copy of this package (the check
 * is on a global symbol brand, not on `instanceof`); with `code`, of that code.
 */
export const isWalError = brandGuard<WalError, WalErrorData>(WalError.brand);

/** Wrap an unknown failure as an Io WalError naming the file (a WalError passes through). */
export function ioError(file: string, what: string, cause: unknown): WalError {
  if (isWalError(cause)) return cause;
  const code = (cause as { code?: unknown } | null)?.code;
  const msg = cause instanceof Error ? cause.message : String(cause);
  if (code === "ENOENT") return new WalError("NotFound", `${what}: no such file`, { data: { file }, cause });
  return new WalError("Io", `${what}: ${msg}`, { data: { file }, cause });
}

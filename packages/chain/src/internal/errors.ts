import { brandGuard, defineError } from "@lake/errors";

/**
 * Error codes of @lake/chain.
 *
 * - `Locked`: another parser holds the chain's `.lock`; nothing was written.
 * - `NotHead`: the round does not follow the chain's head (wrong number or `prev`); nothing was written.
 * - `Reserved`: the next round's name is held by an empty reservation younger than a minute; nothing was written.
 * - `Corrupt`: a round file fails to decode, or its commit digest, name or links do not match.
 * - `Fork`: two complete rounds carry the same round number.
 * - `InvalidInput`: an index or round given to a function breaks its contract.
 * - `Io`: a filesystem operation failed (the `cause` holds the system error).
 */
export type ChainErrorCode = "Locked" | "NotHead" | "Reserved" | "Corrupt" | "Fork" | "InvalidInput" | "Io";

/** Facts every {@link ChainError} may carry: the file (or directory) it is about. */
interface FileData {
  readonly file?: string;
}

/** Typed `data` of each {@link ChainErrorCode}. */
export interface ChainErrorData {
  /** The lock file and, when its holder could be read, the holder. */
  readonly Locked: FileData & { readonly pid?: number | undefined; readonly host?: string | undefined };
  /** The rounds directory, the round offered and the chain's head round (0 for an empty chain). */
  readonly NotHead: FileData & { readonly round?: number; readonly head?: number };
  readonly Reserved: FileData;
  /** The round file; `round` its number, `path` the JSON path at fault, `expected`/`actual` a digest mismatch. */
  readonly Corrupt: FileData & { readonly round?: number; readonly path?: string; readonly expected?: string; readonly actual?: string };
  /** One of the two round files carrying the round number. */
  readonly Fork: FileData & { readonly round?: number };
  /** The conversation id, when that is what is invalid. */
  readonly InvalidInput: { readonly id?: string };
  readonly Io: FileData;
}

/** The one error class of @lake/chain: a `code`, typed `data` (often the `file` concerned) and an ES2022 `cause`. */
export class ChainError<C extends ChainErrorCode = ChainErrorCode> extends defineError<ChainErrorCode, ChainErrorData>("@lake/chain/ChainError")<C> {}

/** True for a ChainError from any copy of this package (brand-based, not `instanceof`); with `code`, of that code. */
export const isChainError = brandGuard<ChainError, ChainErrorData>(ChainError.brand);

/** The system error code of a Node fs error, or undefined. */
export function errnoCode(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && typeof (e as { code?: unknown }).code === "string" ? (e as { code: string }).code : undefined;
}

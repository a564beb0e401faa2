const BRAND = Symbol.for("@lake/chain/ChainError");

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

/** The one error class of @lake/chain: a `code`, typed `data` (often the `file` concerned) and an ES2022 `cause`. */
export class ChainError extends Error {
  override readonly name = "ChainError";
  /** What went wrong, as a string literal. */
  readonly code: ChainErrorCode;
  /** Facts about the failure (the file concerned, round numbers …). */
  readonly data: Readonly<Record<string, unknown>>;
  constructor(code: ChainErrorCode, message: string, options: { data?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = options.data ?? {};
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for a ChainError from any copy of this package (brand-based, not `instanceof`). */
export function isChainError(e: unknown): e is ChainError {
  return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
}

/** The system error code of a Node fs error, or undefined. */
export function errnoCode(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && typeof (e as { code?: unknown }).code === "string" ? (e as { code: string }).code : undefined;
}

const BRAND = Symbol.for("@lake/store/StoreError");

/**
 * Error codes of @lake/store.
 * - `Locked`: another live process holds the session's `.lock`.
 * - `Corrupt`: a landed file, cursor, state file or index cannot be decoded.
 * - `NotFound`: a session, file or directory named by the caller does not exist.
 * - `Exists`: a name that is created without replacing is already taken (landed file, repack destination).
 * - `InvalidArgument`: the caller passed something unusable (bad session id, stream, kind, budget, convert output).
 * - `Closed`: the session or pass was used after close.
 * - `Forgotten`: the session has a forget record (`_forget/<id>.json`): nothing lands in it until the forget is undone.
 * - `Io`: an operating-system error other than the above (the errno code is in `data.errno`).
 */
export type StoreErrorCode = "Locked" | "Corrupt" | "NotFound" | "Exists" | "InvalidArgument" | "Closed" | "Forgotten" | "Io";

/** The one error class of @lake/store. `message` is one line naming the file and the reason. */
export class StoreError extends Error {
  override readonly name = "StoreError";
  /** What went wrong, as a small string-literal union. */
  readonly code: StoreErrorCode;
  /** Typed details: usually `file`, and for `Locked` the holder (`pid`, `host`, `started`). */
  readonly data: Readonly<Record<string, unknown>>;
  constructor(code: StoreErrorCode, message: string, options: { data?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = options.data ?? {};
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for a StoreError from any copy of this package (brand-based, not `instanceof`). */
export function isStoreError(e: unknown): e is StoreError {
  return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
}

/** The errno code of a Node fs error, or undefined. */
export function errno(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && typeof (e as { code?: unknown }).code === "string" ? (e as { code: string }).code : undefined;
}

/** Wrap an fs error as StoreError `Io` naming the file. */
export function ioError(file: string, what: string, e: unknown): StoreError {
  if (isStoreError(e)) return e;
  const code = errno(e);
  return new StoreError(code === "ENOENT" ? "NotFound" : "Io", `${file}: ${what} failed: ${code ?? (e instanceof Error ? e.message : String(e))}`, {
    data: { file, errno: code },
    cause: e,
  });
}

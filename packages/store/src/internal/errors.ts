import { brandGuard, defineError } from "@lake/errors";

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

/** Facts every {@link StoreError} may carry: the file (or directory) it is about. */
interface FileData {
  readonly file?: string;
}

/** Typed `data` of each {@link StoreErrorCode}. */
export interface StoreErrorData {
  /** The lock file and, when its holder could be read, the holder. */
  readonly Locked: FileData & { readonly pid?: number; readonly host?: string; readonly acquiredAt?: string };
  /** The file that does not decode; `key` the entry at fault, `seq` / `schema` what it claimed. */
  readonly Corrupt: FileData & { readonly key?: string; readonly seq?: number; readonly schema?: unknown; readonly line?: number };
  readonly NotFound: FileData & { readonly errno?: string | undefined; readonly seq?: number };
  readonly Exists: FileData;
  /** The offending argument by name (`kind`, `session id`, a budget …). */
  readonly InvalidArgument: FileData & { readonly [argument: string]: unknown };
  readonly Closed: FileData;
  readonly Forgotten: FileData;
  /** The file and the system error code. */
  readonly Io: FileData & { readonly errno?: string | undefined };
}

/** The one error class of @lake/store. `message` is one line naming the file and the reason. */
export class StoreError<C extends StoreErrorCode = StoreErrorCode> extends defineError<StoreErrorCode, StoreErrorData>("@lake/store/StoreError")<C> {}

/** True for a StoreError from any copy of this package (brand-based, not `instanceof`); with `code`, of that code. */
export const isStoreError = brandGuard<StoreError, StoreErrorData>(StoreError.brand);

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

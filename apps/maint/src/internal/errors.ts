import { isLayoutError } from "@lake/layout";

/** The codes a {@link MaintError} can carry; each maps to one documented exit code. */
export type MaintErrorCode =
  /** Bad command line: unknown command or option, missing or malformed value. Exit 2. */
  | "Usage"
  /** The store, a key or a file the command needs does not exist (e.g. no fleet.json). Exit 3. */
  | "NotFound"
  /** The command refused to replace something already there (a second `init`) or lost a race. Exit 4. */
  | "Refused"
  /** A lease the command needs is held by someone else; nothing was written under it. Exit 5. */
  | "Held"
  /** The lease this run held was taken over or expired: the run stopped before its next write. Exit 4. */
  | "LeaseLost"
  /** A stored object is not what the layout says it must be (bad JSON, bad shape, unreadable Parquet). Exit 6. */
  | "Corrupt"
  /** Any other I/O or service failure. Exit 7. */
  | "Io";

const BRAND = Symbol.for("lake-maint/MaintError");

/** Typed data of a {@link MaintError}. */
export interface MaintErrorData {
  /** The object key or file the error is about. */
  readonly key?: string;
  /** The store URL. */
  readonly store?: string;
}

/**
 * The one error class of lake-maint. `code` picks the exit code, the message is one line naming the
 * key or file and the reason, `cause` keeps the underlying error. Use {@link isMaintError}.
 */
export class MaintError extends Error {
  override readonly name = "MaintError";
  readonly code: MaintErrorCode;
  readonly data: MaintErrorData;
  readonly [BRAND] = true;

  constructor(code: MaintErrorCode, message: string, data: MaintErrorData = {}, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = data;
  }
}

/** True for a {@link MaintError} from any copy of lake-maint (brand-based, not `instanceof`). */
export function isMaintError(e: unknown, code?: MaintErrorCode): e is MaintError {
  if (typeof e !== "object" || e === null) return false;
  if ((e as Record<symbol, unknown>)[BRAND] !== true) return false;
  return code === undefined || (e as MaintError).code === code;
}

/** Process exit codes of lake-maint (documented in the README). */
export const EXIT = {
  ok: 0,
  /** verify found problems; an operation finished with items it could not process. */
  problems: 1,
  usage: 2,
  notFound: 3,
  refused: 4,
  held: 5,
  corrupt: 6,
  io: 7,
} as const;

/** The exit code of an error code. */
export function exitCodeOf(code: MaintErrorCode): number {
  switch (code) {
    case "Usage":
      return EXIT.usage;
    case "NotFound":
      return EXIT.notFound;
    case "Refused":
    case "LeaseLost":
      return EXIT.refused;
    case "Held":
      return EXIT.held;
    case "Corrupt":
      return EXIT.corrupt;
    case "Io":
      return EXIT.io;
  }
}

/** One-line message and exit code of any error. */
export function describeError(e: unknown): { message: string; code: number } {
  if (isMaintError(e)) return { message: e.message, code: exitCodeOf(e.code) };
  if (isLayoutError(e)) {
    const code =
      e.code === "InvalidUrl" || e.code === "InvalidConfig" || e.code === "InvalidKey" ? EXIT.usage
      : e.code === "NotFound" ? EXIT.notFound
      : e.code === "Corrupt" || e.code === "HashMismatch" ? EXIT.corrupt
      : e.code === "Conflict" || e.code === "PreconditionFailed" || e.code === "NotHolder" ? EXIT.refused
      : e.code === "Locked" ? EXIT.held
      : EXIT.io;
    return { message: e.message, code };
  }
  if (e instanceof Error && e.name === "SegmentError") return { message: e.message, code: EXIT.corrupt };
  return { message: e instanceof Error ? e.message : String(e), code: EXIT.io };
}

/** An error message as a reason after `<key>: `: one line, without a leading `<key>: ` of its own. */
export function reasonOf(message: string, key: string): string {
  const line = message.replace(/\s*\n\s*/g, " ");
  return line.startsWith(`${key}: `) ? line.slice(key.length + 2) : line;
}

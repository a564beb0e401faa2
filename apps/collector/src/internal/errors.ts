const BRAND = Symbol.for("lake-collector/CollectorError");

/** Error codes of lake-collector, each with its exit code (README "Exit codes"). */
export type CollectorErrorCode = "Usage" | "Locked" | "Incomplete" | "Problems" | "Store" | "Input" | "Io" | "Internal";

/** Exit code per error code. */
export const EXIT_CODES: Readonly<Record<CollectorErrorCode, number>> = {
  Internal: 1,
  Usage: 2,
  Incomplete: 3,
  Problems: 3,
  Locked: 4,
  Store: 5,
  Input: 6,
  Io: 7,
};

/** The one error class of lake-collector. The message is one line naming the file and the reason. */
export class CollectorError extends Error {
  override readonly name = "CollectorError";
  readonly code: CollectorErrorCode;
  constructor(code: CollectorErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for a CollectorError from any copy of this app. */
export function isCollectorError(e: unknown): e is CollectorError {
  return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
}

/** errno codes that mean the disk refused (read-only, full, permission): exit 7, never "internal error". */
const IO_ERRNOS: Readonly<Record<string, string>> = {
  EROFS: "read-only file system",
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EIO: "input/output error",
  EFBIG: "file too large",
  EMFILE: "too many open files",
  ENFILE: "too many open files in system",
};

function field(e: unknown, ...path: string[]): unknown {
  let v: unknown = e;
  for (const k of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** The errno of an I/O failure (EROFS, ENOSPC, EACCES …) anywhere in an error or its cause, else undefined. */
export function ioErrno(e: unknown): string | undefined {
  for (const c of [field(e, "data", "errno"), field(e, "code"), field(e, "cause", "code"), field(e, "cause", "data", "errno"), field(e, "cause", "cause", "code")]) {
    if (typeof c === "string" && c in IO_ERRNOS) return c;
  }
  return undefined;
}

/** The file an error names (a lake package's `data.file`, a Node fs error's `path`), else undefined. */
export function errorFile(e: unknown): string | undefined {
  for (const c of [field(e, "data", "file"), field(e, "data", "path"), field(e, "path"), field(e, "cause", "path"), field(e, "cause", "data", "file")]) {
    if (typeof c === "string" && c) return c;
  }
  return undefined;
}

/** An I/O failure as a CollectorError `Io` (exit 7): one line naming the path and the errno. */
export function ioFailure(e: unknown, code: string): CollectorError {
  const file = errorFile(e);
  let msg = e instanceof Error ? e.message : String(e);
  // A bare Node error ("EROFS: read-only file system, mkdir '/r/_export'") becomes "<path>: mkdir failed: EROFS".
  const syscall = field(e, "syscall");
  if (file && !msg.includes(`${file}:`)) msg = `${file}: ${typeof syscall === "string" ? `${syscall} ` : ""}failed: ${code}`;
  if (!msg.includes(IO_ERRNOS[code]!)) msg += ` (${IO_ERRNOS[code]!})`;
  return new CollectorError("Io", msg, { cause: e });
}

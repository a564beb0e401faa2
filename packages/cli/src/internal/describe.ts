// What a thrown error means to a user: one line and one exit code of the shared table. Each app
// maps its own error class first (a code per exit name) and hands everything else here, so an
// error of a lake package, a Node fs error or a bug gets the same code in all three apps.
import { isLakeError } from "@lake/errors";
import { isLayoutError } from "@lake/layout/defaults";
import { isCliError } from "./errors.js";
import { EXIT, type ExitName } from "./exit.js";

/** errno codes that mean the local disk refused (read-only, full, permission): exit 7, never "internal error". */
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

/**
 * The exit name of each error code lake's packages use (@lake/store, @lake/chain, @lake/wal,
 * @lake/segments, @lake/events, @lake/redact, @lake/adapters). A code not listed is a bug: exit 1.
 */
const PACKAGE_CODES: Readonly<Record<string, ExitName>> = {
  Locked: "locked",
  Corrupt: "corrupt",
  HashMismatch: "corrupt",
  Spliced: "corrupt",
  ArchiveCorrupt: "corrupt",
  Fork: "corrupt",
  KeyCorrupt: "corrupt",
  InvalidRecord: "corrupt",
  InvalidRollup: "corrupt",
  ReadFailed: "corrupt",
  WriteFailed: "io",
  NotFound: "notFound",
  Forgotten: "notFound",
  NewerWriter: "refused",
  NewerRollup: "refused",
  FeatureFloor: "refused",
  PreconditionFailed: "refused",
  Conflict: "refused",
  NotHolder: "refused",
  Exists: "refused",
  InvalidUrl: "usage",
  InvalidConfig: "usage",
  InvalidKey: "usage",
  UnknownRuntime: "usage",
  InvalidGlob: "usage",
  InvalidRule: "usage",
  InvalidOption: "usage",
  Ambiguous: "corrupt",
  Io: "io",
  KeyIo: "io",
  KeyPermissions: "io",
};

/** @lake/layout's codes where they differ from {@link PACKAGE_CODES}: its I/O is the fleet store's. */
const LAYOUT_CODES: Readonly<Record<string, ExitName>> = { Io: "store", Unknown: "store" };

function field(e: unknown, ...path: string[]): unknown {
  let v: unknown = e;
  for (const k of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** The errno of a local I/O failure (EROFS, ENOSPC, EACCES …) anywhere in an error or its cause, else undefined. */
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

/** One line for a local I/O failure with errno `code`, naming the path and the errno. */
export function ioMessage(e: unknown, code: string): string {
  const file = errorFile(e);
  let msg = e instanceof Error ? e.message : String(e);
  // A bare Node error ("EROFS: read-only file system, mkdir '/r/_export'") becomes "<path>: mkdir failed: EROFS".
  const syscall = field(e, "syscall");
  if (file && !msg.includes(`${file}:`)) msg = `${file}: ${typeof syscall === "string" ? `${syscall} ` : ""}failed: ${code}`;
  const reason = IO_ERRNOS[code];
  if (reason !== undefined && !msg.includes(reason)) msg += ` (${reason})`;
  return msg;
}

/**
 * The message and exit code of an error no app's own class claimed: a usage error of @lake/cli, a
 * local I/O failure (7), an error of a lake package by its code, else a bug (1, "internal error: …").
 */
export function describeError(e: unknown): { message: string; code: number } {
  if (isCliError(e)) return { message: e.message, code: EXIT.usage };
  const errno = ioErrno(e);
  if (errno !== undefined) return { message: ioMessage(e, errno), code: EXIT.io };
  if (isLakeError(e)) {
    const name = (isLayoutError(e) ? LAYOUT_CODES[e.code] : undefined) ?? PACKAGE_CODES[e.code];
    return { message: e.message, code: name === undefined ? EXIT.internal : EXIT[name] };
  }
  return { message: `internal error: ${e instanceof Error ? e.message : String(e)}`, code: EXIT.internal };
}

/**
 * An app's `describeError`: an error its own class's guard claims gets the exit code of its code
 * in `exits` (a row of {@link EXIT} per code), every other error {@link describeError}'s.
 */
export function describeErrorWith<Code extends string>(
  isOwn: (e: unknown) => e is Error & { readonly code: Code },
  exits: Readonly<Record<Code, number>>,
): (e: unknown) => { message: string; code: number } {
  return (e) => (isOwn(e) ? { message: e.message, code: exits[e.code] } : describeError(e));
}

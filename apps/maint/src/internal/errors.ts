import { EXIT, describeErrorWith } from "@lake/cli";
import { brandGuard, defineError, type ErrorDataMap } from "@lake/errors";

export { EXIT };

/**
 * The codes a {@link MaintError} can carry, each with its exit code (a row of @lake/cli's one table):
 * the one list of codes.
 */
const EXIT_OF = {
  /** Bad command line: unknown command or option, missing or malformed value. */
  Usage: EXIT.usage,
  /** The store, a key or a file the command needs does not exist (e.g. no fleet.json). */
  NotFound: EXIT.notFound,
  /** The command refused to replace something already there (a second `init`) or lost a race. */
  Refused: EXIT.refused,
  /** A lease the command needs is held by someone else; nothing was written under it. */
  Held: EXIT.locked,
  /** The lease this run held was taken over or expired: the run stopped before its next write. */
  LeaseLost: EXIT.refused,
  /** A stored object is not what the layout says it must be (bad JSON, bad shape, unreadable Parquet). */
  Corrupt: EXIT.corrupt,
  /** The fleet store failed: a write whose outcome is unknown or refused, a download that failed. */
  Store: EXIT.store,
} as const;

/** The codes a {@link MaintError} can carry; each maps to one documented exit code. */
export type MaintErrorCode = keyof typeof EXIT_OF;

/** Typed data of a {@link MaintError}. */
export interface MaintErrorFacts {
  /** The object key or file the error is about. */
  readonly key?: string;
  /** The store URL. */
  readonly store?: string;
}

/** Typed `data` of each {@link MaintErrorCode}: every code carries the same facts. */
export type MaintErrorData = ErrorDataMap<MaintErrorCode, MaintErrorFacts>;

/**
 * The one error class of lake-maint. `code` picks the exit code, the message is one line naming the
 * key or file and the reason, `cause` keeps the underlying error. Use {@link isMaintError}.
 */
export class MaintError<C extends MaintErrorCode = MaintErrorCode> extends defineError<MaintErrorCode, MaintErrorData>("lake-maint/MaintError")<C> {}

/** True for a {@link MaintError} from any copy of lake-maint (brand-based, not `instanceof`); with `code`, of that code. */
export const isMaintError = brandGuard<MaintError, MaintErrorData>(MaintError.brand);

/** One-line message and exit code of any error: a MaintError by its code, the rest by @lake/cli. */
export const describeError = describeErrorWith(isMaintError, EXIT_OF);

/** An error message as a reason after `<key>: `: one line, without a leading `<key>: ` of its own. */
export function reasonOf(message: string, key: string): string {
  const line = message.replace(/\s*\n\s*/g, " ");
  return line.startsWith(`${key}: `) ? line.slice(key.length + 2) : line;
}

import { EXIT, describeErrorWith } from "@lake/cli";
import { brandGuard, defineError, type ErrorDataMap } from "@lake/errors";

export { EXIT };

/** The codes a {@link MaintError} can carry; each maps to one documented exit code. */
export type MaintErrorCode =
  /** Bad command line: unknown command or option, missing or malformed value. Exit 2. */
  | "Usage"
  /** The store, a key or a file the command needs does not exist (e.g. no fleet.json). Exit 8. */
  | "NotFound"
  /** The command refused to replace something already there (a second `init`) or lost a race. Exit 9. */
  | "Refused"
  /** A lease the command needs is held by someone else; nothing was written under it. Exit 4. */
  | "Held"
  /** The lease this run held was taken over or expired: the run stopped before its next write. Exit 9. */
  | "LeaseLost"
  /** A stored object is not what the layout says it must be (bad JSON, bad shape, unreadable Parquet). Exit 6. */
  | "Corrupt"
  /** The fleet store failed: a write whose outcome is unknown or refused, a download that failed. Exit 5. */
  | "Store";

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

/** Exit code per error code: a row of @lake/cli's one table. */
const EXIT_OF: Readonly<Record<MaintErrorCode, number>> = {
  Usage: EXIT.usage,
  NotFound: EXIT.notFound,
  Refused: EXIT.refused,
  LeaseLost: EXIT.refused,
  Held: EXIT.locked,
  Corrupt: EXIT.corrupt,
  Store: EXIT.store,
};

/** One-line message and exit code of any error: a MaintError by its code, the rest by @lake/cli. */
export const describeError = describeErrorWith(isMaintError, EXIT_OF);

/** An error message as a reason after `<key>: `: one line, without a leading `<key>: ` of its own. */
export function reasonOf(message: string, key: string): string {
  const line = message.replace(/\s*\n\s*/g, " ");
  return line.startsWith(`${key}: `) ? line.slice(key.length + 2) : line;
}

// The exit codes of lake's CLIs: one table, the same meaning in lake-collector, lake-maint and
// lake-reader, printed by each app's --help and listed in each README. A script that runs any of
// the three can branch on the code alone.

/** One row of the exit-code table. */
export interface ExitCode {
  readonly code: number;
  readonly meaning: string;
}

/** The exit codes of every lake CLI. */
export const EXIT = {
  ok: 0,
  /** An error the program did not expect (a bug): one line, the stack with LAKE_DEBUG=1. */
  internal: 1,
  /** Bad command line or configuration: unknown command or option, a bad value, a bad store URL, a bad config file. */
  usage: 2,
  /** Done, with problems: some sources, sessions or objects were skipped (each named on stderr), or verify found problems. */
  partial: 3,
  /** Another process holds the lock or the lease; nothing was written under it. */
  locked: 4,
  /** The fleet store failed: unreachable, refused the request, no credentials or region. */
  store: 5,
  /** Damaged or invalid data: a hash mismatch, an unreadable segment or record, a malformed object or file. */
  corrupt: 6,
  /** The local disk refused: read-only, full, permission denied. */
  io: 7,
  /** What was asked for does not exist: a session, a store, an object. */
  notFound: 8,
  /** Refused: a newer writer, a lost lease, a conflicting change, something already there. */
  refused: 9,
  /** Stopped by Ctrl-C (SIGINT) at a safe point; 143 for SIGTERM. */
  interrupted: 130,
} as const;

/** The name of an exit code in {@link EXIT}. */
export type ExitName = keyof typeof EXIT;

/** The whole table, in code order, as every app's help prints it. */
export const EXIT_CODES: readonly ExitCode[] = [
  { code: EXIT.ok, meaning: "ok" },
  { code: EXIT.internal, meaning: "internal error (LAKE_DEBUG=1 prints the stack)" },
  { code: EXIT.usage, meaning: "usage: unknown command or option, bad value, bad store URL or config file" },
  { code: EXIT.partial, meaning: "done with problems: sources, sessions or objects skipped (each named on stderr); verify found problems" },
  { code: EXIT.locked, meaning: "locked: another process holds the lock or lease" },
  { code: EXIT.store, meaning: "fleet store error: unreachable, refused, no credentials or region" },
  { code: EXIT.corrupt, meaning: "damaged or invalid data: hash mismatch, unreadable segment, malformed object or file" },
  { code: EXIT.io, meaning: "local I/O: read-only, full, permission denied" },
  { code: EXIT.notFound, meaning: "not found: no such session, store or object" },
  { code: EXIT.refused, meaning: "refused: newer writer, lost lease, conflicting change, already there" },
  { code: EXIT.interrupted, meaning: "interrupted (Ctrl-C; 143 for SIGTERM)" },
];

/** The table as the help prints it: `Exit codes:` then one row per code. */
export function formatExitCodes(table: readonly ExitCode[] = EXIT_CODES): string {
  return ["Exit codes:", ...table.map((r) => `  ${String(r.code).padStart(3)}  ${r.meaning}`)].join("\n");
}

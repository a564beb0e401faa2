// The exit codes of lake's CLIs. The codes below 3 and the signal codes mean the same in every app;
// each app adds the codes of its own outcomes (its README "Exit codes" lists the same table).

/** One row of an exit-code table. */
export interface ExitCode {
  readonly code: number;
  readonly meaning: string;
}

/** The codes every lake CLI uses with one meaning. */
export const EXIT = {
  ok: 0,
  /** An error the program did not expect (a bug): one line, the stack with LAKE_DEBUG=1. */
  internal: 1,
  /** Bad command line: unknown command or option, a missing or malformed value, a bad store URL. */
  usage: 2,
  /** Stopped by Ctrl-C (SIGINT) at a safe point; 143 for SIGTERM. */
  interrupted: 130,
} as const;

/** The rows of {@link EXIT}, for the help. */
export const COMMON_EXIT_CODES: readonly ExitCode[] = [
  { code: EXIT.ok, meaning: "ok" },
  { code: EXIT.internal, meaning: "internal error (LAKE_DEBUG=1 prints the stack)" },
  { code: EXIT.usage, meaning: "usage: unknown command or option, bad value, bad store URL" },
  { code: EXIT.interrupted, meaning: "interrupted (Ctrl-C; 143 for SIGTERM)" },
];

/**
 * An app's whole table: the common rows, with the app's own rows (codes 3-127) in code order. An
 * app row with a common code replaces it (lake-maint's 1 means "problems found").
 */
export function exitTable(own: readonly ExitCode[]): ExitCode[] {
  const byCode = new Map<number, ExitCode>();
  for (const r of COMMON_EXIT_CODES) byCode.set(r.code, r);
  for (const r of own) byCode.set(r.code, r);
  return [...byCode.values()].sort((a, b) => a.code - b.code);
}

/** The table as the help prints it: `Exit codes:` then one row per code. */
export function formatExitCodes(table: readonly ExitCode[]): string {
  return ["Exit codes:", ...table.map((r) => `  ${String(r.code).padStart(3)}  ${r.meaning}`)].join("\n");
}

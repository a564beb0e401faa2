// Ctrl-C: a long collect or push stops at its next safe point (between sources and sessions, after a
// cursor or push.state is saved), releases its locks and says how far it got. A second signal exits
// at once (locks are then left to the stale-lock checks, which find the process gone).
import { constants } from "node:os";

/** A trap on SIGINT and SIGTERM for the length of one command. */
export interface Interrupts {
  /** The signal received, or undefined while none was. */
  readonly signal: () => NodeJS.Signals | undefined;
  /** Stop trapping (the default handlers come back). */
  readonly release: () => void;
}

/** Trap SIGINT and SIGTERM: the first only records the signal; a second exits with 128 + its number. */
export function trapInterrupts(onSignal?: (signal: NodeJS.Signals) => void): Interrupts {
  let got: NodeJS.Signals | undefined;
  const handler = (sig: NodeJS.Signals) => {
    if (got !== undefined) process.exit(exitCodeOf(sig));
    got = sig;
    onSignal?.(sig);
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  return {
    signal: () => got,
    release: () => {
      process.off("SIGINT", handler);
      process.off("SIGTERM", handler);
    },
  };
}

/** The conventional exit code of a process stopped by `signal`: 128 + its number (SIGINT 130). */
export function exitCodeOf(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 2);
}

/** The line an interrupted command ends with (stderr). */
export function interruptedLine(done: number, what: string): string {
  return `interrupted; ${done} ${what} done, run again to continue`;
}

import type { OptionTable, Positionals, RunContext } from "@lake/cli";
import type { Io } from "../context.js";

/**
 * A command of lake-reader: its option table drives parsing, validation and its --help (@lake/cli's
 * runCli); the summary is the app's (cli.ts lists it without loading the module).
 */
export interface ReaderCommand<O extends OptionTable = OptionTable> {
  /** What follows the command on the help's usage line (default: the positionals, then `[options]`). */
  readonly usage?: string;
  /** The paragraphs of the help between the usage line and the options. */
  readonly description?: string;
  readonly options: O;
  readonly positionals?: Positionals;
  readonly run: (ctx: RunContext<O, Io>) => Promise<number>;
}

/** Build a reader command, inferring its values' types from its table. */
export function readerCommand<const O extends OptionTable>(c: ReaderCommand<O>): ReaderCommand<O> {
  return c;
}

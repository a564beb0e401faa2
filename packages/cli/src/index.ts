// @lake/cli: the command-line framework of lake-collector, lake-maint and lake-reader.
export { CliError, isCliError, usage } from "./internal/errors.js";
export type { CliErrorCode, CliErrorData, CliErrorFacts } from "./internal/errors.js";
export { describeError, describeErrorWith, errorFile, ioErrno, ioMessage } from "./internal/describe.js";
export { EXIT, EXIT_CODES, formatExitCodes } from "./internal/exit.js";
export type { ExitCode, ExitName } from "./internal/exit.js";
export { formatOptions } from "./internal/help.js";
export { jsonLine, snakeKey, snakeKeys } from "./internal/json.js";
export { choice, choices, count, flag, parseChoice, parseCount, parseOptions, parseSeconds, seconds, text, texts, value, values } from "./internal/options.js";
export type { Option, OptionTable, Parsed, Positionals, ValueOptions, Values } from "./internal/options.js";
export { appHelp, commandHelp, defineCommand, processIo, runCli } from "./internal/run.js";
export type { App, Command, Io, LazyCommand, RunContext } from "./internal/run.js";

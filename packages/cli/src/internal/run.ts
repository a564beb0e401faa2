// The dispatcher every lake CLI runs: command lookup (with two-word group commands such as
// `lease acquire`), --help and --version, option parsing against the command's table, and one
// error line per failure with one prefix.
import { createRequire } from "node:module";
import { isCliError, usage } from "./errors.js";
import { describeError } from "./describe.js";
import { EXIT, formatExitCodes } from "./exit.js";
import { formatOptions } from "./help.js";
import { parseOptions, type OptionTable, type Positionals, type Values } from "./options.js";

/** Where a command writes (each call writes exactly the text given), and its environment. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  readonly env: NodeJS.ProcessEnv;
}

let streams: Pick<Io, "out" | "err"> | undefined;

/**
 * The process's own streams and environment. Text goes straight to the descriptor (fd 1, fd 2) with
 * a synchronous write, as Node's stdout and stderr write to files, pipes and terminals on Linux
 * anyway, without making those streams: making one loads Node's socket and stream modules, some
 * 3–7 ms of a short command's start (a no-op collect or push prints one line). A descriptor that
 * would block (a non-blocking pipe that is full: EAGAIN) hands what is left, and everything after it,
 * to Node's stream, which waits for the reader. When the reader goes away (EPIPE: `| head`), what is
 * written afterwards is dropped and the command finishes as it would have (its exit code, its
 * durable work), instead of dying on an unhandled stream error. A command that writes nothing (a
 * hook) touches neither.
 */
export function processIo(): Io {
  streams ??= { out: closable(1, () => process.stdout), err: closable(2, () => process.stderr) };
  return { ...streams, env: process.env };
}

/** node:fs's writeSync, required (an ES module import of node:fs loads its streams). */
let writeSync: typeof import("node:fs").writeSync | undefined;

function closable(fd: 1 | 2, open: () => NodeJS.WriteStream): (text: string) => void {
  let stream: NodeJS.WriteStream | undefined;
  let gone = false;
  return (text) => {
    if (gone) return;
    if (stream === undefined) {
      writeSync ??= (createRequire(import.meta.url)("node:fs") as typeof import("node:fs")).writeSync;
      const bytes = Buffer.from(text);
      let done = 0;
      try {
        while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "EPIPE") {
          gone = true;
          return;
        }
        // EAGAIN, or anything else: the stream takes the rest (and says what else went wrong).
      }
      stream = open();
      stream.on("error", (e: NodeJS.ErrnoException) => {
        if (e.code !== "EPIPE") throw e;
        gone = true;
      });
      stream.write(bytes.subarray(done));
      return;
    }
    stream.write(text);
  };
}

/** What a command's `run` is given. */
export interface RunContext<O extends OptionTable, I extends Io = Io> {
  readonly values: Values<O>;
  readonly positionals: string[];
  readonly io: I;
  /** The command as typed, with the program name: `lake-maint lease acquire`. */
  readonly command: string;
}

/** One command: its table drives parsing, validation and its --help. */
export interface Command<O extends OptionTable = OptionTable, I extends Io = Io> {
  /** One line for the app's command list. */
  readonly summary: string;
  /** What follows the command on the usage line (default: the positionals, then `[options]`). */
  readonly usage?: string;
  /** The paragraphs of the command's help between the usage line and the options. */
  readonly description?: string;
  readonly options: O;
  readonly positionals?: Positionals;
  /** Run the command; resolves to the exit code. Throw for errors: the app's describeError maps them. */
  readonly run: (ctx: RunContext<O, I>) => Promise<number>;
}

/** Build a command, inferring its values' types from the table. */
export function defineCommand<const O extends OptionTable, I extends Io = Io>(c: Command<O, I>): Command<O, I> {
  return c;
}

/** A command loaded when it runs (its module may load DuckDB or SQLite), with its summary up front. */
export interface LazyCommand<I extends Io = Io> {
  readonly summary: string;
  readonly load: () => Promise<Command<any, I>>;
}

/** A program. */
export interface App<I extends Io = Io> {
  /** `lake-maint`. */
  readonly name: string;
  /** From the app's package.json. */
  readonly version: string;
  /** The first line of the help, after the name. */
  readonly summary: string;
  /** By name; a two-word name (`lease acquire`) makes its first word a group. */
  readonly commands: Readonly<Record<string, Command<any, I> | LazyCommand<I>>>;
  /** Options every command takes, listed after each command's own. */
  readonly common?: OptionTable;
  /** Paragraphs printed at the end of the app's help, before the exit codes. */
  readonly notes?: string;
  /**
   * The one-line message and exit code (of {@link EXIT}) of an error of the app's own class;
   * undefined for any other error, which @lake/cli's `describeError` maps.
   */
  readonly describeError?: (e: unknown) => { message: string; code: number } | undefined;
}

function isLazy<I extends Io>(c: Command<OptionTable, I> | LazyCommand<I>): c is LazyCommand<I> {
  return "load" in c;
}

/** The app's help: summary, commands, notes, exit codes. */
export function appHelp<I extends Io>(app: App<I>): string {
  const names = Object.keys(app.commands);
  const width = Math.max(...names.map((n) => n.length));
  return [
    `${app.name} ${app.version} — ${app.summary}`,
    "",
    `Usage: ${app.name} <command> [options]     (${app.name} <command> --help for each)`,
    "",
    "Commands:",
    ...names.map((n) => `  ${n.padEnd(width)}  ${app.commands[n]!.summary}`),
    "",
    `Every command takes -h/--help. ${app.name} --version prints the version.`,
    ...(app.notes ? ["", app.notes.trimEnd()] : []),
    "",
    formatExitCodes(),
  ].join("\n");
}

/** A command's help: usage line, description, options (its own, then the app's common ones), exit codes. */
export function commandHelp<I extends Io, O extends OptionTable>(app: App<I>, name: string, cmd: Command<O, I>): string {
  const table = { ...cmd.options, ...omit(app.common ?? {}, cmd.options) };
  const tail = cmd.usage ?? [cmd.positionals?.names, "[options]"].filter(Boolean).join(" ");
  return [
    `${app.name} ${name} ${tail}`.trimEnd(),
    "",
    `  ${cmd.summary}`,
    ...(cmd.description ? ["", cmd.description.trimEnd()] : []),
    "",
    "Options:",
    formatOptions({ ...table, help: { kind: "flag", short: "h", help: "this help", finish: () => false } }),
    "",
    formatExitCodes(),
  ].join("\n");
}

function omit(table: OptionTable, keys: OptionTable): OptionTable {
  return Object.fromEntries(Object.entries(table).filter(([k]) => !Object.hasOwn(keys, k)));
}

/** LAKE_DEBUG set (and not "0"): errors print their stack (and their causes'). */
function debug(env: NodeJS.ProcessEnv): boolean {
  const v = env.LAKE_DEBUG;
  return v !== undefined && v !== "" && v !== "0";
}

function stackOf(e: unknown): string {
  const parts: string[] = [];
  let cur: unknown = e;
  for (let depth = 0; cur !== undefined && cur !== null && depth < 5; depth++) {
    parts.push(depth === 0 ? "" : "caused by: ");
    parts[parts.length - 1] += cur instanceof Error ? (cur.stack ?? `${cur.name}: ${cur.message}`) : String(cur);
    cur = cur instanceof Error ? cur.cause : undefined;
  }
  return parts.join("\n");
}

/** One line: the message's first line without a repeat of the command's own prefix (`show: show: …`). */
function oneLine(message: string, name: string): string {
  let m = message.split("\n")[0]!.trim();
  const words = name.split(" ");
  for (const p of [name, words[0]!, words[words.length - 1]!]) {
    if (m.startsWith(`${p}: `)) {
      m = m.slice(p.length + 2);
      break;
    }
  }
  return m;
}

/**
 * Run a program: resolves to its exit code. No arguments: the help on stderr, exit 2 (usage).
 * `--help`/`-h`/`help`: the help, exit 0. `--version`: `<name> <version>`, exit 0.
 */
export async function runCli<I extends Io>(app: App<I>, argv: readonly string[], io: I): Promise<number> {
  // The AWS SDK warns (nine lines on stderr) that it will stop supporting Node 20; lake supports Node 20.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  const [first, ...rest] = argv;
  const fail = (prefix: string, e: unknown): number => {
    const d = app.describeError?.(e) ?? describeError(e);
    let line = oneLine(d.message, prefix.split(" ").slice(1).join(" ") || app.name);
    if (isCliError(e) && /^unknown option \S+$/.test(line) && prefix !== app.name) line += ` (${prefix} --help lists the options)`;
    io.err(`${prefix}: ${line}\n`);
    if (debug(io.env)) io.err(stackOf(e) + "\n");
    return d.code;
  };
  if (first === undefined) {
    io.err(appHelp(app) + "\n");
    return EXIT.usage;
  }
  if (first === "--help" || first === "-h" || (first === "help" && rest.length === 0 && !Object.hasOwn(app.commands, "help"))) {
    io.out(appHelp(app) + "\n");
    return EXIT.ok;
  }
  if (first === "--version") {
    io.out(`${app.name} ${app.version}\n`);
    return EXIT.ok;
  }
  if (first.startsWith("-")) return fail(app.name, usage(`unknown option ${first} (${app.name} --help lists the commands)`));
  let name = first;
  let args = rest;
  if (!Object.hasOwn(app.commands, first)) {
    const subs = Object.keys(app.commands).filter((k) => k.startsWith(first + " "));
    if (subs.length === 0) return fail(app.name, usage(`unknown command ${JSON.stringify(first)} (${app.name} --help lists them)`));
    const sub = rest[0];
    if (sub === "--help" || sub === "-h") {
      io.out(subs.map((s) => `${app.name} ${s}  ${app.commands[s]!.summary}`).join("\n") + "\n");
      return EXIT.ok;
    }
    const list = subs.map((s) => s.slice(first.length + 1)).join(", ");
    if (sub === undefined || sub.startsWith("-")) return fail(`${app.name} ${first}`, usage(`needs a subcommand: ${list}`));
    name = `${first} ${sub}`;
    if (!Object.hasOwn(app.commands, name)) return fail(`${app.name} ${first}`, usage(`unknown subcommand ${JSON.stringify(sub)}; expected ${list}`));
    args = rest.slice(1);
  }
  const prefix = `${app.name} ${name}`;
  try {
    const entry = app.commands[name]!;
    const cmd = isLazy(entry) ? await entry.load() : entry;
    const parsed = parseOptions({ ...(app.common ?? {}), ...cmd.options }, args, cmd.positionals);
    if (parsed.help) {
      io.out(commandHelp(app, name, cmd) + "\n");
      return EXIT.ok;
    }
    return await cmd.run({ values: parsed.values, positionals: parsed.positionals, io, command: prefix });
  } catch (e) {
    return fail(prefix, e);
  }
}

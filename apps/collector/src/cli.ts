// lake-collector: the program that runs on every developer's machine. Commands are loaded lazily
// so `lake-collector hook`, which runs on every Claude Code hook, starts with little more than
// node, @lake/wal/writer (the writer alone: no record schemas, no zod), the store lock and
// @lake/layout/defaults (test/hook.test.ts checks what it loads; bench/hook.bench.ts times it).
import { CollectorError, EXIT_CODES, ioErrno, ioFailure, isCollectorError } from "./internal/errors.js";

interface Command {
  readonly summary: string;
  readonly load: () => Promise<{ run(args: string[]): Promise<number>; help: string }>;
}

const COMMANDS: Readonly<Record<string, Command>> = {
  collect: { summary: "one pass over every discovered source: land, index, publish rounds", load: () => import("./internal/commands/collect.js") },
  watch: { summary: "collect continuously on file changes (one writer per root)", load: () => import("./internal/commands/watch.js") },
  parse: { summary: "publish rounds for every session whose index moved past its chain head", load: () => import("./internal/commands/parse.js") },
  push: { summary: "send new landed records to the fleet store as Parquet segments", load: () => import("./internal/commands/push.js") },
  hook: { summary: "append one Claude Code hook event (stdin) to the hook spool", load: () => import("./internal/commands/hook.js") },
  hooks: { summary: "hooks install: add lake's hook to a Claude Code settings file", load: () => import("./internal/commands/hooks.js") },
  service: { summary: "service install: run watch as a systemd user service or launchd agent", load: () => import("./internal/commands/service.js") },
  verify: { summary: "check every landed file and round against its digest; report gaps", load: () => import("./internal/commands/verify.js") },
  repack: { summary: "re-cut every landed file under a new budget into a new root", load: () => import("./internal/commands/repack.js") },
  status: { summary: "sessions, streams, cursors by state, pending, conflicts, last pass", load: () => import("./internal/commands/status.js") },
  conflicts: { summary: "list every source in conflict: the file, the reason, since when", load: () => import("./internal/commands/conflicts.js") },
  resolve: { summary: "resolve SOURCE --mode reread-from-start|continue-from-offset: move a conflict", load: () => import("./internal/commands/resolve.js") },
  forget: { summary: "remove one session from the root (preview; --apply) and keep it out until --undo", load: () => import("./internal/commands/forget.js") },
  clean: { summary: "delete derived state only: indexes, chains, the reader's cache (preview; --apply)", load: () => import("./internal/commands/clean.js") },
  recover: { summary: "rebuild a root from the fleet store's records of this agent into an empty directory", load: () => import("./internal/commands/recover.js") },
};

const HELP = `lake-collector — collect AI agent transcripts into lake

Usage: lake-collector <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(9)} ${c.summary}`)
  .join("\n")}

Run "lake-collector <command> --help" for a command's options.

Common options:
  --root DIR     the local storage root (default $LAKE_ROOT, else $XDG_DATA_HOME/lake, else ~/.local/share/lake)
  --json         print a JSON object instead of text

Exit codes: 0 ok · 1 internal error · 2 usage error · 3 completed with problems (a source unreadable,
refused, pending or in conflict; problems found by verify) · 4 locked by another collector · 5 fleet
store error · 6 bad input · 7 I/O error on the root or the store (read-only, full, permission denied,
missing)
`;

/** Run the CLI with the given arguments; resolves to the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(HELP);
    return name === undefined ? 2 : 0;
  }
  if (name === "--version") {
    process.stdout.write("lake-collector 0.1.0\n");
    return 0;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    process.stderr.write(`lake-collector: unknown command "${name}" (see lake-collector --help)\n`);
    return EXIT_CODES.Usage;
  }
  try {
    const mod = await cmd.load();
    if (rest.includes("--help") || rest.includes("-h")) {
      process.stdout.write(mod.help);
      return 0;
    }
    return await mod.run(rest);
  } catch (e) {
    return report(e);
  }
}

/** Print an error as one line and map it to its exit code. */
export function report(e: unknown): number {
  if (!isCollectorError(e)) {
    const code = ioErrno(e);
    if (code !== undefined) e = ioFailure(e, code);
  }
  if (isCollectorError(e)) {
    process.stderr.write(`lake-collector: ${e.message}\n`);
    return EXIT_CODES[e.code];
  }
  const err = e as { message?: string; code?: unknown; name?: string };
  if (err && typeof err.message === "string" && typeof err.code === "string" && err.name !== "Error") {
    // Errors of lake's packages carry a code and a one-line message naming the file.
    process.stderr.write(`lake-collector: ${err.message}\n`);
    return err.code === "Locked" ? EXIT_CODES.Locked : err.code === "InvalidConfig" ? EXIT_CODES.Usage : EXIT_CODES.Internal;
  }
  process.stderr.write(`lake-collector: internal error: ${err?.message ?? String(e)}\n`);
  if (process.env.LAKE_DEBUG) process.stderr.write(`${(e as Error)?.stack ?? ""}\n`);
  return EXIT_CODES.Internal;
}

export { CollectorError };

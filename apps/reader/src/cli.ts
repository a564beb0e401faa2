import { isLayoutError } from "@lake/layout/defaults";
import { isReaderError, exitCodeOf, EXIT } from "./internal/errors.js";
import type { Io } from "./internal/context.js";

const HELP = `lake-reader — answers from a lake fleet store: usage and cost, sessions, transcripts, search, SQL, export

Usage: lake-reader <command> [options]    (lake-reader <command> --help for each)

Commands:
  usage daily|weekly|monthly|session|blocks
                                       tokens and cost in USD (prices: @pydantic/genai-prices, offline)
  usage explain SESSION|--date D       why a total is what it is: rows counted and dropped, by rule
  pricing                              the price dataset's version, and which of the fleet's models are priced
  sessions                             one row per session
  show SESSION                         a session's conversation: turns, tool calls with results, child agents
  search TEXT                          full-text search over event text and the snapshot's claims (FTS5)
  secrets                              the leak report: masked secrets per rule, where and when they were seen
  sql "SELECT …"                       SQL over the read model (DuckDB views)
  export --format F --out DIR          events as parquet, ndjson or arrow
  ddl --engine E                       external table definitions (duckdb, trino, spark, athena)
  labels add|list                      operator labels (append-only, separate store)
  wal inspect|addr|find|archive        broca WAL tools
  serve                                the web UI and its JSON API (read-only, loopback by default)
  mcp                                  MCP server over stdio for agents: search, usage, sql, roster, leases
  statusline                           Claude Code's status line: model, session/today/block cost, context (local root)

Common options: --store URL (default $LAKE_STORE, else ~/.local/share/lake/fleet inside the local root), --cache DIR,
--root DIR, --json, -h/--help.

Exit codes: 0 ok, 1 internal error, 2 bad arguments, 3 malformed data (or a refused WAL),
4 WAL of a newer writer, 5 not found, 6 unreadable/unwritable, 7 SQL query failed or refused,
9 lease not held (mcp tool errors).`;

type Command = (argv: readonly string[], io: Io) => Promise<number>;

// Each command's module is loaded only when it runs: `usage` never loads better-sqlite3, Arrow or
// the WAL tools, `wal` never loads DuckDB.
const COMMANDS: Record<string, () => Promise<Command>> = {
  usage: async () => (await import("./internal/commands/usage.js")).usageCommand,
  pricing: async () => (await import("./internal/commands/usage.js")).pricingCommand,
  sessions: async () => (await import("./internal/commands/read.js")).sessionsCommand,
  show: async () => (await import("./internal/commands/read.js")).showCommand,
  search: async () => (await import("./internal/commands/search.js")).searchCommand,
  secrets: async () => (await import("./internal/commands/secrets.js")).secretsCommand,
  sql: async () => (await import("./internal/commands/read.js")).sqlCommand,
  export: async () => (await import("./internal/commands/export.js")).exportCommand,
  ddl: async () => (await import("./internal/commands/export.js")).ddlCommand,
  labels: async () => (await import("./internal/commands/labels.js")).labelsCommand,
  wal: async () => (await import("./internal/commands/wal.js")).walCommand,
  serve: async () => (await import("./internal/serve/command.js")).serveCommand,
  mcp: async () => (await import("./internal/commands/mcp.js")).mcpCommand,
  statusline: async () => (await import("./internal/commands/statusline.js")).statuslineCommand,
};

/** Options of {@link main}: where output goes (default: process streams) and the environment. */
export interface MainOptions {
  readonly out?: (s: string) => void;
  readonly err?: (s: string) => void;
  readonly env?: NodeJS.ProcessEnv;
  /** Standard input (default: read fd 0 when a command needs it). */
  readonly stdin?: () => string;
}

/**
 * Run the CLI with the given arguments; resolves to the process exit code (README, "Exit codes").
 * Errors are printed as one line naming the file and the reason.
 */
export async function main(argv: readonly string[], options: MainOptions = {}): Promise<number> {
  const io: Io = {
    out: options.out ?? ((s) => void process.stdout.write(s)),
    err: options.err ?? ((s) => void process.stderr.write(s)),
    env: options.env ?? process.env,
    stdin: options.stdin,
    damaged: [],
  };
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === "--help" || cmd === "-h" || cmd === "help") {
    io.out(HELP + "\n");
    return cmd === undefined ? EXIT.usage : EXIT.ok;
  }
  const load = Object.hasOwn(COMMANDS, cmd) ? COMMANDS[cmd] : undefined;
  if (!load) {
    io.err(`lake-reader: unknown command ${JSON.stringify(cmd)} (lake-reader --help lists them)\n`);
    return EXIT.usage;
  }
  // Damaged objects were left out: one line each (also before an error they may explain, e.g. a
  // session not found because its only segment is damaged).
  const reportDamage = (): number => {
    const seen = new Set<string>();
    for (const d of io.damaged ?? []) {
      if (seen.has(d.reason)) continue;
      seen.add(d.reason);
      io.err(`lake-reader ${cmd}: ${d.reason}; left out (partial answer)\n`);
    }
    return seen.size;
  };
  try {
    const run = await load();
    const code = await run(rest, io);
    // …and the partial exit code (unless worse).
    return reportDamage() > 0 && code === EXIT.ok ? EXIT.partial : code;
  } catch (e) {
    reportDamage();
    if (isReaderError(e)) {
      io.err(`lake-reader ${cmd}: ${e.message}\n`);
      return exitCodeOf(e.code);
    }
    if (isLayoutError(e, "InvalidConfig")) {
      io.err(`lake-reader ${cmd}: ${e.message}\n`);
      return exitCodeOf("Usage");
    }
    io.err(`lake-reader ${cmd}: internal error: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}\n`);
    return EXIT.internal;
  }
}

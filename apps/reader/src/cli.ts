// lake-reader: answers from a fleet store. The command line is @lake/cli's: each command's option
// table drives its parsing, validation and --help; its module is loaded only when it runs (`usage`
// never loads better-sqlite3, Arrow or the WAL tools, `wal` never loads DuckDB). A first positional
// picks a command's report or action (usage daily, labels add, wal inspect …).
import { readFileSync } from "node:fs";
import { defineCommand, processIo, runCli, type App, type LazyCommand, type OptionTable } from "@lake/cli";
import { describeError, EXIT } from "./internal/errors.js";
import type { Io } from "./internal/context.js";
import type { ReaderCommand } from "./internal/commands/parse.js";

const VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;

/** A command of the reader, loaded when it runs; the damaged objects it left out reported after it. */
function command(summary: string, load: () => Promise<ReaderCommand<any>>): LazyCommand<Io> {
  return {
    summary,
    load: async () => {
      const cmd = await load();
      return defineCommand<OptionTable, Io>({
        ...cmd,
        summary,
        run: async (ctx) => {
          const { io, command: name } = ctx;
          // Damaged objects were left out: one line each (also before an error they may explain, e.g.
          // a session not found because its only segment is damaged).
          const reportDamage = (): number => {
            const seen = new Set<string>();
            for (const d of io.damaged ?? []) {
              if (seen.has(d.reason)) continue;
              seen.add(d.reason);
              io.err(`${name}: ${d.reason}; left out (partial answer)\n`);
            }
            return seen.size;
          };
          let code: number;
          try {
            code = await cmd.run(ctx);
          } catch (e) {
            reportDamage();
            throw e;
          }
          // …and the partial exit code (unless worse).
          return reportDamage() > 0 && code === EXIT.ok ? EXIT.partial : code;
        },
      });
    },
  };
}

/** lake-reader's program: its commands and exit codes (the help prints them). */
export const APP: App<Io> = {
  name: "lake-reader",
  version: VERSION,
  summary: "answers from a lake fleet store: usage and cost, sessions, transcripts, search, SQL, export",
  commands: {
    usage: command("daily|weekly|monthly|session|blocks: tokens and cost in USD (prices: @pydantic/genai-prices, offline); explain SESSION|--date D: why a total is what it is", async () => (await import("./internal/commands/usage.js")).usageCommand),
    pricing: command("the price dataset's version, and which of the fleet's models are priced", async () => (await import("./internal/commands/usage.js")).pricingCommand),
    sessions: command("one row per session", async () => (await import("./internal/commands/read.js")).sessionsCommand),
    show: command("SESSION: a session's conversation: turns, tool calls with results, child agents", async () => (await import("./internal/commands/read.js")).showCommand),
    search: command("TEXT: full-text search over event text and the snapshot's claims (FTS5)", async () => (await import("./internal/commands/search.js")).searchCommand),
    secrets: command("the leak report: masked secrets per rule, where and when they were seen", async () => (await import("./internal/commands/secrets.js")).secretsCommand),
    sql: command('"SELECT …": SQL over the read model (DuckDB views)', async () => (await import("./internal/commands/read.js")).sqlCommand),
    export: command("--format F --out DIR: events as parquet, ndjson or arrow", async () => (await import("./internal/commands/export.js")).exportCommand),
    ddl: command("--engine E: external table definitions (duckdb, trino, spark, athena)", async () => (await import("./internal/commands/export.js")).ddlCommand),
    labels: command("add|list: operator labels (append-only, separate store)", async () => (await import("./internal/commands/labels.js")).labelsCommand),
    wal: command("inspect|addr|find|archive: broca WAL tools", async () => (await import("./internal/commands/wal.js")).walCommand),
    serve: command("the web UI and its JSON API (read-only, loopback by default)", async () => (await import("./internal/serve/command.js")).serveCommand),
    mcp: command("MCP server over stdio for agents: search, usage, sql, roster, leases", async () => (await import("./internal/commands/mcp.js")).mcpCommand),
    statusline: command("Claude Code's status line: model, session/today/block cost, context (local root)", async () => (await import("./internal/commands/statusline.js")).statuslineCommand),
  },
  notes: `Common options: --store URL (file:///dir, /abs/dir or s3://bucket/prefix; default $LAKE_STORE, else
~/.local/share/lake/fleet inside the local root), --cache DIR, --root DIR, --json, -h/--help
(each command's --help lists the options it takes).`,
  describeError,
};

/** Options of {@link main}: where output goes (default: process streams) and the environment. */
export interface MainOptions {
  readonly out?: (s: string) => void;
  readonly err?: (s: string) => void;
  readonly env?: NodeJS.ProcessEnv;
  /** Standard input (default: read fd 0 when a command needs it). */
  readonly stdin?: () => string;
  /** What `out` is: a TTY and its width (default: process.stdout's when `out` is not given, else not a TTY). */
  readonly stdout?: { readonly isTTY?: boolean; readonly columns?: number };
}

/**
 * Run the CLI with the given arguments; resolves to the process exit code (README, "Exit codes").
 * Errors are printed as one line naming the file and the reason.
 */
export function main(argv: readonly string[], options: MainOptions = {}): Promise<number> {
  const own = processIo();
  const io: Io = {
    out: options.out ?? own.out,
    err: options.err ?? own.err,
    env: options.env ?? process.env,
    stdin: options.stdin,
    damaged: [],
    stdout: options.stdout ?? (options.out ? { isTTY: false } : process.stdout),
  };
  return runCli(APP, argv, io);
}

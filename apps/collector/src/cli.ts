// lake-collector: the program that runs on every developer's machine. Commands are loaded lazily,
// so a command loads only its own modules. The bin runs `hook` from its own entry (hook-cli.ts), which
// loads little more than node, @lake/cli, @lake/wal/writer (the writer alone: no record schemas, no
// zod), the store lock and @lake/layout/defaults (test/hook.test.ts checks what it loads;
// bench/hook.bench.ts times it).
import { processIo, runCli, type App, type Io, type LazyCommand } from "@lake/cli";
import { APP_INFO, HOOK_SUMMARY } from "./internal/app.js";
import { CollectorError } from "./internal/errors.js";

function lazy(summary: string, load: () => Promise<{ command: Awaited<ReturnType<LazyCommand["load"]>> }>): LazyCommand {
  return { summary, load: async () => (await load()).command };
}

/** lake-collector's program: its commands (the help adds @lake/cli's exit codes). */
export const APP: App = {
  ...APP_INFO,
  commands: {
    collect: lazy("one pass over every discovered source: land, index, publish rounds", () => import("./internal/commands/collect.js")),
    watch: lazy("collect continuously on file changes (one writer per root)", () => import("./internal/commands/watch.js")),
    parse: lazy("publish rounds for every session whose index moved past its chain head", () => import("./internal/commands/parse.js")),
    push: lazy("send new landed records to the fleet store as Parquet segments", () => import("./internal/commands/push.js")),
    hook: lazy(HOOK_SUMMARY, () => import("./internal/commands/hook.js")),
    "hooks install": lazy("add lake's hook to a Claude Code settings file", () => import("./internal/commands/hooks.js")),
    "service install": lazy("run watch as a systemd user service or launchd agent", () => import("./internal/commands/service.js")),
    verify: lazy("check every landed file and round against its digest; report gaps", () => import("./internal/commands/verify.js")),
    repack: lazy("re-cut every landed file under a new budget into a new root", () => import("./internal/commands/repack.js")),
    status: lazy("sessions, streams, cursors by state, pending, conflicts, last pass", () => import("./internal/commands/status.js")),
    conflicts: lazy("list every source in conflict: the file, the reason, since when", () => import("./internal/commands/conflicts.js")),
    resolve: lazy("resolve SOURCE --mode reread-from-start|continue-from-offset: move a conflict", () => import("./internal/commands/resolve.js")),
    forget: lazy("remove one session from the root (preview; --apply) and keep it out until --undo", () => import("./internal/commands/forget.js")),
    clean: lazy("delete derived state only: indexes, chains, the reader's cache (preview; --apply)", () => import("./internal/commands/clean.js")),
    recover: lazy("rebuild a root from the fleet store's records of this agent into an empty directory", () => import("./internal/commands/recover.js")),
  },
};

/** Run the CLI with the given arguments; resolves to the process exit code. */
export function main(argv: readonly string[], io: Io = processIo()): Promise<number> {
  return runCli(APP, argv, io);
}

export { CollectorError };

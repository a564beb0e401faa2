// `lake-collector hook` as its own entry. Claude Code runs a hook on every tool call, so the bin runs
// `hook` from this module, bundled apart from the other commands (dist/bin/hook.js, scripts/bundle.mjs):
// one file holding only the code a hook runs, where through cli.js it loaded ten files shared with
// collect and push, three times the code. Same program, same command: `main(["hook", …])` here and
// cli.ts's `main` do the same thing (test/hook.test.ts runs both).
import { processIo, runCli, type App, type Io } from "@lake/cli";
import { APP_INFO, HOOK_SUMMARY } from "./internal/app.js";
import { command } from "./internal/commands/hook.js";

/** lake-collector with the one command `hook`. */
export const HOOK_APP: App = { ...APP_INFO, commands: { hook: { summary: HOOK_SUMMARY, load: async () => command } } };

/** Run `lake-collector hook …` (`argv` starts with "hook"); resolves to the process exit code. */
export function main(argv: readonly string[], io: Io = processIo()): Promise<number> {
  return runCli(HOOK_APP, argv, io);
}

// What lake-collector's program says of itself, for both of its entries: cli.ts (every command)
// and hook-cli.ts (`hook` alone, bundled apart so a hook loads only what it runs).
import type { App } from "@lake/cli";
import { describeError } from "./errors.js";
import { VERSION } from "./version.js";

/** The program without its commands. */
export const APP_INFO: Omit<App, "commands"> = {
  name: "lake-collector",
  version: VERSION,
  summary: "collect AI agent transcripts into lake",
  notes: `Common options: --root DIR (the local storage root: $LAKE_ROOT, else $XDG_DATA_HOME/lake, else
~/.local/share/lake), --json (a JSON object instead of text, snake_case keys).`,
  describeError,
};

/** `hook`'s line in the program's help. */
export const HOOK_SUMMARY = "append one Claude Code hook event (stdin) to the hook spool";

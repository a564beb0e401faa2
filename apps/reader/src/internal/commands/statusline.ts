// `lake-reader statusline`: one line for Claude Code's status line (../statusline.ts answers it).
// The bin runs that module directly for the usual command line; this is the command as every
// other is parsed and described: --help, bad options, stdin that is not JSON, an unknown zone.
import { readFileSync } from "node:fs";
import { defaultCache, defaultRoot } from "../paths.js";
import { ReaderError } from "../errors.js";
import { resolveTimeZone } from "../time.js";
import { count, text, type RunContext } from "@lake/cli";
import type { Io } from "../context.js";
import { readerCommand } from "./parse.js";
import { DEFAULT_TTL_MS, parseStatuslineInput, statuslineAnswer } from "../statusline.js";

const OPTIONS = {
  root: text("DIR", "local root (default $LAKE_ROOT, $XDG_DATA_HOME/lake, ~/.local/share/lake)"),
  cache: text("DIR", "where the coalescing cache lives (default the reader cache)"),
  timezone: text("TZ", 'the zone "today" is in (default the process\'s: $TZ, else the system\'s)'),
  ttl: count("MS", `reuse a result younger than this (default ${DEFAULT_TTL_MS})`, { default: DEFAULT_TTL_MS }),
} as const;

async function statusline({ values, io }: RunContext<typeof OPTIONS, Io>): Promise<number> {
  const zone = values.timezone === undefined ? undefined : resolveTimeZone(values.timezone, io.env);
  const parsed = parseStatuslineInput(io.stdin ? io.stdin() : readFileSync(0, "utf8"));
  if (!("input" in parsed)) throw new ReaderError("Corrupt", `stdin: not Claude Code's status line JSON (${parsed.reason})`);
  const line = await statuslineAnswer(parsed.input, { root: values.root ?? defaultRoot(io.env), cache: values.cache ?? defaultCache(io.env), zone, ttl: values.ttl });
  io.out(line + "\n");
  return 0;
}

/** `lake-reader statusline`. */
export const statuslineCommand = readerCommand({
  description: `Reads Claude Code's status line JSON on stdin and prints one line:
  <model> · session $X · today $Y · block $Z (2h13m left) · ctx 42%
Costs are lake's (tokens from the local root's landed files, priced like lake-reader usage), not
Claude Code's own estimate. Set it up in ~/.claude/settings.json:
  "statusLine": {"type": "command", "command": "lake-reader statusline"}
stdin that is not JSON is malformed data.`,
  options: OPTIONS,
  run: statusline,
});

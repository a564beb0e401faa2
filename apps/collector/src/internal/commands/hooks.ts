import { applyHooksPlan, defaultHookCommand, defaultSettingsFile, defaultStatuslineCommand, lineDiff, planHooksInstall } from "../hooks-install.js";
import { CollectorError } from "../errors.js";
import { defineCommand, jsonLine, flag, text, type RunContext } from "@lake/cli";
import { JSON_FLAG } from "../options.js";

const DESCRIPTION = `Adds one "command" hook running CMD to each of SessionStart, UserPromptSubmit, PreToolUse,
PostToolUse (matcher "*"), Notification, Stop, SubagentStop, PreCompact and SessionEnd in FILE
(default $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json). CMD defaults to this
node and this lake-collector by absolute path ("/usr/bin/node /…/bin/lake-collector.js hook"), so
the hook runs whatever PATH Claude Code's shell has; an older lake hook command (the bare
"lake-collector hook", another path) is pointed at CMD. Shows the change; keeps every other hook
and setting; running it again changes nothing. --dry-run shows the change without writing.
--statusline also sets Claude Code's status line ("statusLine": {"type": "command", "command":
CMD}) to lake-reader statusline: lake-reader as found on PATH, by absolute real path (its bin run
by this node), unless --statusline-command CMD; a status line lake wrote before is pointed at it,
another program's is refused (nothing written) unless --force.`;

const OPTIONS = {
  settings: text("FILE", "the Claude Code settings file (default ~/.claude/settings.json)"),
  command: text("CMD", "the hook command to write (default: this node and this lake-collector by absolute path)"),
  "dry-run": flag("show the change, write nothing"),
  statusline: flag("also set Claude Code's statusLine to lake-reader statusline"),
  "statusline-command": text("CMD", "the status line command (default: lake-reader on PATH by absolute path, then statusline)"),
  force: flag("--statusline: replace a status line that is not lake's"),
  json: JSON_FLAG,
} as const;

async function run({ values, io }: RunContext<typeof OPTIONS>): Promise<number> {
  const file = values.settings ?? defaultSettingsFile();
  const command = values.command ?? defaultHookCommand();
  if ((values["statusline-command"] !== undefined || values.force) && !values.statusline) throw new CollectorError("Usage", "--statusline-command and --force go with --statusline");
  let statusline: string | undefined;
  if (values.statusline) {
    statusline = values["statusline-command"] ?? defaultStatuslineCommand(io.env);
    if (statusline === undefined) throw new CollectorError("Usage", "--statusline: lake-reader is not on PATH; install it, or pass --statusline-command CMD; nothing written");
  }
  const plan = await planHooksInstall(file, command, statusline === undefined ? undefined : { command: statusline, force: values.force ?? false });
  const changed = plan.added.length > 0 || plan.statusline === "set" || plan.statusline === "updated";
  const write = changed && !values["dry-run"];
  if (write) await applyHooksPlan(plan);
  if (values.json) {
    io.out(jsonLine({ file, added: plan.added, ...(plan.statusline !== null ? { statusline: plan.statusline, statusline_command: statusline } : {}), written: write }));
  } else if (!changed) {
    io.out(`${file}: lake's hooks${plan.statusline ? " and status line" : ""} are already installed; nothing changed\n`);
  } else {
    io.out(`${file}:\n${lineDiff(plan.before ?? "", plan.after)}\n${write ? "written" : "dry run: not written"}\n`);
  }
  return 0;
}

/** `lake-collector hooks`. */
export const command = defineCommand({
  summary: "add lake's hook (and with --statusline its status line) to a Claude Code settings file",
  description: DESCRIPTION,
  options: OPTIONS,
  run,
});

import { applyHooksPlan, defaultHookCommand, defaultSettingsFile, lineDiff, planHooksInstall } from "../hooks-install.js";
import { defineCommand, jsonLine, flag, text, type RunContext } from "@lake/cli";
import { JSON_FLAG } from "../options.js";

const DESCRIPTION = `Adds one "command" hook running CMD to each of SessionStart, UserPromptSubmit, PreToolUse,
PostToolUse (matcher "*"), Notification, Stop, SubagentStop, PreCompact and SessionEnd in FILE
(default $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json). CMD defaults to this
node and this lake-collector by absolute path ("/usr/bin/node /…/bin/lake-collector.js hook"), so
the hook runs whatever PATH Claude Code's shell has; an older lake hook command (the bare
"lake-collector hook", another path) is pointed at CMD. Shows the change; keeps every other hook
and setting; running it again changes nothing. --dry-run shows the change without writing.`;

const OPTIONS = { settings: text("FILE", "the Claude Code settings file (default ~/.claude/settings.json)"), command: text("CMD", "the hook command to write (default: this node and this lake-collector by absolute path)"), "dry-run": flag("show the change, write nothing"), json: JSON_FLAG } as const;

async function run({ values, io }: RunContext<typeof OPTIONS>): Promise<number> {
  const file = values.settings ?? defaultSettingsFile();
  const command = values.command ?? defaultHookCommand();
  const plan = await planHooksInstall(file, command);
  const write = plan.added.length > 0 && !values["dry-run"];
  if (write) await applyHooksPlan(plan);
  if (values.json) {
    io.out(jsonLine({ file, added: plan.added, written: write }));
  } else if (plan.added.length === 0) {
    io.out(`${file}: lake's hooks are already installed; nothing changed\n`);
  } else {
    io.out(`${file}:\n${lineDiff(plan.before ?? "", plan.after)}\n${write ? "written" : "dry run: not written"}\n`);
  }
  return 0;
}

/** `lake-collector hooks`. */
export const command = defineCommand({
  summary: "add lake's hook to a Claude Code settings file",
  description: DESCRIPTION,
  options: OPTIONS,
  run,
});

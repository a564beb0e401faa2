import { applyHooksPlan, defaultHookCommand, defaultSettingsFile, lineDiff, planHooksInstall } from "../hooks-install.js";
import { CollectorError } from "../errors.js";
import { parse } from "../options.js";

export const help = `lake-collector hooks install — add lake's hook to a Claude Code settings file

Usage: lake-collector hooks install [--settings FILE] [--command CMD] [--dry-run] [--json]

Adds one "command" hook running CMD to each of SessionStart, UserPromptSubmit, PreToolUse,
PostToolUse (matcher "*"), Notification, Stop, SubagentStop, PreCompact and SessionEnd in FILE
(default $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json). CMD defaults to this
node and this lake-collector by absolute path ("/usr/bin/node /…/bin/lake-collector.js hook"), so
the hook runs whatever PATH Claude Code's shell has; an older lake hook command (the bare
"lake-collector hook", another path) is pointed at CMD. Shows the change; keeps every other hook
and setting; running it again changes nothing. --dry-run shows the change without writing.
`;

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { settings: { type: "string" }, command: { type: "string" }, "dry-run": { type: "boolean" }, json: { type: "boolean" } }, true);
  if (positionals[0] !== "install" || positionals.length !== 1) throw new CollectorError("Usage", `hooks: expected "hooks install"`);
  const file = (values.settings as string | undefined) ?? defaultSettingsFile();
  const command = (values.command as string | undefined) ?? defaultHookCommand();
  const plan = await planHooksInstall(file, command);
  const write = plan.added.length > 0 && !values["dry-run"];
  if (write) await applyHooksPlan(plan);
  if (values.json) {
    process.stdout.write(JSON.stringify({ file, added: plan.added, written: write }) + "\n");
  } else if (plan.added.length === 0) {
    process.stdout.write(`${file}: lake's hooks are already installed; nothing changed\n`);
  } else {
    process.stdout.write(`${file}:\n${lineDiff(plan.before ?? "", plan.after)}\n${write ? "written" : "dry run: not written"}\n`);
  }
  return 0;
}

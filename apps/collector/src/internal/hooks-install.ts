// `lake-collector hooks install`: add lake's hook entries to a Claude Code settings file. Shows the
// change, writes atomically, is idempotent, and keeps every hook the user already has.
import { accessSync, constants, realpathSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { delimiter, isAbsolute, join } from "node:path";
import { CollectorError } from "./errors.js";
import { collectorArgv, replaceUserFile, shellQuote } from "./user-file.js";

/** The hook events lake records. Tool events get the `*` matcher. */
export const HOOK_EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "Stop", "SubagentStop", "PreCompact", "SessionEnd"] as const;
const TOOL_EVENTS = new Set(["PreToolUse", "PostToolUse"]);

/** The default Claude Code settings file (`$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`). */
export function defaultSettingsFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.CLAUDE_CONFIG_DIR || join(homedir(), ".claude"), "settings.json");
}

/**
 * The command `hooks install` writes by default: this node and this package's bin, each by its
 * absolute real path (shell-quoted), then `hook`. Claude Code runs hooks through a shell whose
 * PATH may hold neither `lake-collector` nor `node`, so the command names both.
 */
export function defaultHookCommand(): string {
  return [...collectorArgv(), "hook"].map(shellQuote).join(" ");
}

/**
 * The status line command `hooks install --statusline` writes: lake-reader as found on `$PATH`, by
 * its absolute real path — a bin script (`…/lake-reader/bin/lake-reader.js`, what npm links) run
 * by this node, else the executable itself — then `statusline`. Claude Code's shell may have
 * neither on PATH. Undefined when no lake-reader is on PATH.
 */
export function defaultStatuslineCommand(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const p = join(dir, "lake-reader");
    try {
      accessSync(p, constants.X_OK);
      const real = realpathSync(p);
      if (!statSync(real).isFile()) continue;
      const argv = real.endsWith(".js") ? [realpathSync(process.execPath), real] : [real];
      return [...argv, "statusline"].map(shellQuote).join(" ");
    } catch {
      continue;
    }
  }
  return undefined;
}

/** A status line command lake wrote before: `lake-reader statusline`, or any path of the reader's bin. */
const LAKE_STATUSLINE = /(?:^|[\s/'"])lake-reader(?:\.js)?'?\s+statusline(?:\s|$)/;

/** What to do with Claude Code's `statusLine` setting. */
export interface StatuslineInstall {
  /** The command to run (`defaultStatuslineCommand()`). */
  readonly command: string;
  /** Replace a status line that is not lake's. */
  readonly force?: boolean;
}

/** A hook command lake wrote before: `lake-collector hook`, or any path of the bin, then `hook`. */
const LAKE_HOOK = /(?:^|[\s/'"])lake-collector(?:\.js)?'?\s+hook$/;

interface HookCommand {
  type: string;
  command?: string;
  [k: string]: unknown;
}
interface HookGroup {
  matcher?: string;
  hooks?: HookCommand[];
  [k: string]: unknown;
}

/** The result of planning an install: the new settings text and the events that change. */
export interface HooksPlan {
  readonly file: string;
  readonly before: string | null;
  readonly after: string;
  readonly added: readonly string[];
  /** The statusLine setting: set (new), updated (was lake's under another command, or another's with force), unchanged; null: not asked. */
  readonly statusline: "set" | "updated" | "unchanged" | null;
}

/** Plan the install: which events get lake's command, and the settings file's new text. */
export async function planHooksInstall(file: string, command: string, statusline?: StatuslineInstall): Promise<HooksPlan> {
  let before: string | null = null;
  let settings: Record<string, unknown> = {};
  try {
    before = await readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw new CollectorError("Input", `${file}: cannot read settings (${(e as Error).message})`);
  }
  if (before !== null && before.trim() !== "") {
    try {
      const parsed: unknown = JSON.parse(before);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not a JSON object");
      settings = parsed as Record<string, unknown>;
    } catch (e) {
      throw new CollectorError("Input", `${file}: settings are not a JSON object (${(e as Error).message}); nothing written`);
    }
  }
  const hooks = (settings.hooks ?? {}) as Record<string, unknown>;
  if (typeof hooks !== "object" || Array.isArray(hooks)) throw new CollectorError("Input", `${file}: "hooks" is not an object; nothing written`);
  const added: string[] = [];
  for (const event of HOOK_EVENTS) {
    const groups = (hooks[event] ?? []) as HookGroup[];
    if (!Array.isArray(groups)) throw new CollectorError("Input", `${file}: hooks.${event} is not an array; nothing written`);
    const present = groups.some((g) => Array.isArray(g?.hooks) && g.hooks.some((h) => h?.type === "command" && h.command === command));
    if (present) continue;
    // lake's hook under another command (the bare name, an older node or install path): point it here.
    const older = groups.flatMap((g) => (Array.isArray(g?.hooks) ? g.hooks : [])).find((h) => h?.type === "command" && typeof h.command === "string" && LAKE_HOOK.test(h.command));
    if (older) {
      older.command = command;
      added.push(event);
      continue;
    }
    const group: HookGroup = TOOL_EVENTS.has(event) ? { matcher: "*", hooks: [{ type: "command", command }] } : { hooks: [{ type: "command", command }] };
    hooks[event] = [...groups, group];
    added.push(event);
  }
  settings.hooks = hooks;
  let line: HooksPlan["statusline"] = null;
  if (statusline) {
    const cur = settings.statusLine as { type?: unknown; command?: unknown } | undefined;
    if (cur !== undefined && (typeof cur !== "object" || cur === null || Array.isArray(cur))) throw new CollectorError("Input", `${file}: "statusLine" is not an object; nothing written`);
    const want = { type: "command", command: statusline.command };
    if (cur === undefined) line = "set";
    else if (cur.type === "command" && cur.command === statusline.command) line = "unchanged";
    else if ((cur.type === "command" && typeof cur.command === "string" && LAKE_STATUSLINE.test(cur.command)) || statusline.force) line = "updated";
    else throw new CollectorError("Input", `${file}: statusLine already runs ${JSON.stringify(cur.command ?? cur)}, not lake-reader; nothing written (--force replaces it)`);
    // Keep the user's other statusLine keys (padding …) when only the command changes.
    if (line !== "unchanged") settings.statusLine = { ...(cur ?? {}), ...want };
  }
  const changed = added.length > 0 || (line !== null && line !== "unchanged");
  const after = JSON.stringify(settings, null, 2) + "\n";
  return { file, before, after: !changed && before !== null ? before : after, added, statusline: line };
}

/** A line diff of two texts (`-`/`+` lines around the changed region), for showing the change. */
export function lineDiff(before: string, after: string): string {
  const a = before.split("\n");
  const b = after.split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length - 1;
  let endB = b.length - 1;
  while (endA >= start && endB >= start && a[endA] === b[endB]) {
    endA--;
    endB--;
  }
  const out: string[] = [];
  for (let i = Math.max(0, start - 2); i < start; i++) out.push(`  ${a[i]}`);
  for (let i = start; i <= endA; i++) out.push(`- ${a[i]}`);
  for (let i = start; i <= endB; i++) out.push(`+ ${b[i]}`);
  for (let i = endA + 1; i < Math.min(a.length, endA + 3); i++) out.push(`  ${a[i]}`);
  return out.join("\n");
}

/** Write the plan atomically (temp file + rename). */
export async function applyHooksPlan(plan: HooksPlan): Promise<void> {
  await replaceUserFile(plan.file, plan.after);
}

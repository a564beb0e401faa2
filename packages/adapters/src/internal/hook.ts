// Hook events: the JSON Claude Code passes to a hook on stdin, as the collector's spool keeps it
// (one JSON object a line: the payload itself, or {received_at, payload, decision?, exit_code?}).
// Each line converts on its own; the session comes from the payload's session_id.
import { basename, join } from "node:path";
import type { RawRecord } from "@lake/events";
import { MAIN_STREAM } from "@lake/events/record";
import { LineRecords, attrsText, bool, isoTs, jsonText, lineJson, obj, str, textId, unknownRecord, type Obj } from "./build.js";
import { snapshotLines } from "./codex.js";
import { discoverWith, homeOf, relPath } from "./discover.js";
import type { Adapter, DiscoverOptions, SourceLine, SourceRef } from "./types.js";

const ADAPTER = { name: "hook", version: "1.0.0" };

/** Convert one hook spool line to records. */
export function hookLine(source: SourceRef, line: SourceLine): RawRecord[] {
  const { text, value: v } = lineJson(line);
  const o = obj(v);
  if (!o) return [unknownRecord(source, line, text, ADAPTER, v === undefined ? "invalid JSON" : "not a JSON object")];
  const wrapped = obj(o.payload);
  const p: Obj = wrapped && str(wrapped.hook_event_name) ? wrapped : o;
  const event = str(p.hook_event_name);
  if (!event) return [unknownRecord(source, line, text, ADAPTER, "no hook_event_name")];
  const session = str(p.session_id) ?? source.session_id;
  const agent = str(p.agent_id);
  const b = new LineRecords({ ...source, session_id: session, stream: event === "SubagentStop" || !agent ? source.stream : agent }, line, ADAPTER, textId(text));
  const out = obj(p.hookSpecificOutput) ?? obj(o.output);
  const decision = str(o.decision) ?? str(out?.decision) ?? str(out?.permissionDecision) ?? str(obj(out?.hookSpecificOutput)?.permissionDecision);
  const common = {
    ts: isoTs(o.received_at) ?? isoTs(o.ts) ?? isoTs(p.timestamp),
    cwd: str(p.cwd),
    vendor_type: `hook/${event}`,
  };
  const attrs = (extra: Obj = {}) =>
    attrsText({
      hook_event_name: event,
      decision,
      reason: str(o.reason) ?? str(out?.reason) ?? str(p.reason),
      permission_mode: str(p.permission_mode),
      transcript_path: str(p.transcript_path),
      hook_exit_code: typeof o.exit_code === "number" ? o.exit_code : undefined,
      ...extra,
    });
  const toolResponse = obj(p.tool_response);
  switch (event) {
    case "UserPromptSubmit":
      b.add({ ...common, kind: "user", role: "user", text: str(p.prompt), attrs: attrs() });
      break;
    case "PreToolUse":
    case "PermissionRequest":
      b.add({ ...common, kind: "tool_call", tool_name: str(p.tool_name), tool_call_id: str(p.tool_use_id), tool_input: jsonText(p.tool_input), attrs: attrs() });
      break;
    case "PostToolUse":
    case "PostToolUseFailure": {
      const ec = toolResponse?.exitCode ?? toolResponse?.exit_code;
      const failed = event === "PostToolUseFailure" || bool(toolResponse?.is_error) === true || (typeof ec === "number" && ec !== 0);
      b.add({
        ...common,
        kind: "tool_result",
        tool_name: str(p.tool_name),
        tool_call_id: str(p.tool_use_id),
        tool_input: jsonText(p.tool_input),
        text: str(toolResponse?.stdout) ?? str(p.error) ?? (p.tool_response === undefined ? undefined : typeof p.tool_response === "string" ? p.tool_response : JSON.stringify(p.tool_response)),
        exit_code: typeof ec === "number" && Number.isInteger(ec) ? ec : undefined,
        is_error: failed || undefined,
        attrs: attrs({ interrupted: bool(toolResponse?.interrupted) || undefined }),
      });
      break;
    }
    case "Notification":
      b.add({ ...common, kind: "system", role: "system", text: str(p.message), attrs: attrs({ notification_type: str(p.notification_type), title: str(p.title) }) });
      break;
    case "PreCompact":
      b.add({ ...common, kind: "system", role: "system", text: str(p.custom_instructions) || undefined, attrs: attrs({ trigger: str(p.trigger) }) });
      break;
    case "SubagentStop":
    case "SubagentStart":
      b.add({ ...common, kind: "meta", child_stream: agent, text: str(p.last_assistant_message), attrs: attrs({ agent_type: str(p.agent_type), stop_hook_active: bool(p.stop_hook_active), agent_transcript_path: str(p.agent_transcript_path) }) });
      break;
    case "Stop":
      b.add({ ...common, kind: "meta", text: str(p.last_assistant_message), attrs: attrs({ stop_hook_active: bool(p.stop_hook_active) }) });
      break;
    case "SessionStart":
      b.add({ ...common, kind: "meta", model: str(p.model), attrs: attrs({ source: str(p.source), agent_type: str(p.agent_type) }) });
      break;
    default:
      // SessionEnd and any newer event.
      b.add({ ...common, kind: "meta", attrs: attrs({ keys: Object.keys(p).sort() }) });
  }
  return b.out;
}

/** Describe a spool file: the session id is its name (records take theirs from each payload). */
export async function describeHook(path: string, root: string | undefined, rel = root ? relPath(root, path) : path): Promise<SourceRef> {
  return { runtime: "hook", path, rel, session_id: basename(path).replace(/\.jsonl$/, ""), stream: MAIN_STREAM, kind: "spool", mode: "append" };
}

/** The default hook spool: `$LAKE_ROOT/_hooks`, else `$XDG_DATA_HOME/lake/_hooks`, else `~/.local/share/lake/_hooks`. */
export function defaultHookSpool(env: Readonly<Record<string, string | undefined>> = process.env, home?: string): string {
  const root = env.LAKE_ROOT ?? join(env.XDG_DATA_HOME ?? join(homeOf(home), ".local", "share"), "lake");
  return join(root, "_hooks");
}

/** The hook-event adapter (the collector's own spool of hook payloads). */
export const hookAdapter: Adapter = {
  runtime: "hook",
  name: ADAPTER.name,
  version: ADAPTER.version,
  defaultRoots(env = process.env, home) {
    return [defaultHookSpool(env, home)];
  },
  discover(options: DiscoverOptions = {}) {
    const roots = options.roots ?? this.defaultRoots(options.env, options.home);
    return discoverWith("hook", roots, options, (rel) => rel.endsWith(".jsonl"), (p, r, rel) => describeHook(p, r, rel));
  },
  describe: (path, root) => describeHook(path, root),
  initialState: () => ({}),
  stateless: true,
  parseLines(source, lines) {
    const out: RawRecord[] = [];
    for (const l of lines) for (const r of hookLine(source, l)) out.push(r);
    return out;
  },
  parseSnapshot(source, content) {
    return snapshotLines(content, (l) => hookLine(source, l));
  },
};

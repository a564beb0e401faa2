import { describe, expect, it } from "vitest";
import { canonicalize } from "@lake/events";
import { hookAdapter } from "../src/index.js";

const source = { runtime: "hook", path: "/spool/s1.jsonl", rel: "s1.jsonl", session_id: "s1", stream: "main", kind: "spool", mode: "append" as const };
const base = { session_id: "abc", transcript_path: "/home/u/.claude/projects/p/abc.jsonl", cwd: "/work", permission_mode: "default" };
const payloads = [
  { ...base, hook_event_name: "SessionStart", source: "startup" },
  { ...base, hook_event_name: "UserPromptSubmit", prompt: "fix the bug" },
  { received_at: "2026-03-01T10:00:00Z", decision: "deny", reason: "blocked path", payload: { ...base, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "rm -rf /" }, tool_use_id: "toolu_1" } },
  { ...base, hook_event_name: "PostToolUse", tool_name: "Bash", tool_input: { command: "ls" }, tool_use_id: "toolu_2", tool_response: { stdout: "a\nb", stderr: "", interrupted: false, exitCode: 2 } },
  { ...base, hook_event_name: "Notification", message: "Claude needs your permission" },
  { ...base, hook_event_name: "PreCompact", trigger: "manual", custom_instructions: "" },
  { ...base, hook_event_name: "Stop", stop_hook_active: false },
  { ...base, hook_event_name: "SubagentStop", stop_hook_active: false, agent_id: "a123" },
  { ...base, hook_event_name: "SessionEnd", reason: "logout" },
];

describe("hook events", () => {
  it("map to records with hook_event_name and decisions in attrs", () => {
    const lines = [...payloads.map((p, i) => ({ bytes: JSON.stringify(p), offset: i * 500, line: i + 1 })), { bytes: "garbage", offset: 9999, line: 10 }];
    const recs = hookAdapter.parseLines(source, lines, {}).map((r) => canonicalize(r));
    expect(recs.map((r) => r.kind)).toEqual(["meta", "user", "tool_call", "tool_result", "system", "system", "meta", "meta", "meta", "unknown"]);
    expect(recs.slice(0, 9).every((r) => r.session_id === "abc" && r.vendor_type?.startsWith("hook/"))).toBe(true);
    const pre = recs[2]!;
    expect(JSON.parse(pre.attrs!)).toMatchObject({ hook_event_name: "PreToolUse", decision: "deny", reason: "blocked path" });
    expect([pre.tool_name, pre.tool_call_id, pre.ts]).toEqual(["Bash", "toolu_1", "2026-03-01T10:00:00.000Z"]);
    const post = recs[3]!;
    expect([post.exit_code, post.is_error, post.text]).toEqual([2, true, "a\nb"]);
    expect(recs[1]!.text).toBe("fix the bug");
    expect(recs[7]!.child_stream).toBe("a123");
    expect(JSON.parse(recs[8]!.attrs!).reason).toBe("logout");
    expect(recs[9]!.raw).toBe("garbage");
  });
});

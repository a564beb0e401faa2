import { afterAll, describe, expect, it } from "vitest";
import { claudeCodeAdapter } from "../src/index.js";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { FIXTURES, records } from "./helpers.js";

afterAll(cleanupTempDirs);

const S = "marot-spotter/258c7280-ae70-4798-800f-63464d01a85d";

describe("Claude Code records", () => {
  it("one assistant line with text and two tool_use blocks yields three records, usage on the first only", () => {
    const source = { runtime: "claude-code", path: "/x/s.jsonl", rel: "p/s.jsonl", session_id: "s", stream: "main", kind: "transcript", mode: "append" as const };
    const line = JSON.stringify({
      type: "assistant", uuid: "u1", parentUuid: "u0", sessionId: "s", timestamp: "2026-01-01T00:00:00Z", requestId: "req_1", isSidechain: false,
      message: { id: "msg_1", model: "claude-opus-4-6", role: "assistant", usage: { input_tokens: 5, cache_read_input_tokens: 7, cache_creation_input_tokens: 11, output_tokens: 13 },
        content: [{ type: "text", text: "hi" }, { type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } }, { type: "tool_use", id: "t2", name: "Read", input: { file_path: "/a" } }] },
    });
    const recs = claudeCodeAdapter.parseLines(source, [{ bytes: Buffer.from(line), offset: 100, line: 3 }], {});
    expect(recs.map((r) => [r.kind, r.record_id, r.tool_call_id])).toEqual([["assistant", "u1", undefined], ["tool_call", "u1#1", "t1"], ["tool_call", "u1#2", "t2"]]);
    expect(recs[0]!.usage).toEqual({ input_tokens: 5, cached_input_tokens: 7, cache_write_tokens: 11, output_tokens: 13 });
    expect(recs[0]!.usage_key).toBe("req_1");
    expect(recs[0]!.usage_mode).toBe("delta");
    expect(recs.slice(1).every((r) => r.usage === undefined)).toBe(true);
    expect(recs.every((r) => r.source_offset === 100 && r.source_line === 3 && r.request_id === "req_1" && r.message_id === "msg_1")).toBe(true);
    expect(JSON.parse(recs[1]!.tool_input!)).toEqual({ command: "ls" });
  });

  it("every tool_call has its tool_result by tool_call_id; the Task call links to its child stream", async () => {
    const recs = await records("claude-code", `${S}.jsonl`);
    const calls = new Map(recs.filter((r) => r.kind === "tool_call").map((r) => [r.tool_call_id, r]));
    const results = recs.filter((r) => r.kind === "tool_result");
    expect(calls.size).toBe(186);
    expect(results.length).toBe(186);
    for (const r of results) expect(calls.has(r.tool_call_id)).toBe(true);
    const task = [...calls.values()].find((r) => r.tool_name === "Task")!;
    const taskResult = results.find((r) => r.tool_call_id === task.tool_call_id)!;
    expect(taskResult.child_stream).toBe("a881341");
    expect(taskResult.usage).toBeUndefined();
    // agent_progress rows name the child and the call too, with no usage.
    const prog = recs.filter((r) => r.vendor_type === "progress/agent_progress");
    expect(prog.length).toBe(5);
    expect(prog.every((r) => r.child_stream === "a881341" && r.tool_call_id === task.tool_call_id && !r.usage)).toBe(true);
    // The child's transcript is its own stream of the same session.
    const child = await claudeCodeAdapter.describe(`${FIXTURES}/claude-code/${S}/subagents/agent-a881341.jsonl`, `${FIXTURES}/claude-code`);
    expect([child.session_id, child.stream, child.mode]).toEqual(["258c7280-ae70-4798-800f-63464d01a85d", "a881341", "append"]);
  });

  it("every record type of the fixtures maps to a kind", async () => {
    const recs = await records("claude-code", `${S}.jsonl`);
    const vt = new Set(recs.map((r) => `${r.kind}:${r.vendor_type}`));
    for (const k of ["meta:file-history-snapshot", "meta:progress/hook_progress", "meta:progress/bash_progress", "meta:progress/waiting_for_task", "meta:queue-operation/enqueue", "system:system/compact_boundary", "system:system/stop_hook_summary", "system:system/turn_duration", "summary:user/compact_summary", "assistant:assistant/thinking", "assistant:assistant/text", "tool_call:assistant/tool_use", "tool_result:user/tool_result", "user:user"])
      expect(vt.has(k), k).toBe(true);
    const sums = await records("claude-code", "codemie-code/conversations/sessions/c3a574c5.jsonl");
    expect(sums.filter((r) => r.kind === "summary" && r.vendor_type === "summary").length).toBe(4);
  });

  it("the .meta.json sidecar is a snapshot source naming the call that launched the agent", async () => {
    const dir = `${FIXTURES}/claude-code/daaain-claude-code-log/minimal_showcase/55550000-0000-4000-8000-000000000001/subagents`;
    const src = await claudeCodeAdapter.describe(`${dir}/agent-showcol1.meta.json`, `${FIXTURES}/claude-code`);
    expect([src.session_id, src.stream, src.kind, src.mode]).toEqual(["55550000-0000-4000-8000-000000000001", "showcol1", "meta", "snapshot"]);
    const recs = await records("claude-code", "daaain-claude-code-log/minimal_showcase/55550000-0000-4000-8000-000000000001/subagents/agent-showcol1.meta.json");
    expect(recs.length).toBe(1);
    expect([recs[0]!.kind, recs[0]!.child_stream, recs[0]!.tool_call_id]).toEqual(["meta", "showcol1", "toolu_sc_showcol1"]);
  });

  it("a line that is not JSON becomes an unknown record keeping its text", () => {
    const source = { runtime: "claude-code", path: "/x/s.jsonl", rel: "s.jsonl", session_id: "s", stream: "main", kind: "transcript", mode: "append" as const };
    const recs = claudeCodeAdapter.parseLines(source, [{ bytes: "{not json", offset: 0, line: 1 }], {});
    expect(recs).toHaveLength(1);
    expect([recs[0]!.kind, recs[0]!.raw]).toEqual(["unknown", "{not json"]);
  });
});

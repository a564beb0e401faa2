// The hook spool and live broca WALs are @lake/wal files: collect reads them through the store's
// framed append cursor, incrementally, and refuses a newer writer's WAL whole.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { usageBySession, type CanonicalRecord } from "@lake/events";
import { readIndex, readLanded } from "@lake/store";
import { WalWriter, encodeFrame, walAddress } from "@lake/wal";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { runCli } from "./helpers.js";

afterAll(cleanupTempDirs);

function records(root: string, sessionId: string): CanonicalRecord[] {
  const idx = readIndex(root, sessionId);
  return idx.files.flatMap((f) => readLanded(root, sessionId, f.seq).rows.map((r) => JSON.parse(r) as CanonicalRecord));
}

const config = { model: { provider_module_id: "anthropic", model_id: "claude-opus-4-6" }, tools: [], tool_choice: "auto", generation: {}, response_format: null, context_epoch: 0, renderer_version: 1 };

describe("framed sources", () => {
  it("collects hook events from the spool, only the new ones on the next pass", async () => {
    const dir = tempDir("hooks");
    const root = join(dir, "root");
    const env = { HOME: join(dir, "home") };
    const ev = (name: string, extra: Record<string, unknown> = {}) => JSON.stringify({ session_id: "c0ffee00-0000-4000-8000-000000000001", hook_event_name: name, cwd: "/w", ...extra });
    for (const e of [ev("SessionStart"), ev("UserPromptSubmit", { prompt: "run the tests" }), ev("PreToolUse", { tool_name: "Bash", tool_use_id: "t1", tool_input: { command: "npm test" } })]) {
      expect((await runCli(["hook", "--root", root], env, e)).code).toBe(0);
    }
    const c1 = JSON.parse((await runCli(["collect", "--root", root, "--sources-only", "--json"], env)).stdout);
    expect(c1).toMatchObject({ sessions: 1, landed_files: 1, records: 3, failed: false });
    expect((await runCli(["hook", "--root", root], env, ev("PostToolUse", { tool_name: "Bash", tool_use_id: "t1", tool_response: { stdout: "1 failing", exitCode: 1 } }))).code).toBe(0);
    const c2 = JSON.parse((await runCli(["collect", "--root", root, "--sources-only", "--json"], env)).stdout);
    expect(c2).toMatchObject({ landed_files: 1, records: 1 });
    const recs = records(root, "c0ffee00-0000-4000-8000-000000000001");
    expect(recs.map((r) => r.vendor_type)).toEqual(["hook/SessionStart", "hook/UserPromptSubmit", "hook/PreToolUse", "hook/PostToolUse"]);
    expect(recs[3]).toMatchObject({ kind: "tool_result", tool_call_id: "t1", exit_code: 1, is_error: true, runtime: "hook" });
    expect((await runCli(["verify", "--root", root], env)).code).toBe(0);
  });

  it("collects a live broca WAL incrementally with usage from its model steps", async () => {
    const dir = tempDir("broca");
    const state = join(dir, "broca-state");
    mkdirSync(join(state, "wal"), { recursive: true });
    const addr = walAddress({ project_root: "/p", harness: "runner", session: "s1" });
    const file = join(state, "wal", `${addr}.wal`);
    const w = await WalWriter.open(file, { fsync: "always" });
    await w.append({ type: "run_started", run_id: "r1", session: { project_root: "/p", harness: "runner", session: "s1" }, ts_ms: 1767225600000, config, input: [{ role: "user", content: [{ type: "text", text: "hello" }] }] });
    await w.append({ type: "step_started", step_id: 1 });
    await w.append({ type: "model_step_finished", step_id: 1, assistant_message: { role: "assistant", content: [{ type: "text", text: "hi" }] }, usage: { input_tokens: 10, cached_input_tokens: 100, output_tokens: 5 } });
    const root = join(dir, "root");
    const env = { HOME: join(dir, "home") };
    const args = ["collect", "--root", root, "--sources-only", "--source", `broca=${state}`, "--json"];
    const c1 = JSON.parse((await runCli(args, env)).stdout);
    expect(c1).toMatchObject({ sessions: 1, failed: false });
    await w.append({ type: "step_started", step_id: 2 });
    await w.append({ type: "model_step_finished", step_id: 2, assistant_message: { role: "assistant", content: [{ type: "text", text: "done" }] }, usage: { input_tokens: 20, output_tokens: 7 } });
    await w.close();
    const c2 = JSON.parse((await runCli(args, env)).stdout);
    expect(c2).toMatchObject({ landed_files: 1, failed: false });
    const recs = records(root, addr);
    // The second pass landed only steps 2's frames; the model comes from run_started in the first window.
    expect(recs.filter((r) => r.kind === "assistant").map((r) => [r.text, r.model])).toEqual([["hi", "claude-opus-4-6"], ["done", "claude-opus-4-6"]]);
    expect(usageBySession(recs).get(addr)?.usage).toEqual({ input_tokens: 30, cached_input_tokens: 100, output_tokens: 12 });
    // A torn tail (a writer mid-append) waits: nothing lands, nothing fails.
    appendFileSync(file, readFileSync(file).subarray(0, 30));
    const c3 = JSON.parse((await runCli(args, env)).stdout);
    expect(c3).toMatchObject({ landed_files: 0, failed: false, conflicts: 0 });
  });

  it("refuses a WAL of a newer writer whole: a conflict naming the file, nothing landed", async () => {
    const dir = tempDir("newer");
    const state = join(dir, "broca-state");
    mkdirSync(join(state, "wal"), { recursive: true });
    const addr = walAddress({ project_root: "/p", harness: "runner", session: "s2" });
    const file = join(state, "wal", `${addr}.wal`);
    const payload = Buffer.from(JSON.stringify({ requires: ["time-travel/v9"], record: { type: "step_started", step_id: 1 } }));
    writeFileSync(file, encodeFrame({ ver: 3, seq: 1n, fence: 0n, payload }));
    const root = join(dir, "root");
    const r = await runCli(["collect", "--root", root, "--sources-only", "--source", `broca=${state}`, "--json"], { HOME: join(dir, "home") });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(new RegExp(`${addr}\\.wal: newer writer: record 1 requires unknown feature time-travel/v9 at byte 0`));
    expect(JSON.parse(r.stdout)).toMatchObject({ landed_files: 0, conflicts: 1 });
  });
});

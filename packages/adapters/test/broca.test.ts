import { afterAll, describe, expect, it } from "vitest";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { WalWriter, walAddress, writeArchive } from "@lake/wal";
import { usageBySession } from "@lake/events";
import { brocaAdapter, readSession } from "../src/index.js";

afterAll(cleanupTempDirs);

const config = { model: { provider_module_id: "anthropic", model_id: "claude-opus-4-6" }, tools: [], tool_choice: "auto", generation: {}, response_format: null, context_epoch: 0, renderer_version: 1 };

async function writeWal(path: string, steps: number[][]): Promise<void> {
  const w = await WalWriter.open(path, { fsync: "manual" });
  await w.append({ type: "run_started", run_id: "r1", session: { project_root: "/p", harness: "h", session: "s" }, ts_ms: 1767225600000, config, input: [{ role: "user", content: [{ type: "text", text: "hello" }] }] });
  let sum = [0, 0, 0];
  for (const [i, s] of steps.entries()) {
    await w.append({ type: "step_started", step_id: i + 1 });
    await w.append({ type: "model_step_finished", step_id: i + 1, assistant_message: { role: "assistant", content: [{ type: "text", text: `step ${i}` }] }, usage: { input_tokens: s[0], cached_input_tokens: s[1], output_tokens: s[2] } });
    sum = sum.map((v, k) => v + s[k]!);
  }
  await w.append({ type: "tool_dispatch_intent", batch_id: "b1", tool_call_id: "c1", tool_name: "read", args: { path: "x" } });
  await w.append({ type: "run_finished", reason: "done", ts_ms: 1767225660000, usage: { input_tokens: sum[0], cached_input_tokens: sum[1], output_tokens: sum[2] } });
  await w.close();
}

describe("broca WAL", () => {
  it("one session per address, usage from model_step_finished only, live-first over the archive", async () => {
    const root = tempDir("broca-root");
    const live = walAddress({ project_root: "/p", harness: "h", session: "s" });
    const archivedOnly = walAddress({ project_root: "/p", harness: "h", session: "old" });
    mkdirSync(join(root, "wal"), { recursive: true });
    await writeWal(join(root, "wal", `${live}.wal`), [[10, 100, 5], [20, 200, 7]]);
    // An older archived copy of the live session (fewer steps) and a session only in the archive.
    const scratch = tempDir("broca-scratch");
    await writeWal(join(scratch, "a.wal"), [[1, 1, 1]]);
    await writeWal(join(scratch, "b.wal"), [[3, 30, 4]]);
    mkdirSync(join(root, "wal-archive"), { recursive: true });
    await writeArchive(join(root, "wal-archive", "fold-1767225600000.ark"), [
      { addr: live, bytes: readFileSync(join(scratch, "a.wal")) },
      { addr: archivedOnly, bytes: readFileSync(join(scratch, "b.wal")) },
    ]);
    const d = await brocaAdapter.discover({ roots: [root] });
    expect(d.sources.map((s) => [s.session_id, s.mode])).toEqual([[live, "append"], [archivedOnly, "snapshot"]]);
    const s1 = await readSession("broca", live, { roots: [root] });
    const u = usageBySession(s1.records).get(live)!;
    // Two steps: 10+20 fresh, 100+200 cached, 5+7 out. run_finished's summed usage is not counted again.
    expect(u.usage).toEqual({ input_tokens: 30, cached_input_tokens: 300, output_tokens: 12 });
    expect(u.by_model.has("claude-opus-4-6")).toBe(true);
    expect(s1.records.find((r) => r.kind === "tool_call")?.tool_call_id).toBe("c1");
    expect(s1.records.find((r) => r.kind === "user")?.text).toBe("hello");
    const s2 = await readSession("broca", archivedOnly, { roots: [root] });
    expect(usageBySession(s2.records).get(archivedOnly)?.usage).toEqual({ input_tokens: 3, cached_input_tokens: 30, output_tokens: 4 });
    // Incremental: records after a sequence number only.
    const bytes = readFileSync(join(root, "wal", `${live}.wal`));
    const all = brocaAdapter.parseWal(s1.sources[0]!, bytes);
    const tail = brocaAdapter.parseWal(s1.sources[0]!, bytes, { afterSeq: 3 });
    expect(tail).toEqual(all.filter((r) => r.source_line! > 3));
    expect(() => brocaAdapter.parseLines(s1.sources[0]!, [], {})).toThrow(/framed/);
  });
});

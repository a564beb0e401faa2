// The real Claude Code fixture with subagents (marot-spotter), landed through @lake/store, parsed into a chain.
import { readdirSync, readFileSync, rmSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { readIndex } from "@lake/store";
import { foldChain, parse, verify, type Conversation, type StreamNode, type ToolCall } from "@lake/chain";
import { collect, completeSource, fixtureSources, partialSource, SESSION } from "./support/store-session.js";

afterAll(cleanupTempDirs);

type Obj = Record<string, unknown>;

/** What the raw fixture says, read independently of the chain: tool_use ids, Task launches, the compaction agent. */
function rawFacts(): { toolUses: Map<string, string>; results: Set<string>; tasks: Map<string, string>; unlaunched: { stream: string; firstParent: string }[] } {
  const toolUses = new Map<string, string>();
  const results = new Set<string>();
  const tasks = new Map<string, string>(); // Task tool_use id -> agentId
  const firstParent = new Map<string, string>();
  for (const src of fixtureSources()) {
    for (const line of readFileSync(src.path, "utf8").split("\n")) {
      if (!line) continue;
      const o = JSON.parse(line) as Obj;
      const content = (o.message as Obj | undefined)?.content;
      if (typeof o.parentUuid === "string" && !firstParent.has(src.stream)) firstParent.set(src.stream, o.parentUuid);
      if (!Array.isArray(content)) continue;
      for (const c of content as Obj[]) {
        if (o.type === "assistant" && c.type === "tool_use") toolUses.set(c.id as string, c.name as string);
        if (o.type === "user" && c.type === "tool_result") {
          results.add(c.tool_use_id as string);
          const agentId = (o.toolUseResult as Obj | undefined)?.agentId;
          if (typeof agentId === "string") tasks.set(c.tool_use_id as string, agentId);
        }
      }
    }
  }
  const launched = new Set(tasks.values());
  const unlaunched = fixtureSources()
    .filter((s) => s.stream !== "main" && !launched.has(s.stream))
    .map((s) => ({ stream: s.stream, firstParent: firstParent.get(s.stream) as string }));
  return { toolUses, results, tasks, unlaunched };
}

function allCalls(node: StreamNode): ToolCall[] {
  return node.turns.flatMap((t) => t.calls.flatMap((c) => [c, ...c.children.flatMap(allCalls)]));
}

function shape(c: Conversation): unknown {
  return { main: c.main, detached: c.detached, calls: c.calls, messages: c.messages, compactions: c.compactions, through: c.throughSeq };
}

describe("the chain of a real Claude Code session with subagents", () => {
  const facts = rawFacts();

  it("every tool_use has its tool_result; each subagent stream hangs under the Task call that launched it", async () => {
    const root = tempDir("chain-fixture");
    await collect(root);
    const index = readIndex(root, SESSION);
    expect(index.files.length).toBeGreaterThan(3); // the main transcript was cut into several landed files
    const res = await parse(root, SESSION);
    expect(res.published?.round).toBe(1);
    expect(res.published?.range).toEqual({ from: 1, to: index.indexedSeq });
    const conv = await foldChain(root, SESSION);

    const withCall = conv.calls.filter((c) => c.call !== null);
    expect(new Set(withCall.map((c) => c.id))).toEqual(new Set(facts.toolUses.keys()));
    for (const c of withCall) expect(c.result, `tool_use ${c.id} (${facts.toolUses.get(c.id)})`).not.toBeNull();
    expect(conv.calls.filter((c) => c.result !== null && c.call === null)).toEqual([]); // no result without its call
    // progress of hooks names ids that are no tool call: fragments only, never paired
    expect(conv.calls.filter((c) => c.call === null).every((c) => c.result === null && c.fragments.length > 0)).toBe(true);
    // every call sits in the tree: main's turns, or the turns of the child streams nested under calls
    expect(allCalls(conv.main).length + conv.detached.flatMap(allCalls).length).toBe(conv.calls.length);

    expect(facts.tasks.size).toBeGreaterThan(0);
    for (const [callId, agent] of facts.tasks) {
      expect(facts.toolUses.get(callId)).toBe("Task");
      const call = conv.calls.find((c) => c.id === callId) as ToolCall;
      expect(call.stream).toBe("main");
      expect(call.children.map((c) => c.name)).toEqual([agent]);
      const child = call.children[0] as StreamNode;
      expect(child.launch).toMatchObject({ child: agent, callId, anchor: false });
      expect(child.turns.length).toBeGreaterThan(0);
      // the child's own calls are paired inside it
      for (const cc of allCalls(child)) expect(cc.result).not.toBeNull();
      expect(conv.main.turns.some((t) => t.calls.includes(call))).toBe(true);
    }
    // A child no Task launched (the compaction agent) is detached, anchored at the main record it branches from.
    expect(conv.detached.map((d) => d.name)).toEqual(facts.unlaunched.map((u) => u.stream));
    const anchorEntry = index.entries.find((e) => e.record_id === facts.unlaunched[0]?.firstParent);
    expect(conv.detached[0]?.launch).toEqual({ child: facts.unlaunched[0]?.stream, callId: null, at: { seq: anchorEntry?.seq, row: anchorEntry?.row }, anchor: true });
    expect(anchorEntry?.stream).toBe("main");

    // compaction and queued messages come from the index's vendor types
    expect(conv.compactions).toHaveLength(1);
    expect(conv.messages.filter((m) => m.type === "queued").map((m) => m.op)).toEqual(["enqueue", "enqueue", "remove", "enqueue", "enqueue", "remove"]);
    expect((await verify(root, SESSION)).ok).toBe(true);
  });

  it("incremental parses (collect, parse, collect more, parse) fold to the same conversation as one fresh parse", async () => {
    const root = tempDir("chain-incr");
    const src = tempDir("chain-src");
    partialSource(src, 800);
    await collect(root, src);
    expect((await parse(root, SESSION)).published?.round).toBe(1);
    completeSource(src, 800);
    await collect(root, src);
    expect((await parse(root, SESSION)).published?.round).toBe(2);
    const incremental = await foldChain(root, SESSION);
    expect(incremental.rounds).toHaveLength(2);

    const rounds = join(root, "_conversations", SESSION, "rounds");
    const snap = (): Map<string, Buffer> => new Map(readdirSync(rounds).map((n) => [n, readFileSync(join(rounds, n))]));
    rmSync(join(root, "_conversations"), { recursive: true });
    await parse(root, SESSION);
    const fresh1 = snap();
    expect(fresh1.size).toBe(1);
    expect(shape(await foldChain(root, SESSION))).toEqual(shape(incremental));
    rmSync(join(root, "_conversations"), { recursive: true });
    await parse(root, SESSION);
    expect(snap()).toEqual(fresh1); // two fresh parses of the same landed files: byte-identical rounds
  });

  it("verify catches a deleted landed file (per round) and the next parse publishes its tombstones", async () => {
    const root = tempDir("chain-del");
    await collect(root);
    await parse(root, SESSION);
    const victim = readIndex(root, SESSION).files.find((f) => f.stream !== "main");
    if (!victim) throw new Error("no child file");
    unlinkSync(join(root, SESSION, victim.rel));
    const rep = await verify(root, SESSION);
    expect(rep.exitCode).toBe(1);
    expect(rep.rounds.map((r) => r.missingSeqs)).toEqual([[victim.seq]]);
    // the index rebuilt without the file, the chain says the records are gone
    rmSync(join(root, SESSION, "index"), { recursive: true });
    const res = await parse(root, SESSION);
    expect(res.published?.round).toBe(2);
    const conv = await foldChain(root, SESSION);
    expect(conv.tombstones.map((t) => [t.seq, t.rows])).toEqual([[victim.seq, victim.records]]);
  });
});

// `show` on a real collected root: the bundled Claude Code sample collected by the built
// lake-collector bin (land, index, publish rounds), then pushed to a local fleet store. The same
// session is shown from the round chain and from the fleet's events.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "@lake/cli";
import { cpSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { collectedSamples } from "./support/collected.js";
import { run, runJson } from "./support/run.js";

afterAll(cleanupTempDirs);

const SID = "258c7280-ae70-4798-800f-63464d01a85d";

type Item = { kind: string; turn: number; stream: string; text?: string; compaction?: true; gone?: { seq: number; row: number }; tool?: { call_id: string | null; result: { text: string | null } | null; child?: { stream: string; items: Item[] } } };
type Conv = { session_id: string; source: string; agent: string | null; chain?: { rounds: number; through_seq: number }; items: Item[]; other_streams: { stream: string; items: Item[] }[] };

/** Every (call id → child stream) pair of a tree, and every call id with a result. */
function shape(items: readonly Item[], out = { children: new Map<string, string>(), results: new Set<string>(), calls: new Set<string>() }) {
  for (const it of items) {
    if (!it.tool) continue;
    if (it.tool.call_id) out.calls.add(it.tool.call_id);
    if (it.tool.call_id && it.tool.result) out.results.add(it.tool.call_id);
    if (it.tool.child) {
      out.children.set(it.tool.call_id ?? "", it.tool.child.stream);
      shape(it.tool.child.items, out);
    }
  }
  return out;
}

describe("show from the round chain of a collected root, else from events", () => {
  const samples = collectedSamples("reader-show");
  const { dir, root, store, env, args } = samples;

  beforeAll(() => {
    samples.collectAndPush();
  }, 120_000);

  it("reads the chain's fold: turns, calls beside results, the child agent under its call, compactions", async () => {
    const text = await run(["show", SID.slice(0, 8), ...args], env);
    expect(text.code).toBe(0);
    expect(text.out.split("\n")[0]).toMatch(new RegExp(`^session ${SID} \\(claude-code, local root\\) — from the round chain \\(\\d+ round\\(s\\), `));
    expect(text.out).toMatch(/── turn 1 ──/);
    expect(text.out).toMatch(/┌ agent a881341/);
    expect(text.out).toMatch(/── compaction: /);
    const conv = await runJson<Conv>(["show", SID, "--json", ...args], env);
    expect(conv.source).toBe("chain");
    expect(conv.agent).toBeNull();
    expect(conv.chain!.rounds).toBeGreaterThanOrEqual(1);
    expect(conv.chain!.through_seq).toBe(4);
    const s = shape(conv.items);
    expect([...s.children.values()]).toEqual(["a881341"]);
    expect(s.results.size).toBeGreaterThan(100);
    expect(conv.items.filter((i) => i.compaction).length).toBe(1);
    expect(new Set(conv.items.map((i) => i.turn)).size).toBeGreaterThan(3);
    expect(conv.other_streams.map((o) => o.stream)).toEqual(["acompact-fffbd0"]);
  });

  it("shows the same conversation from events: same calls, results and nesting", async () => {
    const chain = await runJson<Conv>(["show", SID, "--json", ...args], env);
    const events = await runJson<Conv>(["show", SID, "--json", "--from", "events", ...args], env);
    expect(events.source).toBe("events");
    expect(events.agent).toBe("host-t");
    const a = shape(chain.items);
    const b = shape(events.items);
    expect([...b.calls].sort()).toEqual([...a.calls].sort());
    expect([...b.results].sort()).toEqual([...a.results].sort());
    expect([...b.children]).toEqual([...a.children]);
    const text = await run(["show", SID, "--from", "events", ...args], env);
    expect(text.out.split("\n")[0]).toBe(`session ${SID} (claude-code, agent host-t) — from events`);
    expect(text.out).toMatch(/┌ agent a881341/);
  });

  it("falls back to events when the local root has no chain for the session", async () => {
    const empty = join(dir, "empty-root");
    mkdirSync(empty, { recursive: true });
    const conv = await runJson<Conv>(["show", SID.slice(0, 8), "--json", "--root", empty, "--store", store], env);
    expect(conv.source).toBe("events");
    const forced = await run(["show", SID, "--from", "chain", "--root", empty, "--store", store], env);
    expect(forced.code).toBe(EXIT.notFound);
    expect(forced.err).toMatch(/no round chain for session/);
    const bad = await run(["show", SID, "--from", "nowhere", ...args], env);
    expect(bad.code).toBe(2);
  });

  it("shows the records of a landed file that is gone as gone, not as text", async () => {
    const copy = join(dir, "root-gone");
    cpSync(root, copy, { recursive: true });
    const streamDir = join(copy, SID, "streams", "a881341");
    const sd = readdirSync(streamDir).filter((f) => f.endsWith(".sd"));
    expect(sd.length).toBe(1);
    rmSync(join(streamDir, sd[0]!));
    const conv = await runJson<Conv>(["show", SID, "--json", "--root", copy, "--store", store], env);
    const call = [...conv.items].find((i) => i.tool?.child?.stream === "a881341")!;
    const child = call.tool!.child!.items;
    expect(child.length).toBeGreaterThan(0);
    expect(child.every((i) => i.kind === "gone" && i.gone!.seq === 3)).toBe(true);
  });
});

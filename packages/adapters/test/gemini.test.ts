import { describe, expect, it } from "vitest";
import { canonicalize, sumUsage, usageBySession } from "@lake/events";
import { dropRewound, geminiAdapter } from "../src/index.js";

const source = { runtime: "gemini", path: "/g/chats/session-x.jsonl", rel: "h/chats/session-x.jsonl", session_id: "g1", stream: "main", kind: "transcript", mode: "append" as const };
const lines = [
  { sessionId: "g1", projectHash: "p", startTime: "2026-09-10T18:13:00Z", lastUpdated: "2026-09-10T18:13:00Z", messages: [] },
  { id: "m1", timestamp: "2026-09-10T18:13:21Z", type: "user", content: "hi" },
  // m2 written three times as its tokens grow: the last copy wins.
  { id: "m2", timestamp: "2026-09-10T18:13:22Z", type: "gemini", model: "gemini-2.5-pro", content: "", tokens: { input: 1000, output: 10, cached: 200, thoughts: 5, total: 1015 } },
  { id: "m2", timestamp: "2026-09-10T18:13:22Z", type: "gemini", model: "gemini-2.5-pro", content: "hello", tokens: { input: 1000, output: 300, cached: 200, thoughts: 50, total: 1350 } },
  { $set: { lastUpdated: "2026-09-10T18:13:30Z", summary: "greeting" } },
  { id: "m3", timestamp: "2026-09-10T18:14:00Z", type: "user", content: "more" },
  { id: "m4", timestamp: "2026-09-10T18:14:01Z", type: "gemini", model: "gemini-2.5-flash", content: "x", tokens: { input: 5000, output: 70, cached: 4000, thoughts: 0 } },
  // Rewind to m3: m3 and m4 are dropped, m4's usage with them.
  { $rewindTo: "m3" },
  { id: "m5", timestamp: "2026-09-10T18:15:00Z", type: "gemini", model: "gemini-2.5-flash", content: "y", toolCalls: [{ id: "c1", name: "read_file", args: { path: "a" }, status: "error", result: [{ functionResponse: { id: "c1", name: "read_file", response: { error: "nope" } } }] }], tokens: { input: 2000, output: 20, cached: 0 } },
];
const sl = (objs: unknown[]) => objs.map((o, i) => ({ bytes: JSON.stringify(o), offset: i * 1000, line: i + 1 }));

describe("Gemini JSONL", () => {
  it("last copy of a message id wins, $rewindTo drops what follows, $set is meta", () => {
    const recs = geminiAdapter.parseLines(source, sl(lines), geminiAdapter.initialState(source)).map((r) => canonicalize(r));
    const rewind = recs.find((r) => r.vendor_type === "$rewindTo")!;
    expect(JSON.parse(rewind.attrs!).dropped).toEqual(["m3", "m4"]);
    expect(recs.filter((r) => r.vendor_type === "$set")).toHaveLength(1);
    const tr = recs.find((r) => r.kind === "tool_result")!;
    expect([tr.tool_call_id, tr.is_error, tr.text]).toEqual(["c1", true, "nope"]);
    // m2 final: 1000−200 fresh, 200 cached, 300+50 out (50 reasoning); m5: 2000 fresh, 20 out. m4 dropped.
    const expected = { input_tokens: 800 + 2000, cached_input_tokens: 200 + 0, output_tokens: 350 + 20, reasoning_tokens: 50 };
    // countUsage alone applies both rules: each copy is a `latest` record of its message's usage
    // key, and the rewind writes a voiding `latest` copy (no usage) for every message it drops.
    expect(usageBySession(recs).get("g1")?.usage).toEqual(expected);
    expect(usageBySession(dropRewound(recs)).get("g1")?.usage).toEqual(expected);
    // The naive sum counts every copy and the dropped m4.
    expect(sumUsage(recs.map((r) => r.usage)).input_tokens).toBeGreaterThan(expected.input_tokens);
  });

  it("a state carried across windows gives the same records as one pass", () => {
    const one = geminiAdapter.parseLines(source, sl(lines), geminiAdapter.initialState(source));
    for (let cut = 0; cut <= lines.length; cut++) {
      const all = sl(lines);
      const st = geminiAdapter.initialState(source);
      const a = geminiAdapter.parseLines(source, all.slice(0, cut), st);
      const b = geminiAdapter.parseLines(source, all.slice(cut), JSON.parse(JSON.stringify(st)));
      expect([...a, ...b]).toEqual(one);
    }
  });
});

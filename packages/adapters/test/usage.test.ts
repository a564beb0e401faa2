// Per-session usage totals of the real fixtures, pinned. Each pinned number is also re-derived
// here by an independent computation over the raw JSON (not through the adapter), and the naive
// sum (every usage object in the file) is shown to differ where streaming duplicates exist.
import { afterAll, describe, expect, it } from "vitest";
import type { CanonicalRecord, Usage } from "@lake/events";
import { dropRewound } from "../src/index.js";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { jsonDoc, jsonLines, records, sessionUsage } from "./helpers.js";

afterAll(cleanupTempDirs);

type J = Record<string, any>;

/**
 * Independent Claude Code computation: assistant lines (type "assistant", or no type and
 * message.role "assistant") grouped by requestId (else message.id); the copy with the largest
 * output_tokens counts (a tie prefers isSidechain false). Progress rows and toolUseResult.usage
 * (Task results) are not assistant lines, so they never count.
 */
function claudeIndependent(files: string[]): Usage {
  const best = new Map<string, { u: J; side: boolean }>();
  for (const f of files)
    for (const o of jsonLines("claude-code", f) as J[]) {
      if (!o || (o.type ?? o.message?.role) !== "assistant" || !o.message?.usage) continue;
      const u = o.message.usage;
      const k = o.requestId ?? o.message.id;
      const cur = best.get(k);
      if (!cur || u.output_tokens > cur.u.output_tokens || (u.output_tokens === cur.u.output_tokens && cur.side && !o.isSidechain)) best.set(k, { u, side: !!o.isSidechain });
    }
  const t: Usage = { input_tokens: 0, cached_input_tokens: 0, cache_write_tokens: 0, output_tokens: 0 };
  for (const { u } of best.values()) {
    t.input_tokens! += u.input_tokens ?? 0;
    t.cached_input_tokens! += u.cache_read_input_tokens ?? 0;
    t.cache_write_tokens! += u.cache_creation_input_tokens ?? 0;
    t.output_tokens! += u.output_tokens ?? 0;
    // Claude Code 2.1 splits the writes: cache_creation.ephemeral_1h_input_tokens is the 1-hour part (absent ≠ zero).
    const h = u.cache_creation?.ephemeral_1h_input_tokens;
    if (typeof h === "number") t.cache_write_1h_tokens = (t.cache_write_1h_tokens ?? 0) + h;
  }
  return t;
}

/** Naive sum: every object that looks like Anthropic usage anywhere in the lines (what a peer tool that sums lines would get). */
function claudeNaive(files: string[]): number {
  let out = 0;
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) x.forEach(walk);
    else if (x && typeof x === "object") {
      const o = x as J;
      if (typeof o.output_tokens === "number" && typeof o.input_tokens === "number") out += o.output_tokens;
      else Object.values(o).forEach(walk);
    }
  };
  for (const f of files) jsonLines("claude-code", f).forEach(walk);
  return out;
}

async function all(runtime: string, files: string[]): Promise<CanonicalRecord[]> {
  const out: CanonicalRecord[] = [];
  for (const f of files) out.push(...(await records(runtime, f)));
  return out;
}

describe("Claude Code usage (real fixtures)", () => {
  const S = "marot-spotter/258c7280-ae70-4798-800f-63464d01a85d";
  const cases: { name: string; session: string; files: string[]; pinned: Usage; duplicates: boolean }[] = [
    {
      // Main transcript + subagent agent-a881341 + compaction agent acompact-fffbd0 (subagents/ layout).
      // 156 distinct requests; the main file repeats each streamed response on 2-4 lines and copies the
      // child's usage into 5 agent_progress rows and one Task toolUseResult.
      name: "marot-spotter 258c7280 (main + 2 subagents)",
      session: "258c7280-ae70-4798-800f-63464d01a85d",
      files: [`${S}.jsonl`, `${S}/subagents/agent-a881341.jsonl`, `${S}/subagents/agent-acompact-fffbd0.jsonl`],
      pinned: { input_tokens: 198, cached_input_tokens: 14972534, cache_write_tokens: 394137, output_tokens: 38908, cache_write_1h_tokens: 394137 },
      duplicates: true,
    },
    {
      // Task call whose child ran in-line (agent_progress rows carry the child's usage): 12 requests.
      name: "marot-spotter subagent.jsonl",
      session: "491e126e-1e71-469c-ade2-fcc8af567c74",
      files: ["marot-spotter/subagent.jsonl"],
      pinned: { input_tokens: 1576, cached_input_tokens: 427286, cache_write_tokens: 25842, output_tokens: 1586, cache_write_1h_tokens: 25842 },
      duplicates: true,
    },
    {
      name: "marot-spotter short.jsonl (one request streamed over 5 lines)",
      session: "55604662-cf2a-4331-851a-ec234028f8ca",
      files: ["marot-spotter/short.jsonl"],
      pinned: { input_tokens: 3, cached_input_tokens: 11515, cache_write_tokens: 13835, output_tokens: 13, cache_write_1h_tokens: 13835 },
      duplicates: true,
    },
    {
      name: "marot-spotter tool_heavy.jsonl",
      session: "d6e0bada-1959-4eec-a9d2-0bfade768d8f",
      files: ["marot-spotter/tool_heavy.jsonl"],
      pinned: { input_tokens: 54, cached_input_tokens: 88231, cache_write_tokens: 17696, output_tokens: 212, cache_write_1h_tokens: 17696 },
      duplicates: true,
    },
    {
      // Legacy flat layout: two agent-*.jsonl files name the parent session inside; no requestId on
      // the agents' lines, so message.id is the key.
      name: "codemie 4c2ddfdc (main + flat agent-*.jsonl)",
      session: "4c2ddfdc-b619-4525-8d03-1950fb1b0257",
      files: ["codemie-code/-tmp-private/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl", "codemie-code/-tmp-private/agent-36541525.jsonl", "codemie-code/-tmp-private/agent-50243ee8.jsonl"],
      pinned: { input_tokens: 16914, cached_input_tokens: 214627, cache_write_tokens: 54148, output_tokens: 1046 },
      duplicates: true,
    },
    {
      name: "codemie c3a574c5 (52 requests over 99 assistant lines)",
      session: "c3a574c5-3ba6-4307-b123-b48a5d021db8",
      files: ["codemie-code/conversations/sessions/c3a574c5.jsonl"],
      pinned: { input_tokens: 2573, cached_input_tokens: 2771721, cache_write_tokens: 508163, output_tokens: 12608, cache_write_1h_tokens: 0 },
      duplicates: true,
    },
    {
      name: "codemie simple-qa",
      session: "e7ac541c-f642-4bb5-b970-037eeb324655",
      files: ["codemie-code/conversations/sessions/simple-qa.jsonl"],
      pinned: { input_tokens: 10, cached_input_tokens: 0, cache_write_tokens: 38742, output_tokens: 586 },
      duplicates: true,
    },
    {
      // Synthetic (ccusage): three distinct requests, nothing to dedupe: naive equals counted.
      name: "ccusage session-alpha",
      session: "session-alpha",
      files: ["ccusage-synthetic/projects/project-alpha/session-alpha/chat.jsonl"],
      pinned: { input_tokens: 600, cached_input_tokens: 70, cache_write_tokens: 75, output_tokens: 250 },
      duplicates: false,
    },
  ];
  for (const c of cases)
    it(c.name, async () => {
      const recs = await all("claude-code", c.files);
      const got = sessionUsage(recs, c.session);
      expect(got).toEqual(c.pinned);
      expect(claudeIndependent(c.files)).toEqual(c.pinned);
      const naive = claudeNaive(c.files);
      if (c.duplicates) expect(naive).toBeGreaterThan(c.pinned.output_tokens!);
      else expect(naive).toBe(c.pinned.output_tokens);
      // Usage sits only on assistant-line records; never on progress rows or tool results.
      for (const r of recs) if (r.usage) expect(r.vendor_type?.startsWith("assistant")).toBe(true);
    });

  it("a single-message session with only API errors counts nothing", async () => {
    const recs = await records("claude-code", "codemie-code/conversations/sessions/single-user-message.jsonl");
    expect(recs.filter((r) => r.kind === "system" && r.is_error).length).toBe(8);
    expect(sessionUsage(recs, recs[0]!.session_id)).toBeUndefined();
  });
});

/**
 * Independent Codex computation: the session total is the last non-null total_token_usage (input
 * minus cached is fresh input); used only for files that are not forks.
 */
function codexIndependent(rel: string): Usage | undefined {
  let last: J | undefined;
  for (const o of jsonLines("codex", rel) as J[]) if (o?.type === "event_msg" && o.payload?.type === "token_count" && o.payload.info) last = o.payload.info.total_token_usage;
  if (!last) return undefined;
  return { input_tokens: last.input_tokens - last.cached_input_tokens, cached_input_tokens: last.cached_input_tokens, output_tokens: last.output_tokens, reasoning_tokens: last.reasoning_output_tokens };
}

describe("Codex usage", () => {
  const real: { rel: string; session: string; pinned: Usage; dup?: false }[] = [
    { rel: "madshn-localpush/raw/sessions/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl", session: "019c8a59-e9dd-71f0-9ae3-4079fe9726a9", pinned: { input_tokens: 2188981, cached_input_tokens: 31621504, output_tokens: 133999, reasoning_tokens: 42113 } },
    { rel: "madshn-localpush/raw/sessions/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl", session: "019c8a4c-ed82-79a1-aa28-7738fc5ab61a", pinned: { input_tokens: 367673, cached_input_tokens: 6836352, output_tokens: 36075, reasoning_tokens: 17896 } },
    { rel: "codemie-code/2026-05/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl", session: "019e1625-789d-76c0-80ab-3724b5ddb799", pinned: { input_tokens: 1126300, cached_input_tokens: 4929536, output_tokens: 9118, reasoning_tokens: 1759 }, dup: false },
    { rel: "codemie-code/2026-01/sessions/2026/01/02/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl", session: "019b7f94-51b4-7593-922e-ba12b5b73b52", pinned: { input_tokens: 7626, cached_input_tokens: 14848, output_tokens: 300, reasoning_tokens: 128 } },
  ];
  for (const c of real)
    it(`real: ${c.rel.split("/").pop()}`, async () => {
      const recs = await records("codex", c.rel);
      expect(sessionUsage(recs, c.session)).toEqual(c.pinned);
      expect(codexIndependent(c.rel)).toEqual(c.pinned);
      // Naive: summing every token_count's last_token_usage double counts the repeated events.
      let naive = 0;
      for (const o of jsonLines("codex", c.rel) as J[]) if (o?.payload?.type === "token_count" && o.payload.info?.last_token_usage) naive += o.payload.info.last_token_usage.output_tokens;
      // (codex-tui 0.125 in this file writes each token event once: there the sums agree.)
      if (c.dup === false) expect(naive).toBe(c.pinned.output_tokens);
      else expect(naive).toBeGreaterThan(c.pinned.output_tokens!);
      // The model comes from turn_context.
      expect(recs.filter((r) => r.usage).every((r) => r.model !== undefined)).toBe(true);
    });

  it("fork with the task started in the same second: nothing is replayed", async () => {
    // started_at 1780918744 = 2026-06-08T11:39:04Z, the fork's own start: every total is live;
    // the last total 3000 in (2400 cached) / 120 out (30 reasoning) → fresh input 600.
    for (const f of ["ccusage-synthetic/fork-local-same-second-legacy.jsonl", "ccusage-synthetic/fork-local-same-second-modern.jsonl"]) {
      const recs = await records("codex", f);
      expect(sessionUsage(recs, "fresh-thread")).toEqual({ input_tokens: 600, cached_input_tokens: 2400, output_tokens: 120, reasoning_tokens: 30 });
    }
  });

  it("fork replaying two parent turns: only the live turn counts", async () => {
    // Turns started at 1775001600 and 1775005200 (April 2026) are before the fork's start
    // (2026-06-08T11:39:04Z): replayed, their last total (236,700,000 in) is the baseline. The live
    // turn's total 236,705,000 in / 200,003,000 cached / 2,000,500 out / 200,050 reasoning counts
    // 5000 in − 3000 cached = 2000 fresh, 3000 cached, 500 out, 50 reasoning. The malformed line
    // in the modern file becomes an `unknown` record.
    for (const f of ["ccusage-synthetic/replay-multisecond-legacy.jsonl", "ccusage-synthetic/replay-multisecond-modern.jsonl"]) {
      const recs = await records("codex", f);
      expect(sessionUsage(recs, "multi-leaf")).toEqual({ input_tokens: 2000, cached_input_tokens: 3000, output_tokens: 500, reasoning_tokens: 50 });
      expect(recs.filter((r) => r.kind === "usage" && r.replayed).length).toBe(2);
    }
    const modern = await records("codex", "ccusage-synthetic/replay-multisecond-modern.jsonl");
    expect(modern.filter((r) => r.kind === "unknown").map((r) => r.raw)).toEqual(["malformed task_started marker"]);
  });

  it("copied branch history counts once across parent and branch", async () => {
    // The branch file (started 08:02:00, from its name) repeats the parent's lines at 08:00/08:01:
    // replayed. Parent: 1000 in (100 cached) / 200 out. Branch live: 1600−1000 = 600 in, 300−100 =
    // 200 cached → 400 fresh, 450−200 = 250 out. Together: the branch's final total, once.
    const parent = await records("codex", "ccusage-synthetic/branch-history/2026-05-12T08-00-00-parent.jsonl");
    const branch = await records("codex", "ccusage-synthetic/branch-history/2026-05-12T08-02-00-branch.jsonl");
    expect(sessionUsage(parent, "2026-05-12T08-00-00-parent")).toEqual({ input_tokens: 900, cached_input_tokens: 100, output_tokens: 200, reasoning_tokens: 20 });
    expect(sessionUsage(branch, "2026-05-12T08-02-00-branch")).toEqual({ input_tokens: 400, cached_input_tokens: 200, output_tokens: 250, reasoning_tokens: 20 });
  });

  it("token_count with null info yields no usage", async () => {
    const recs = await records("codex", "codemie-code/session-turns/turn-1.jsonl");
    const tc = recs.filter((r) => r.vendor_type === "event_msg/token_count");
    expect(tc.length).toBe(2);
    expect(tc.filter((r) => r.usage === undefined).length).toBe(1);
    // 1024 in incl. 512 cached → 512 fresh.
    expect(sessionUsage(recs, "a1b2c3d4-e5f6-7890-abcd-ef1234567890")).toEqual({ input_tokens: 512, cached_input_tokens: 512, output_tokens: 12, reasoning_tokens: 8 });
  });
});

describe("Gemini usage", () => {
  /** Independent: each message's tokens, input minus cached (plus tool) fresh, output plus thoughts. */
  function geminiIndependent(rel: string): Usage {
    const doc = jsonDoc("gemini", rel);
    const t = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, reasoning_tokens: 0 };
    for (const m of doc.messages as J[]) {
      const k = m.tokens;
      if (!k) continue;
      t.input_tokens += k.input - (k.cached ?? 0) + (k.tool ?? 0);
      t.cached_input_tokens += k.cached ?? 0;
      t.output_tokens += k.output + (k.thoughts ?? 0);
      t.reasoning_tokens += k.thoughts ?? 0;
    }
    return t;
  }
  for (const c of [
    { rel: "codemie-code/session-2025-12-01T21-45-5b959dae.json", session: "5b959dae-8655-4cd1-b10f-720b8c336ea2", pinned: { input_tokens: 45092, cached_input_tokens: 56538, output_tokens: 4227, reasoning_tokens: 1493 } },
    { rel: "codemie-code/session-2026-01-16T11-01-file-ops-37b7abef.json", session: "37b7abef-713d-4522-85f0-8ff15a4e6d17", pinned: { input_tokens: 25301, cached_input_tokens: 62117, output_tokens: 4355, reasoning_tokens: 2914 } },
  ])
    it(`legacy session JSON ${c.rel.split("/").pop()}`, async () => {
      const recs = await records("gemini", c.rel);
      expect(sessionUsage(dropRewound(recs), c.session)).toEqual(c.pinned);
      expect(geminiIndependent(c.rel)).toEqual(c.pinned);
      // Naive input (cached counted inside input, as Gemini reports it) differs.
      const naiveInput = (jsonDoc("gemini", c.rel).messages as J[]).reduce((s, m) => s + (m.tokens?.input ?? 0), 0);
      expect(naiveInput).toBeGreaterThan(c.pinned.input_tokens!);
    });
});

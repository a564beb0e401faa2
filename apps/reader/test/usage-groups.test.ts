// Breakdowns and groupings of the usage reports (--breakdown, --by runtime|model|project|repo|
// branch|agent|machine) and the 5-hour blocks' remaining time, burn rate, projection, gaps,
// --active and --token-limit. Over the Claude Code and samples fixtures (real adapters), one
// session also pushed from a second machine, and a session active right now.
import { afterAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { USAGE_KEYS, canonicalize, countUsage, type CanonicalRecord } from "@lake/events";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { claudeRecords, sampleRecords } from "./support/fixtures.js";
import { pushBronze } from "./support/fleet.js";
import { run, runJson } from "./support/run.js";

afterAll(cleanupTempDirs);

type Row = Record<string, unknown>;
const NUM = [...USAGE_KEYS, "total_tokens"] as const;

const fixtures = [...(await claudeRecords()), ...(await sampleRecords())];

/** Two responses of a session running now: 40 and 10 minutes ago. */
function activeSession(now: number): CanonicalRecord[] {
  const at = (minAgo: number, id: string, out: number) =>
    canonicalize({
      adapter: "test",
      adapter_version: "0",
      source_path: "live.jsonl",
      runtime: "claude-code",
      session_id: "live-session",
      stream: "main",
      record_id: id,
      kind: "assistant",
      ts: new Date(now - minAgo * 60_000).toISOString(),
      model: "claude-sonnet-4-5",
      usage_key: `live-${id}`,
      cwd: "/home/dev/live",
      branch: "feature/live",
      usage: { input_tokens: 1000, cached_input_tokens: 20_000, output_tokens: out },
    });
  return [at(40, "r1", 2000), at(10, "r2", 4000)];
}

/** Sum the numeric keys of rows (null when every row has null). */
function sum(rows: readonly Row[], k: string): number | null {
  const v = rows.map((r) => r[k] as number | null);
  return v.every((x) => x === null) ? null : v.reduce<number>((a, x) => a + (x ?? 0), 0);
}

describe("usage --by and --breakdown", () => {
  const root = tempDir("reader-usage-groups");
  const store = pathToFileURL(root).href;
  const env = { LAKE_READER_CACHE: join(tempDir("reader-cache"), "cache") };
  const now = Date.now();
  const live = activeSession(now);
  // The longest Claude Code session with usage, pushed from a second machine too (a synced ~/.claude).
  const bySession = new Map<string, CanonicalRecord[]>();
  for (const r of fixtures) if (r.runtime === "claude-code") (bySession.get(r.session_id) ?? bySession.set(r.session_id, []).get(r.session_id)!).push(r);
  const [copied, copiedRecs] = [...bySession].sort((a, b) => b[1].filter((r) => r.usage).length - a[1].filter((r) => r.usage).length)[0]!;
  const json = <T = Row>(...args: string[]) => runJson<T>(["usage", ...args, "--json", "--store", store, "--timezone", "UTC"], env);

  it("--by branch (and every other key) splits rows without changing the totals", async () => {
    await pushBronze(root, [...fixtures, ...live], { agent: "laptop" });
    await pushBronze(root, copiedRecs, { agent: "desktop" });
    const plain = await json<{ daily: Row[]; totals: Row }>("daily");
    const branch = await json<{ daily: Row[]; totals: Row; by: string }>("daily", "--by", "branch");
    expect(branch.by).toBe("branch");
    expect(branch.totals).toEqual(plain.totals);
    // Each day's branch rows add up to the day; real branches from Claude Code's gitBranch.
    for (const d of plain.daily) {
      const parts = branch.daily.filter((b) => b.date === d.date);
      expect(parts.length, String(d.date)).toBeGreaterThan(0);
      for (const k of NUM) expect(sum(parts, k), `${String(d.date)} ${k}`).toBe(d[k]);
    }
    const branches = new Set(branch.daily.map((b) => b.branch));
    for (const b of ["spotter-gqc", "master", "feature/live"]) expect(branches).toContain(b);
    expect(Object.keys(branch.daily[0]!).slice(0, 3)).toEqual(["date", "branch", "models"]);
    // The live session's responses are on its branch, nothing else is.
    const liveRows = branch.daily.filter((b) => b.branch === "feature/live");
    expect(sum(liveRows, "output_tokens")).toBe(6000);
    for (const key of ["runtime", "model", "project", "repo", "agent", "machine"]) {
      for (const report of key === "project" ? ["daily", "weekly", "monthly", "session", "blocks"] : ["daily", "session", "blocks"]) {
        const listKey = report === "session" ? "sessions" : report;
        const grouped = await json<Row>(report, "--by", key);
        const whole = await json<Row>(report);
        expect(grouped.totals, `${report} --by ${key}`).toEqual(whole.totals);
        const rows = grouped[listKey] as Row[];
        for (const k of NUM) expect(sum(rows, k), `${report} --by ${key} ${k}`).toBe(sum(whole[listKey] as Row[], k));
        expect(rows.every((r) => key in r)).toBe(true);
      }
    }
    const runtimes = await json<{ daily: Row[] }>("daily", "--by", "runtime");
    expect(new Set(runtimes.daily.map((r) => r.runtime))).toEqual(new Set(["claude-code", "codex", "gemini"]));
    // project: the repo, else the working directory; Gemini CLI's project hash where it records nothing else.
    const projects = await json<{ sessions: Row[] }>("session", "--by", "project");
    expect(projects.sessions.find((s) => s.session_id === "live-session")!.project).toBe("/home/dev/live");
    for (const s of projects.sessions.filter((x) => x.runtime === "gemini")) expect(String(s.project)).toMatch(/^gemini:[0-9a-f]{12}$/);
  });

  it("--by machine: each machine's share, the deduplicated total, and the responses seen on both", async () => {
    const m = await json<{ daily: Row[]; totals: Row; machines: { shared_responses: number; per_machine: { machine: string; responses_seen: number; shared_responses: number }[] } }>("daily", "--by", "machine");
    // The copy is counted once: the total is countUsage over the records pushed once.
    const once = countUsage([...fixtures, ...live]);
    expect(m.totals.output_tokens).toBe(once.reduce((a, c) => a + (c.usage.output_tokens ?? 0), 0));
    // Responses of the copied session: one per usage key (else record id).
    const ids = new Set(copiedRecs.filter((r) => r.usage && !r.replayed && USAGE_KEYS.some((k) => r.usage![k] !== undefined)).map((r) => r.usage_key ?? `${r.stream}/${r.record_id ?? r.content_hash}`));
    expect(ids.size).toBeGreaterThan(5);
    expect(m.machines.shared_responses).toBe(ids.size);
    const desktop = m.machines.per_machine.find((x) => x.machine === "desktop")!;
    expect(desktop).toEqual({ machine: "desktop", responses_seen: ids.size, shared_responses: ids.size });
    expect(m.machines.per_machine.find((x) => x.machine === "laptop")!.shared_responses).toBe(ids.size);
    // Read order puts desktop's copy (its key sorts first) ahead: the copied session counts there, the rest on the laptop.
    const share = (name: string) => sum(m.daily.filter((r) => r.machine === name), "total_tokens") ?? 0;
    expect(share("desktop") + share("laptop")).toBe(m.totals.total_tokens);
    const copiedTotal = countUsage(copiedRecs).reduce((a, c) => a + USAGE_KEYS.filter((k) => k !== "reasoning_tokens" && k !== "cache_write_1h_tokens").reduce((b, k) => b + (c.usage[k] ?? 0), 0), 0);
    expect(share("desktop")).toBe(copiedTotal);
    const t = await run(["usage", "daily", "--by", "machine", "--store", store, "--timezone", "UTC"], env);
    expect(t.out).toContain(`${ids.size} responses seen on more than one machine, counted once`);
    expect(copied).toBeTruthy();
  });

  it("--breakdown lists each row's models with their numbers, adding up to the row", async () => {
    for (const report of ["daily", "weekly", "monthly", "session", "blocks"]) {
      const listKey = report === "session" ? "sessions" : report;
      const got = await json<Row>(report, "--breakdown");
      const rows = got[listKey] as (Row & { breakdown: Row[] })[];
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) {
        expect(r.breakdown.map((b) => b.model).filter((x) => x !== null)).toEqual(r.models);
        for (const k of [...NUM, "unpriced_tokens"]) expect(sum(r.breakdown, k), `${report} ${k}`).toBe(r[k]);
        expect(Object.keys(r.breakdown[0]!)[0]).toBe("model");
      }
    }
    const t = await run(["usage", "daily", "--breakdown", "--store", store, "--timezone", "UTC"], env);
    expect(t.out).toMatch(/│ {3}└ claude-opus-4-6 /);
  });

  it("blocks: remaining time, burn rate and projection of the active block, gaps, --active, --token-limit", async () => {
    const b = await json<{ blocks: Row[]; gaps: Row[]; totals: Row; token_limit: number | null }>("blocks");
    const active = b.blocks.filter((x) => x.active);
    expect(active).toHaveLength(1);
    const a = active[0]!;
    const start = Math.floor((now - 40 * 60_000) / 3600_000) * 3600_000;
    expect(a.start).toBe(new Date(start).toISOString());
    expect(a.output_tokens).toBe(6000);
    expect(a.first_ts).toBe(live[0]!.ts);
    expect(a.last_ts).toBe(live[1]!.ts);
    const remaining = a.remaining_minutes as number;
    expect(Math.abs(remaining - (start + 5 * 3600_000 - now) / 60_000)).toBeLessThanOrEqual(2);
    // 2 × (1000 + 20 000) + 6000 tokens over the 30 minutes between the two responses.
    const rate = a.burn_rate as { tokens_per_minute: number; cost_per_hour: number };
    expect(rate.tokens_per_minute).toBeCloseTo(48_000 / 30, 2);
    expect(rate.cost_per_hour).toBeCloseTo(((a.cost_usd as number) / 30) * 60, 3);
    const p = a.projection as { total_tokens: number; cost_usd: number; remaining_minutes: number };
    expect(p.remaining_minutes).toBe(remaining);
    expect(p.total_tokens).toBe(Math.round(48_000 + rate.tokens_per_minute * remaining));
    expect(p.cost_usd).toBeCloseTo((a.cost_usd as number) + (rate.cost_per_hour / 60) * remaining, 3);
    for (const x of b.blocks.filter((y) => !y.active)) {
      expect(x.projection).toBeNull();
      expect(x.remaining_minutes).toBeNull();
    }
    // Gaps: from a block's last entry + 5 h to the next block's first entry, between every pair apart that long.
    const sorted = [...b.blocks];
    let expected = 0;
    for (let i = 1; i < sorted.length; i++) {
      const from = Date.parse(String(sorted[i - 1]!.last_ts)) + 5 * 3600_000;
      const to = Date.parse(String(sorted[i]!.first_ts));
      if (to <= from) continue;
      expect(b.gaps[expected]).toEqual({ start: new Date(from).toISOString(), end: new Date(to).toISOString(), minutes: Math.round((to - from) / 60_000) });
      expected++;
    }
    expect(b.gaps).toHaveLength(expected);
    expect(expected).toBeGreaterThan(2);
    const only = await json<{ blocks: Row[]; totals: Row }>("blocks", "--active");
    expect(only.blocks).toEqual(active);
    expect(only.totals.output_tokens).toBe(6000);
    const max = Math.max(...b.blocks.filter((x) => !x.active).map((x) => x.total_tokens as number));
    const lim = await json<{ blocks: Row[]; token_limit: number }>("blocks", "--token-limit", "max");
    expect(lim.token_limit).toBe(max);
    for (const x of lim.blocks) expect(x.limit_percent).toBeCloseTo(((x.total_tokens as number) / max) * 100, 1);
    const n = await json<{ blocks: Row[]; token_limit: number }>("blocks", "--token-limit", "100000", "--active");
    expect(n.blocks[0]!.limit_percent).toBe(48);
    expect(n.blocks[0]!.projected_limit_percent).toBeCloseTo((p.total_tokens / 100_000) * 100, 0);
    const t = await run(["usage", "blocks", "--store", store, "--timezone", "UTC"], env);
    expect(t.out).toMatch(/\(gap \d+h\d{2}m\)/);
    expect(t.out).toMatch(/active block: .*, \dh\d{2}m left\n {2}burn rate 1,600 tokens\/min, \$[\d.]+\/h\n {2}projected by the end: [\d,]+ tokens, \$[\d.]+/);
    const bad = await run(["usage", "blocks", "--token-limit", "lots", "--store", store], env);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--token-limit "lots": expected a positive number of tokens or max/);
    const wrong = await run(["usage", "daily", "--active", "--store", store], env);
    expect(wrong.code).toBe(2);
  });
});

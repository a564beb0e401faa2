import { afterAll, describe, expect, it } from "vitest";
import { EXIT } from "@lake/cli";
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { USAGE_KEYS, canonicalize, totalTokens, usageByDay, usageBySession, type CanonicalRecord, type RawRecord, type Usage } from "@lake/events";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { claudeRecords } from "./support/fixtures.js";
import { compactWithMaint, pushBronze } from "./support/fleet.js";
import { runJson, run } from "./support/run.js";

afterAll(cleanupTempDirs);

const records = await claudeRecords();

type Row = Record<string, unknown>;
const expectTokens = (row: Row, u: Usage) => {
  for (const k of USAGE_KEYS) expect(row[k], k).toBe(u[k] ?? null);
  expect(row.total_tokens).toBe(totalTokens(u));
};

describe("usage over a local fleet store built from the Claude Code fixtures", () => {
  const root = tempDir("reader-usage");
  const store = pathToFileURL(root).href;
  const env = { LAKE_READER_CACHE: join(tempDir("reader-cache"), "cache") };

  it("usage session --json equals usageBySession over the same records", async () => {
    await pushBronze(root, records, { segments: 2 });
    const got = await runJson<{ sessions: Row[]; totals: Row }>(["usage", "session", "--json", "--store", store], env);
    const want = usageBySession(records);
    expect(want.size).toBeGreaterThan(5);
    expect(got.sessions.map((s) => s.session_id).sort()).toEqual([...want.keys()].sort());
    for (const s of got.sessions) {
      const w = want.get(String(s.session_id))!;
      expectTokens(s, w.usage);
      expect(s.runtime).toBe("claude-code");
      expect(s.models).toEqual([...w.by_model.keys()].filter((m) => m !== null).sort());
      expect(Object.keys(s)).toEqual(["session_id", "runtime", "models", "last_ts", "input_tokens", "cached_input_tokens", "cache_write_tokens", "cache_write_1h_tokens", "output_tokens", "reasoning_tokens", "total_tokens", "cost_usd", "unpriced_tokens", "unpriced_models", "cost_source"]);
    }
  });

  it("usage daily --json equals usageByDay over the same records", async () => {
    const got = await runJson<{ daily: Row[]; totals: Row }>(["usage", "daily", "--json", "--store", store], env);
    const want = usageByDay(records);
    expect(got.daily.map((d) => d.date)).toEqual([...want.keys()].sort());
    for (const d of got.daily) expectTokens(d, want.get(String(d.date))!.usage);
    const all: Usage = {};
    for (const v of want.values()) for (const k of USAGE_KEYS) if (v.usage[k] !== undefined) all[k] = (all[k] ?? 0) + v.usage[k]!;
    expectTokens(got.totals, all);
    expect(Object.keys(got.daily[0]!)).toEqual(["date", "models", "input_tokens", "cached_input_tokens", "cache_write_tokens", "cache_write_1h_tokens", "output_tokens", "reasoning_tokens", "total_tokens", "cost_usd", "unpriced_tokens", "unpriced_models", "cost_source"]);
  });

  it("prices known models and reports unknown ones as unpriced, never zero", async () => {
    const got = await runJson<{ sessions: Row[]; pricing: { unpriced_models: string[]; dataset: { name: string; version: string } } }>(["usage", "session", "--json", "--store", store], env);
    // "<synthetic>" (Claude Code's placeholder for a response no model made) is not a model.
    const unpricedSessions = got.sessions.filter((s) => (s.unpriced_tokens as number) > 0);
    for (const s of unpricedSessions) {
      expect(s.unpriced_models as string[]).not.toEqual([]);
      for (const m of s.unpriced_models as string[]) expect(got.pricing.unpriced_models).toContain(m);
    }
    const priced = got.sessions.filter((s) => s.cost_usd !== null);
    expect(priced.length).toBeGreaterThan(0);
    for (const s of priced) expect(s.cost_usd as number).toBeGreaterThanOrEqual(0);
    expect(got.pricing.dataset.name).toBe("@pydantic/genai-prices");
    expect(got.pricing.dataset.version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("follows _COMPACTED: a compacted partition replaces its sessions' bronze, never both", async () => {
    const before = await runJson<{ totals: Row }>(["usage", "daily", "--json", "--store", store], env);
    // Re-compact one partition from the same records: its sessions' bronze stays (immutable) but
    // must no longer be read; a re-pushed duplicate segment must not count twice either.
    const bySession = new Map<string, typeof records>();
    for (const r of records) (bySession.get(r.session_id) ?? bySession.set(r.session_id, []).get(r.session_id)!).push(r);
    const [sid, recs] = [...bySession].sort((a, b) => b[1].length - a[1].length)[0]!;
    const dt = recs.map((r) => r.ts!).filter(Boolean).sort()[0]!.slice(0, 10);
    compactWithMaint(root, { dt });
    const after = await runJson<{ totals: Row }>(["usage", "daily", "--json", "--store", store], env);
    expect(after.totals).toEqual(before.totals);
    const n = await runJson<Row[]>(["sql", `SELECT count(*) AS n FROM fleet_rows WHERE session_id = '${sid}'`, "--json", "--store", store], env);
    expect(n[0]!.n).toBe(recs.length);
  });

  it("filters by day, runtime and model", async () => {
    const want = usageByDay(records);
    const days = [...want.keys()].filter((d) => d !== "unknown").sort();
    const day = days[Math.floor(days.length / 2)]!;
    const got = await runJson<{ daily: Row[] }>(["usage", "daily", "--json", "--since", day, "--until", day.replace(/-/g, ""), "--store", store], env);
    expect(got.daily.map((d) => d.date)).toEqual([day]);
    const none = await runJson<{ daily: Row[]; totals: Row }>(["usage", "daily", "--json", "--runtime", "codex", "--store", store], env);
    expect(none.daily).toEqual([]);
    expect(none.totals.total_tokens).toBeNull();
    const haiku = await runJson<{ sessions: Row[] }>(["usage", "session", "--json", "--model", "haiku", "--store", store], env);
    for (const s of haiku.sessions) expect((s.models as string[]).every((m) => m.includes("haiku"))).toBe(true);
  });

  it("monthly and blocks reports add up to the same total", async () => {
    const daily = await runJson<{ totals: Row }>(["usage", "daily", "--json", "--store", store], env);
    const monthly = await runJson<{ monthly: Row[]; totals: Row }>(["usage", "monthly", "--json", "--store", store], env);
    expect(monthly.totals).toEqual(daily.totals);
    expect(monthly.monthly.every((m) => /^\d{4}-\d{2}$|^unknown$/.test(String(m.month)))).toBe(true);
    // Weekly: a week is keyed by its Monday and is the sum of its days.
    const days = await runJson<{ daily: Row[] }>(["usage", "daily", "--json", "--store", store], env);
    const weekly = await runJson<{ weekly: Row[]; totals: Row }>(["usage", "weekly", "--json", "--store", store], env);
    expect(weekly.totals).toEqual(daily.totals);
    expect(weekly.weekly.length).toBeGreaterThan(1);
    for (const w of weekly.weekly) {
      const monday = String(w.week);
      if (monday === "unknown") continue;
      expect(new Date(`${monday}T00:00:00Z`).getUTCDay()).toBe(1);
      const end = new Date(Date.parse(`${monday}T00:00:00Z`) + 7 * 86_400_000).toISOString().slice(0, 10);
      const inWeek = days.daily.filter((d) => String(d.date) >= monday && String(d.date) < end);
      expect(inWeek.length).toBeGreaterThan(0);
      expect(w.output_tokens).toBe(inWeek.reduce((a, d) => a + Number(d.output_tokens ?? 0), 0));
      expect(w.total_tokens).toBe(inWeek.reduce((a, d) => a + Number(d.total_tokens ?? 0), 0));
    }
    const blocks = await runJson<{ blocks: Row[]; totals: Row; untimed_tokens: number | null }>(["usage", "blocks", "--json", "--store", store], env);
    expect((blocks.totals.total_tokens as number) + (blocks.untimed_tokens ?? 0)).toBe(daily.totals.total_tokens);
    for (const b of blocks.blocks) {
      expect(Date.parse(String(b.end)) - Date.parse(String(b.start))).toBe(5 * 3600_000);
      expect(Date.parse(String(b.last_ts))).toBeLessThan(Date.parse(String(b.end)));
    }
  });

  it("prints ccusage-like tables and documents bad arguments with exit 2", async () => {
    const t = await run(["usage", "daily", "--store", store], env);
    expect(t.code).toBe(0);
    expect(t.out).toMatch(/┌─/);
    expect(t.out).toMatch(/prices: @pydantic\/genai-prices \d+\.\d+\.\d+ \(\d{4}-\d{2}-\d{2}\); cost mode calculate/);
    const bad = await run(["usage", "yearly", "--store", store], env);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^lake-reader usage: .*yearly.*\n$/);
    const date = await run(["usage", "daily", "--since", "2026-13-01", "--store", store], env);
    expect(date.code).toBe(2);
    const missing = await run(["usage", "daily", "--store", pathToFileURL(join(root, "nope")).href], env);
    expect(missing.code).toBe(EXIT.notFound);
    expect(missing.err).toMatch(/nope.*does not exist/);
  });
});

/**
 * Records exercising every countUsage rule the usage scan must hand over faithfully: cumulative
 * totals (one repeated), copies without a record_id (keyed on content_hash), streamed `delta`
 * copies with a sidechain tie, a `latest` copy that voids earlier ones, a replayed row, a usage_key
 * shared by two sessions (counted for the one read first), and ids holding the scan's separator.
 */
function ruleRecords(): CanonicalRecord[] {
  const b = { adapter: "test", adapter_version: "0", source_path: "rules.jsonl" } as const;
  const cx = { ...b, runtime: "codex", session_id: "rules-cx", stream: "main" } as const;
  const cc = { ...b, runtime: "claude-code", session_id: "rules-cc-1", stream: "main" } as const;
  const cc2 = { ...b, runtime: "claude-code", session_id: "rules-cc-2", stream: "main" } as const;
  const raw: RawRecord[] = [
    { ...cx, kind: "usage", ts: "2026-04-01T10:00:00.000Z", model: "gpt-5-codex", usage_mode: "cumulative", usage: { input_tokens: 100, cached_input_tokens: 50, output_tokens: 10, reasoning_tokens: 4 } },
    { ...cx, kind: "usage", ts: "2026-04-01T10:05:00.000Z", model: "gpt-5-codex", usage_mode: "cumulative", usage: { input_tokens: 100, cached_input_tokens: 50, output_tokens: 10, reasoning_tokens: 4 } },
    { ...cx, kind: "usage", ts: "2026-04-01T23:59:59.999Z", model: "gpt-5-codex", usage_mode: "cumulative", usage: { input_tokens: 300, cached_input_tokens: 90, output_tokens: 40, reasoning_tokens: 9 } },
    { ...cx, kind: "usage", ts: "2026-04-02T00:00:01.000Z", model: "gpt-5-codex", usage_mode: "cumulative", usage: { input_tokens: 310, cached_input_tokens: 95, output_tokens: 41, reasoning_tokens: 9 } },
    { ...cx, kind: "assistant", text: "no record id", ts: "2026-04-02T00:00:02.000Z", model: "gpt-5-codex", usage: { input_tokens: 5, output_tokens: 1 } },
    { ...cx, kind: "assistant", text: "no record id", ts: "2026-04-02T00:00:02.000Z", model: "gpt-5-codex", usage: { input_tokens: 5, output_tokens: 1 } },
    { ...cc, record_id: "a1", kind: "assistant", ts: "2026-04-01T09:00:00.000Z", model: "claude-opus-4-6", usage_mode: "delta", usage_key: "m1:r1", usage: { input_tokens: 3, cache_write_tokens: 20, output_tokens: 2 } },
    { ...cc, stream: "agent-s", is_sidechain: true, record_id: "s1", kind: "assistant", ts: "2026-04-01T09:00:02.000Z", model: "claude-opus-4-6", usage_mode: "delta", usage_key: "m1:r1", usage: { input_tokens: 4, output_tokens: 9 } },
    { ...cc, record_id: "a2", kind: "assistant", ts: "2026-04-01T09:00:01.000Z", model: "claude-opus-4-6", usage_mode: "delta", usage_key: "m1:r1", usage: { input_tokens: 3, cache_write_tokens: 20, output_tokens: 9 } },
    { ...cc, record_id: "a1", kind: "assistant", ts: "2026-04-01T09:00:03.000Z", model: "claude-opus-4-6", usage_mode: "delta", usage_key: "m9:r9", usage: { input_tokens: 999 } },
    { ...cc, record_id: "l1", kind: "assistant", ts: "2026-04-01T09:01:00.000Z", model: "claude-haiku-4-5", usage_mode: "latest", usage_key: "lat-1", usage: { input_tokens: 70, output_tokens: 7 } },
    { ...cc, record_id: "l2", kind: "assistant", ts: "2026-04-01T09:02:00.000Z", model: "claude-haiku-4-5", usage_mode: "latest", usage_key: "lat-1" },
    { ...cc, record_id: "l3", kind: "assistant", ts: "2026-04-01T09:03:00.000Z", model: "claude-haiku-4-5", usage_mode: "latest", usage_key: "lat-2", usage: { input_tokens: 1, output_tokens: 1 } },
    { ...cc, record_id: "l4", kind: "assistant", ts: "2026-04-01T09:04:00.000Z", model: "claude-haiku-4-5", usage_mode: "latest", usage_key: "lat-2", usage: { input_tokens: 11, output_tokens: 6 } },
    { ...cc, record_id: "rp", kind: "assistant", ts: "2026-04-01T09:05:00.000Z", model: "claude-opus-4-6", replayed: true, usage_key: "m2:r2", usage: { input_tokens: 500 } },
    { ...cc, record_id: "sep\u001eid", kind: "assistant", ts: "2026-04-01T09:06:00.000Z", model: "claude-opus-4-6", usage_key: "k\u001ekey", usage: { output_tokens: 13 } },
    { ...cc, record_id: "nots", kind: "assistant", model: "claude-opus-4-6", usage_key: "m3:r3", usage: { input_tokens: 2 } },
    { ...cc2, record_id: "b1", kind: "assistant", ts: "2026-04-03T09:00:00.000Z", model: "claude-opus-4-6", usage_mode: "delta", usage_key: "m2:r2", usage: { input_tokens: 8, output_tokens: 8 } },
    { ...cc2, record_id: "b2", kind: "assistant", ts: "2026-04-03T09:00:01.000Z", model: "claude-opus-4-6", usage_mode: "delta", usage_key: "m1:r1", usage: { input_tokens: 3, cache_write_tokens: 20, output_tokens: 9 } },
  ];
  return raw.map((r) => canonicalize(r));
}

describe("usage counts every countUsage rule as countUsage does", () => {
  const root = tempDir("reader-usage-rules");
  const env = { LAKE_READER_CACHE: join(tempDir("reader-cache"), "cache") };

  for (const withSep of [true, false]) {
    it(withSep ? "with ids holding the scan's separator (one-by-one hand-over)" : "without them (one-text hand-over), bronze and compacted", async () => {
      const all = ruleRecords().filter((r) => withSep || !`${r.record_id}${r.usage_key}`.includes("\u001e"));
      const dir = join(root, withSep ? "sep" : "plain");
      // Read order is by path: codex's session directory sorts after claude-code's, rules-cc-1 before rules-cc-2.
      const records = [...all.filter((r) => r.runtime === "claude-code"), ...all.filter((r) => r.runtime === "codex")];
      const pushed = await pushBronze(dir, records, { segments: 2 });
      if (!withSep) {
        // The codex session read from a compacted generation instead (its duplicate copies in one part).
        const cx = records.filter((r) => r.runtime === "codex");
        const dt = pushed.find((p) => p.runtime === "codex")!.dt;
        expect(cx.length).toBeGreaterThan(0);
        compactWithMaint(dir, { dt });
      }
      const s = pathToFileURL(dir).href;
      const got = await runJson<{ sessions: Row[]; totals: Row }>(["usage", "session", "--json", "--store", s], env);
      const want = usageBySession(records);
      expect(got.sessions.map((x) => x.session_id).sort()).toEqual([...want.keys()].sort());
      for (const x of got.sessions) {
        expectTokens(x, want.get(String(x.session_id))!.usage);
        expect(x.runtime).toBe(want.get(String(x.session_id))!.runtime);
      }
      const daily = await runJson<{ daily: Row[] }>(["usage", "daily", "--json", "--store", s], env);
      const days = usageByDay(records);
      expect(daily.daily.map((d) => d.date)).toEqual([...days.keys()].sort());
      for (const d of daily.daily) expectTokens(d, days.get(String(d.date))!.usage);
      const codex = await runJson<{ sessions: Row[] }>(["usage", "session", "--json", "--runtime", "codex", "--store", s], env);
      expect(codex.sessions.map((x) => x.session_id)).toEqual(["rules-cx"]);
      expectTokens(codex.sessions[0]!, want.get("rules-cx")!.usage);
    });
  }
  it("an empty store counts nothing, with null keys", async () => {
    const dir = join(root, "empty");
    await pushBronze(dir, ruleRecords().filter((r) => r.usage === undefined));
    const got = await runJson<{ daily: Row[]; totals: Row }>(["usage", "daily", "--json", "--store", pathToFileURL(dir).href], env);
    expect(got.daily).toEqual([]);
    expect(got.totals.total_tokens).toBeNull();
  });
});

// `usage explain SESSION|--date D`: the counts add up (rows carrying usage = counted + each dropped
// kind), the counted tokens are the report's total, and the rules at work on the real fixtures
// are named: streamed copies, re-landed duplicates, subagent progress copies.
import { afterAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { isEmptyUsage, type CanonicalRecord } from "@lake/events";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { claudeRecords, sampleRecords } from "./support/fixtures.js";
import { pushBronze } from "./support/fleet.js";
import { run, runJson } from "./support/run.js";

afterAll(cleanupTempDirs);

type Row = Record<string, unknown>;
interface Explanation {
  session_id?: string;
  date?: string;
  rows_with_usage: number;
  responses_counted: number;
  dropped: Record<string, { rows: number; tokens: number }>;
  progress_copies_not_counted: number;
  totals: Row;
  priced_tokens: number;
}

const records = [...(await claudeRecords()), ...(await sampleRecords())];
const carries = (r: CanonicalRecord) => !isEmptyUsage(r.usage) || (r.usage_mode === "latest" && r.usage_key !== undefined);

describe("usage explain", () => {
  const root = tempDir("reader-usage-explain");
  const store = pathToFileURL(root).href;
  const env = { LAKE_READER_CACHE: join(tempDir("reader-cache"), "cache") };
  // One session's records landed twice (a re-pushed segment): duplicates that must add nothing.
  const twice = records.find((r) => r.runtime === "claude-code" && r.usage)!.session_id;

  it("a session's counts add up to its rows, and its tokens and cost are usage session's", async () => {
    await pushBronze(root, records, { segments: 2 });
    await pushBronze(root, records.filter((r) => r.session_id === twice), { part: 2 });
    const sessions = await runJson<{ sessions: Row[] }>(["usage", "session", "--json", "--timezone", "UTC", "--store", store], env);
    expect(sessions.sessions.length).toBeGreaterThan(5);
    const sum = { copies: 0, duplicates: 0, progress: 0 };
    for (const s of sessions.sessions) {
      const id = String(s.session_id);
      const e = await runJson<Explanation>(["usage", "explain", id, "--json", "--store", store], env);
      expect(e.session_id).toBe(id);
      const dropped = Object.values(e.dropped).reduce((a, d) => a + d.rows, 0);
      expect(e.rows_with_usage, id).toBe(e.responses_counted + dropped);
      // Every row of the session that carries usage, each landed copy: independently of countUsage.
      const mine = records.filter((r) => r.session_id === id && carries(r)).length;
      expect(e.rows_with_usage, id).toBe(mine * (id === twice ? 2 : 1));
      for (const k of ["input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "total_tokens", "cost_usd", "unpriced_tokens"]) expect(e.totals[k], `${id} ${k}`).toEqual(s[k]);
      expect(e.priced_tokens + (e.totals.unpriced_tokens as number)).toBe(e.totals.total_tokens ?? 0);
      // The second landing of `twice` adds only duplicates (the fixtures have copies of their own too).
      if (id === twice) expect(e.dropped.duplicate_lines!.rows).toBeGreaterThanOrEqual(records.filter((r) => r.session_id === twice && carries(r) && !r.replayed).length);
      sum.copies += e.dropped.response_copies!.rows;
      sum.duplicates += e.dropped.duplicate_lines!.rows;
      sum.progress += e.progress_copies_not_counted;
    }
    // The re-landed session's second copy is all duplicates; streamed responses are copies; the
    // fixture with subagents has progress rows holding their usage.
    expect(sum.duplicates).toBeGreaterThan(0);
    expect(sum.copies).toBeGreaterThan(10);
    expect(sum.progress).toBeGreaterThan(0);
    const text = await run(["usage", "explain", twice, "--store", store], env);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(new RegExp(`^session ${twice}: [\\d,]+ tokens`));
    expect(text.out).toMatch(/rows carrying usage\n +[\d,]+ {2}counted \(one per response\)\n/);
    expect(text.out).toMatch(/dropped: duplicate lines \([\d,]+ tokens not added\)/);
  });

  it("--date D explains a day in the zone: its tokens are usage daily's for that day", async () => {
    for (const zone of ["UTC", "America/Los_Angeles"]) {
      const daily = await runJson<{ daily: Row[] }>(["usage", "daily", "--json", "--timezone", zone, "--store", store], env);
      const days = daily.daily.filter((x) => x.date !== "unknown");
      // The busiest days and the first and last (each explain reads the whole fleet).
      const pick = [...new Set([days[0]!, days[days.length - 1]!, ...[...days].sort((a, b) => Number(b.total_tokens) - Number(a.total_tokens)).slice(0, 3)])];
      for (const d of pick) {
        const e = await runJson<Explanation>(["usage", "explain", "--date", String(d.date), "--timezone", zone, "--json", "--store", store], env);
        expect(e.date).toBe(d.date);
        expect(e.rows_with_usage).toBe(e.responses_counted + Object.values(e.dropped).reduce((a, x) => a + x.rows, 0));
        for (const k of ["input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "total_tokens", "cost_usd", "unpriced_tokens"]) expect(e.totals[k], `${zone} ${String(d.date)} ${k}`).toEqual(d[k]);
      }
    }
    // ccusage counts the progress copies on 2026-02-10 (its parity test's "progress-usage" day); lake says it does not.
    const feb = await runJson<Explanation>(["usage", "explain", "--date", "2026-02-10", "--timezone", "UTC", "--json", "--store", store], env);
    expect(feb.progress_copies_not_counted).toBeGreaterThan(0);
  });

  it("refuses a missing, unknown or ambiguous session (exit 2)", async () => {
    for (const args of [["explain"], ["explain", "no-such-session"], ["explain", "s", "--date", "2026-01-01"], ["explain", ""]]) {
      const r = await run(["usage", ...args, "--store", store], env);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err.trimEnd().split("\n")).toHaveLength(1);
    }
  });
});

// Time in the usage reports: --timezone (days in an IANA zone, the JSON names it), weekly weeks and
// --start-of-week, --since/--until as dates, today, Nd and Nw, --order; and every enumerated flag
// refusing unknown values with the list of valid ones. Over the Claude Code and samples fixtures
// (through the real adapters) and a fleet compacted by the real lake-maint.
import { afterAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { RUNTIMES, USAGE_KEYS, canonicalize, countUsage, totalTokens, type CanonicalRecord, type Usage } from "@lake/events";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { claudeRecords, sampleRecords } from "./support/fixtures.js";
import { compactWithMaint, pushBronze } from "./support/fleet.js";
import { run, runJson } from "./support/run.js";

afterAll(cleanupTempDirs);

type Row = Record<string, unknown>;
type Daily = { daily: Row[]; totals: Row; timezone: string };

/** A response at 03:00 UTC on 2026-04-02 (the evening of 2026-04-01 in Los Angeles). */
function lateNight(): CanonicalRecord[] {
  return [
    canonicalize({
      adapter: "test",
      adapter_version: "0",
      source_path: "tz.jsonl",
      runtime: "claude-code",
      session_id: "tz-session",
      stream: "main",
      record_id: "tz-1",
      kind: "assistant",
      ts: "2026-04-02T03:00:00.000Z",
      model: "claude-opus-4-6",
      usage_key: "tz-msg:tz-req",
      usage: { input_tokens: 12, cached_input_tokens: 3400, output_tokens: 56 },
    }),
  ];
}

const fixtures = [...(await claudeRecords()), ...(await sampleRecords())];
const records = [...fixtures, ...lateNight()];

/** countUsage's contributions summed per day in `zone`, independently of the reader (toLocaleDateString). */
function byZoneDay(recs: readonly CanonicalRecord[], zone: string): Map<string, Usage> {
  const out = new Map<string, Usage>();
  for (const c of countUsage(recs)) {
    const day = c.ts ? new Date(c.ts).toLocaleDateString("en-CA", { timeZone: zone }) : "unknown";
    const u = out.get(day) ?? out.set(day, {}).get(day)!;
    for (const k of USAGE_KEYS) if (c.usage[k] !== undefined) u[k] = (u[k] ?? 0) + c.usage[k]!;
  }
  return out;
}

const expectTokens = (row: Row, u: Usage, what: string) => {
  for (const k of USAGE_KEYS) expect(row[k], `${what} ${k}`).toBe(u[k] ?? null);
  expect(row.total_tokens, `${what} total`).toBe(totalTokens(u));
};

describe("usage reports in a time zone", () => {
  const root = tempDir("reader-usage-tz");
  const store = pathToFileURL(root).href;
  const env = { LAKE_READER_CACHE: join(tempDir("reader-cache"), "cache") };
  const daily = (...args: string[]) => runJson<Daily>(["usage", "daily", "--json", "--store", store, ...args], env);

  it("--timezone America/Los_Angeles moves a response at 03:00 UTC to the previous day", async () => {
    await pushBronze(root, records, { segments: 2 });
    const utc = await daily("--timezone", "UTC");
    const la = await daily("--timezone", "America/Los_Angeles");
    expect(utc.timezone).toBe("UTC");
    expect(la.timezone).toBe("America/Los_Angeles");
    const utcDay = utc.daily.find((d) => d.date === "2026-04-02")!;
    expect(utcDay.output_tokens).toBe(56);
    expect(la.daily.find((d) => d.date === "2026-04-02")).toBeUndefined();
    const laDay = la.daily.find((d) => d.date === "2026-04-01")!;
    expect(laDay.output_tokens).toBe(56);
    expect(laDay.models).toEqual(["claude-opus-4-6"]);
    // Every day equals countUsage summed per Los Angeles day; the totals do not move.
    for (const zone of ["America/Los_Angeles", "Asia/Tokyo", "Asia/Kolkata"]) {
      const got = zone === "America/Los_Angeles" ? la : await daily("--timezone", zone);
      const want = byZoneDay(records, zone);
      expect(got.daily.map((d) => d.date), zone).toEqual([...want.keys()].sort());
      for (const d of got.daily) expectTokens(d, want.get(String(d.date))!, `${zone} ${String(d.date)}`);
      expect(got.totals).toEqual(utc.totals);
    }
    // Tokyo moves real fixture days too (responses after 15:00 UTC fall on the next day there).
    expect([...byZoneDay(fixtures, "Asia/Tokyo").keys()].sort()).not.toEqual([...byZoneDay(fixtures, "UTC").keys()].sort());
  });

  it("the default zone is the system's ($TZ), and the JSON names it", async () => {
    const tokyo = await runJson<Daily>(["usage", "daily", "--json", "--store", store], { ...env, TZ: "Asia/Tokyo" });
    expect(tokyo.timezone).toBe("Asia/Tokyo");
    expect(tokyo.daily).toEqual((await daily("--timezone", "Asia/Tokyo")).daily);
    const s = await runJson<{ timezone: string }>(["usage", "session", "--json", "--store", store], { ...env, TZ: "Europe/Berlin" });
    expect(s.timezone).toBe("Europe/Berlin");
    const t = await run(["usage", "daily", "--timezone", "America/Los_Angeles", "--store", store], env);
    expect(t.out).toMatch(/^Token usage by day \(America\/Los_Angeles\)/);
  });

  it("weekly: each week is the sum of its days, in the zone, from --start-of-week", async () => {
    for (const [zone, sow, dow] of [["America/Los_Angeles", "monday", 1], ["Asia/Tokyo", "sunday", 0], ["UTC", "Wednesday", 3]] as const) {
      const days = await daily("--timezone", zone);
      const weekly = await runJson<{ weekly: Row[]; totals: Row; start_of_week: string }>(["usage", "weekly", "--json", "--store", store, "--timezone", zone, "--start-of-week", sow], env);
      expect(weekly.start_of_week).toBe(sow.toLowerCase());
      expect(weekly.totals).toEqual(days.totals);
      expect(weekly.weekly.length).toBeGreaterThan(1);
      let covered = 0;
      for (const w of weekly.weekly) {
        const first = String(w.week);
        expect(new Date(`${first}T00:00:00Z`).getUTCDay(), first).toBe(dow);
        const end = new Date(Date.parse(`${first}T00:00:00Z`) + 7 * 86_400_000).toISOString().slice(0, 10);
        const inWeek = days.daily.filter((d) => String(d.date) >= first && String(d.date) < end);
        expect(inWeek.length).toBeGreaterThan(0);
        covered += inWeek.length;
        for (const k of [...USAGE_KEYS, "total_tokens"]) {
          const vals = inWeek.map((d) => d[k] as number | null);
          expect(w[k], `${zone} ${first} ${k}`).toBe(vals.every((v) => v === null) ? null : vals.reduce<number>((a, v) => a + (v ?? 0), 0));
        }
        expect(w.models).toEqual([...new Set(inWeek.flatMap((d) => d.models as string[]))].sort());
      }
      expect(covered).toBe(days.daily.length);
    }
  });

  it("hourly: hours in the zone (03:00 UTC is 20:00 the evening before in Los Angeles); each day is the sum of its hours", async () => {
    for (const zone of ["America/Los_Angeles", "Asia/Kolkata"]) {
      const days = await daily("--timezone", zone);
      const hourly = await runJson<{ hourly: Row[]; totals: Row; timezone: string }>(["usage", "hourly", "--json", "--store", store, "--timezone", zone], env);
      expect(hourly.timezone).toBe(days.timezone);
      expect(hourly.totals).toEqual(days.totals);
      // Rows without a time: "unknown", in both.
      for (const h of hourly.hourly) expect(String(h.hour), zone).toMatch(/^(\d{4}-\d\d-\d\d \d\d:00|unknown)$/);
      for (const d of days.daily) {
        const inDay = hourly.hourly.filter((h) => (d.date === "unknown" ? h.hour === "unknown" : String(h.hour).startsWith(`${String(d.date)} `)));
        expect(inDay.length, `${zone} ${String(d.date)}`).toBeGreaterThan(0);
        for (const k of [...USAGE_KEYS, "total_tokens"]) {
          const vals = inDay.map((h) => h[k] as number | null);
          expect(d[k], `${zone} ${String(d.date)} ${k}`).toBe(vals.every((v) => v === null) ? null : vals.reduce<number>((a, v) => a + (v ?? 0), 0));
        }
      }
      expect(hourly.hourly.length).toBeGreaterThan(days.daily.length);
    }
    const la = await runJson<{ hourly: Row[] }>(["usage", "hourly", "--json", "--store", store, "--timezone", "America/Los_Angeles", "--since", "2026-04-01", "--until", "2026-04-01"], env);
    expect(la.hourly.map((h) => [h.hour, h.output_tokens])).toEqual([["2026-04-01 20:00", 56]]);
  });

  it("a compacted fleet (rollups summed per UTC day) counts days in a zone from its rows, with the same answer", async () => {
    const before = await daily("--timezone", "America/Los_Angeles");
    const dt = "2026-04-02";
    compactWithMaint(root, { dt });
    const after = await daily("--timezone", "America/Los_Angeles");
    expect(after).toEqual(before);
    const utcAfter = await daily("--timezone", "UTC");
    expect(utcAfter.daily.find((d) => d.date === dt)!.output_tokens).toBe(56);
  });

  it("--since/--until take dates, today, yesterday, Nd and Nw in the zone; --order desc reverses the rows", async () => {
    const zone = "Pacific/Auckland";
    const today = new Date().toLocaleDateString("en-CA", { timeZone: zone });
    const back = (n: number) => new Date(Date.parse(`${today}T00:00:00Z`) - n * 86_400_000).toISOString().slice(0, 10);
    const all = await daily("--timezone", zone);
    const days = all.daily.map((d) => String(d.date));
    for (const [arg, day] of [["today", today], ["yesterday", back(1)], ["7d", back(7)], ["4w", back(28)], ["400d", back(400)], ["60w", back(420)]] as const) {
      const got = await daily("--timezone", zone, "--since", arg);
      expect(got.daily.map((d) => d.date), arg).toEqual(days.filter((d) => d !== "unknown" && d >= day));
      const until = await daily("--timezone", zone, "--until", arg);
      expect(until.daily.map((d) => d.date), arg).toEqual(days.filter((d) => d !== "unknown" && d <= day));
    }
    const mid = days[Math.floor(days.length / 2)]!;
    const window = await daily("--timezone", zone, "--since", mid, "--until", mid.replace(/-/g, ""));
    expect(window.daily.map((d) => d.date)).toEqual([mid]);
    const desc = await daily("--timezone", zone, "--order", "desc");
    expect(desc.daily.map((d) => d.date)).toEqual([...days].reverse());
    const sAsc = await runJson<{ sessions: Row[] }>(["usage", "session", "--json", "--store", store], env);
    const sDesc = await runJson<{ sessions: Row[] }>(["usage", "session", "--json", "--order", "desc", "--store", store], env);
    expect(sDesc.sessions.map((s) => s.session_id)).toEqual(sAsc.sessions.map((s) => s.session_id).reverse());
    const bDesc = await runJson<{ blocks: Row[] }>(["usage", "blocks", "--json", "--order", "desc", "--store", store], env);
    const starts = bDesc.blocks.map((b) => String(b.start));
    expect(starts).toEqual([...starts].sort().reverse());
  });

  it("every enumerated flag refuses an unknown value with exit 2, listing the valid ones", async () => {
    const cases: [string[], RegExp][] = [
      [["daily", "--runtime", "claude"], new RegExp(`--runtime "claude": expected one of ${RUNTIMES.join(", ")}$`)],
      [["daily", "--by", "colour"], /--by "colour": expected one of runtime, model, project, repo, branch, agent, machine$/],
      [["daily", "--order", "up"], /--order "up": expected one of asc, desc$/],
      [["weekly", "--start-of-week", "moonday"], /--start-of-week "moonday": expected one of sunday, monday, tuesday, wednesday, thursday, friday, saturday$/],
      [["session", "--cost-mode", "guess"], /--cost-mode "guess": expected one of calculate, recorded, auto$/],
      [["daily", "--timezone", "Mars/Olympus"], /--timezone "Mars\/Olympus": not an IANA time zone/],
      [["daily", "--since", "last week"], /--since "last week": expected a date .*today, yesterday, Nd or Nw/],
    ];
    for (const [args, msg] of cases) {
      const r = await run(["usage", ...args, "--store", store], env);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.out).toBe("");
      const line = r.err.trimEnd();
      expect(line.split("\n")).toHaveLength(1);
      expect(line, args.join(" ")).toMatch(/^lake-reader usage: /);
      expect(line, args.join(" ")).toMatch(msg);
    }
    // A valid runtime with no usage is an empty report, not an error.
    const none = await daily("--runtime", "broca");
    expect(none.daily).toEqual([]);
  });
});

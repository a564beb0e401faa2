import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { addUsageInto, countUsage, isEmptyUsage, isoTime, recordDay, sumUsage, totalTokens, usageByDay, usageBySession, usageDelta, usageEquals, type Usage, type UsageRecord } from "../src/index.js";

describe("usage arithmetic (absent is not zero)", () => {
  it("keeps a key absent when no operand reported it", () => {
    expect(sumUsage([{ input_tokens: 3 }, { output_tokens: 5 }, {}])).toEqual({ input_tokens: 3, output_tokens: 5 });
    expect(sumUsage([{}, {}])).toEqual({});
    expect("cached_input_tokens" in sumUsage([{ input_tokens: 1 }])).toBe(false);
  });
  it("keeps a reported zero", () => {
    expect(sumUsage([{ cache_write_tokens: 0 }, {}])).toEqual({ cache_write_tokens: 0 });
  });
  it("sums only the operands that reported a key", () => {
    expect(sumUsage([{ output_tokens: 10, reasoning_tokens: 4 }, { output_tokens: 7 }])).toEqual({ output_tokens: 17, reasoning_tokens: 4 });
  });
  it("totals input + cached + writes + output, never reasoning, null when nothing reported", () => {
    expect(totalTokens({ input_tokens: 1, cached_input_tokens: 2, cache_write_tokens: 3, output_tokens: 4, reasoning_tokens: 100 })).toBe(10);
    expect(totalTokens({ reasoning_tokens: 5 })).toBeNull();
    expect(totalTokens({})).toBeNull();
  });
  it("computes deltas of running totals and treats a reset as a new start", () => {
    expect(usageDelta({ input_tokens: 10, output_tokens: 5 }, { input_tokens: 4, output_tokens: 5 })).toEqual({ input_tokens: 6, output_tokens: 0 });
    expect(usageDelta({ input_tokens: 3 }, { input_tokens: 10 })).toEqual({ input_tokens: 3 });
    expect(usageDelta({ output_tokens: 3 }, undefined)).toEqual({ output_tokens: 3 });
    expect(usageEquals({ input_tokens: 1 }, { input_tokens: 1, output_tokens: 0 })).toBe(false);
    expect(isEmptyUsage({})).toBe(true);
    expect(isEmptyUsage({ output_tokens: 0 })).toBe(false);
    expect(addUsageInto({ input_tokens: 1 }, { input_tokens: 2, output_tokens: 1 })).toEqual({ input_tokens: 3, output_tokens: 1 });
  });
});

const base = (o: Partial<UsageRecord> & { usage?: Usage }): UsageRecord => ({
  session_id: "s1",
  runtime: "claude-code",
  stream: "main",
  content_hash: "h" + JSON.stringify(o),
  ...o,
});

describe("countUsage", () => {
  it("counts one streamed response once, the largest copy, preferring the non-sidechain copy on a tie", () => {
    const recs = [
      base({ record_id: "a", usage_key: "req1", ts: "2026-02-10T21:11:59.186Z", usage: { input_tokens: 3, output_tokens: 13 } }),
      base({ record_id: "b", usage_key: "req1", ts: "2026-02-10T21:12:00.000Z", usage: { input_tokens: 3, output_tokens: 300 } }),
      base({ record_id: "c", usage_key: "req1", ts: "2026-02-10T21:12:01.000Z", usage: { input_tokens: 3, output_tokens: 120 } }),
      base({ record_id: "d", usage_key: "req2", stream: "agent-x", is_sidechain: true, usage: { output_tokens: 9 }, model: "side" }),
      base({ record_id: "e", usage_key: "req2", usage: { output_tokens: 9 }, model: "main" }),
    ];
    const c = countUsage(recs);
    expect(c).toHaveLength(2);
    expect(c[0]!.usage).toEqual({ input_tokens: 3, output_tokens: 300 });
    expect(c[1]!.model).toBe("main");
    const naive = sumUsage(recs.map((r) => r.usage));
    expect(naive.output_tokens).toBe(13 + 300 + 120 + 9 + 9);
    expect(usageBySession(recs).get("s1")!.usage).toEqual({ input_tokens: 3, output_tokens: 309 });
  });

  it("takes a cumulative stream's total from its last running total, per UTC day by difference", () => {
    const recs = [
      base({ ts: "2026-05-11T23:59:00.000Z", usage_mode: "cumulative", usage: { input_tokens: 100, output_tokens: 10 } }),
      base({ ts: "2026-05-11T23:59:00.500Z", usage_mode: "cumulative", usage: { input_tokens: 100, output_tokens: 10 } }),
      base({ ts: "2026-05-12T00:01:00.000Z", usage_mode: "cumulative", usage: { input_tokens: 250, output_tokens: 30 } }),
    ];
    expect(usageBySession(recs).get("s1")!.usage).toEqual({ input_tokens: 250, output_tokens: 30 });
    const days = usageByDay(recs);
    expect(days.get("2026-05-11")!.usage).toEqual({ input_tokens: 100, output_tokens: 10 });
    expect(days.get("2026-05-12")!.usage).toEqual({ input_tokens: 150, output_tokens: 20 });
  });

  it("skips replayed history and records without usage", () => {
    const recs = [
      base({ record_id: "p", replayed: true, usage: { output_tokens: 1000 } }),
      base({ record_id: "q", usage: {} }),
      base({ record_id: "r", usage: { output_tokens: 1 } }),
    ];
    expect(countUsage(recs).map((c) => c.usage)).toEqual([{ output_tokens: 1 }]);
  });

  it("counts a usage key once across sessions (a resumed session's copied history)", () => {
    const recs = [
      base({ session_id: "s1", record_id: "a", usage_key: "req9", usage: { output_tokens: 50 } }),
      base({ session_id: "s2", record_id: "a", usage_key: "req9", usage: { output_tokens: 50 } }),
    ];
    const by = usageBySession(recs);
    expect(by.get("s1")!.usage).toEqual({ output_tokens: 50 });
    expect(by.has("s2")).toBe(false);
  });

  it("counts the last copy of a latest-mode key, and a reported-zero copy voids it", () => {
    const recs = [
      base({ record_id: "m1", usage_mode: "latest", usage_key: "g1", usage: { output_tokens: 90 } }),
      base({ record_id: "m1b", usage_mode: "latest", usage_key: "g1", usage: { output_tokens: 40 } }),
      base({ record_id: "m2", usage_mode: "latest", usage_key: "g2", usage: { output_tokens: 7 } }),
      base({ record_id: "rewind", usage_mode: "latest", usage_key: "g2", usage: {} }),
    ];
    expect(countUsage(recs).map((c) => c.usage)).toEqual([{ output_tokens: 40 }]);
  });

  it("splits totals by model", () => {
    const recs = [base({ record_id: "1", model: "m1", usage: { output_tokens: 2 } }), base({ record_id: "2", model: "m2", usage: { output_tokens: 3 } }), base({ record_id: "3", model: "m1", usage: { output_tokens: 4 } })];
    const s = usageBySession(recs).get("s1")!;
    expect(s.by_model.get("m1")).toEqual({ output_tokens: 6 });
    expect(s.by_model.get("m2")).toEqual({ output_tokens: 3 });
  });
});

const usageArb = fc.record(
  { input_tokens: fc.nat(5000), cached_input_tokens: fc.nat(5000), cache_write_tokens: fc.nat(5000), output_tokens: fc.nat(5000), reasoning_tokens: fc.nat(100) },
  { requiredKeys: [] },
);
const recordArb = fc.record({
  session_id: fc.constantFrom("s1", "s2"),
  stream: fc.constantFrom("main", "agent-1"),
  record_id: fc.option(fc.uuid(), { nil: undefined }),
  usage_key: fc.option(fc.constantFrom("k1", "k2", "k3"), { nil: undefined }),
  usage_mode: fc.constantFrom("delta" as const, "cumulative" as const, "latest" as const),
  ts: fc.integer({ min: Date.parse("2026-01-01"), max: Date.parse("2026-01-05") }).map((t) => new Date(t).toISOString()),
  usage: usageArb,
  content_hash: fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 8, maxLength: 8 }),
});

describe("properties", () => {
  it("a transcript fed twice (a resumed or copied session) changes no usage total", () => {
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 40 }), (arr) => {
        const recs: UsageRecord[] = arr.map((r) => {
          const { record_id, usage_key, ...rest } = r;
          return { runtime: "codex", ...rest, ...(record_id ? { record_id } : {}), ...(usage_key ? { usage_key } : {}) };
        });
        const once = usageBySession(recs);
        const twice = usageBySession([...recs, ...recs]);
        expect([...twice.keys()].sort()).toEqual([...once.keys()].sort());
        for (const [k, v] of once) expect(twice.get(k)!.usage).toEqual(v.usage);
        const d1 = usageByDay(recs);
        const d2 = usageByDay([...recs, ...recs]);
        for (const [k, v] of d1) expect(d2.get(k)!.usage).toEqual(v.usage);
      }),
      { numRuns: 300 },
    );
  });

  it("per-day totals add up to per-session totals", () => {
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 40 }), (arr) => {
        const recs: UsageRecord[] = arr.map((r) => ({ runtime: "codex", ...r, session_id: "s1" }) as UsageRecord);
        const sessions = usageBySession(recs);
        const days = usageByDay(recs);
        expect(sumUsage([...days.values()].map((d) => d.usage))).toEqual(sessions.get("s1")?.usage ?? {});
      }),
      { numRuns: 300 },
    );
  });

  it("countUsage's onRecord names one outcome per usage-carrying record; the counted ones are the contributions", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(recordArb, fc.boolean()), { maxLength: 40 }), (arr) => {
        const recs: UsageRecord[] = arr.map(([r, replayed]) => {
          const { record_id, usage_key, ...rest } = r;
          return { runtime: "codex", ...rest, ...(record_id ? { record_id } : {}), ...(usage_key ? { usage_key } : {}), ...(replayed ? { replayed } : {}) };
        });
        const seen = new Map<UsageRecord, string[]>();
        const cs = countUsage([...recs, ...recs], { onRecord: (rec, o) => (seen.get(rec) ?? seen.set(rec, []).get(rec)!).push(o) });
        expect(cs).toEqual(countUsage([...recs, ...recs]));
        const carrying = recs.filter((r) => !isEmptyUsage(r.usage) || (r.usage_mode === "latest" && r.usage_key !== undefined));
        // Each record was read twice: both readings have an outcome, the second a duplicate unless replayed.
        for (const r of recs) expect(seen.get(r)?.length ?? 0).toBe(carrying.includes(r) ? 2 : 0);
        const counted = [...seen.values()].flat().filter((o) => o === "counted").length;
        expect(counted).toBe(cs.length);
        for (const [r, os] of seen) if (r.replayed) expect(os).toEqual(["replayed", "replayed"]);
      }),
      { numRuns: 300 },
    );
  });
});

describe("isoTime (a time as toISOString writes what Date.parse reads)", () => {
  const viaDate = (s: string): string | undefined => {
    const ms = Date.parse(s);
    return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
  };
  it("agrees with Date on the edges of the canonical form", () => {
    const edges = [
      "2024-02-29T00:00:00.000Z", "2023-02-29T00:00:00.000Z", "2100-02-29T12:00:00.000Z", "2000-02-29T12:00:00.000Z",
      "2024-04-31T10:00:00.000Z", "2024-01-01T24:00:00.000Z", "2024-01-01T23:59:60.000Z", "2024-13-01T00:00:00.000Z",
      "2024-00-10T00:00:00.000Z", "2024-01-00T00:00:00.000Z", "0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z",
      "2024-01-01T00:00:00.000+01:00", "2024-01-01T00:00:00Z", "2024-01-01", "2024-1a-01T00:00:00.000Z", "not a time", "",
    ];
    for (const s of edges) expect(isoTime(s), s).toBe(viaDate(s));
    // Rolled over by Date, so not returned as given.
    expect(isoTime("2024-02-30T00:00:00.000Z")).toBe("2024-03-01T00:00:00.000Z");
    expect(recordDay({ ts: "2024-04-31T10:00:00.000Z" })).toBe("2024-05-01");
    expect(recordDay({ ts: "2024-13-01T00:00:00.000Z" })).toBe("unknown");
  });
  it("agrees with Date on any time written in the canonical shape", () => {
    // Each field from just below to just past its range, so most draws are real times and the rest miss by one.
    const d2 = (min: number, max: number) => fc.integer({ min, max }).map((n) => String(n).padStart(2, "0"));
    const shaped = fc
      .tuple(fc.integer({ min: 0, max: 9999 }), d2(0, 13), d2(0, 32), d2(0, 24), d2(0, 60), d2(0, 60), fc.integer({ min: 0, max: 999 }))
      .map(([y, mo, d, h, mi, s, ms]) => `${String(y).padStart(4, "0")}-${mo}-${d}T${h}:${mi}:${s}.${String(ms).padStart(3, "0")}Z`);
    fc.assert(fc.property(shaped, (s) => isoTime(s) === viaDate(s) && recordDay({ ts: s }) === (viaDate(s)?.slice(0, 10) ?? "unknown")), { numRuns: 5000 });
  });
});

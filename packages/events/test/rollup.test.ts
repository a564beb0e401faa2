import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  buildUsageRollup,
  continueUsageRollup,
  countUsage,
  decodeUsageCarryState,
  encodeUsageCarryState,
  growUsageCarry,
  usageCarryRecords,
  usageCarryState,
  usageIds,
  decodeUsageCarry,
  decodeUsageRollup,
  encodeUsageCarry,
  encodeUsageRollup,
  isEventsError,
  overlappingRollups,
  rollupContributions,
  usageIdentity,
  usageKeyHash,
  type Usage,
  type UsageContribution,
  type UsageRecord,
} from "../src/index.js";
import * as light from "../src/usage.js";
import { union } from "../src/internal/rollup.js";

const golden = (name: string) => new URL(`./golden/${name}`, import.meta.url);

/** The records of the golden rollup: every rule of countUsage appears once. */
const GOLDEN_RECORDS: UsageRecord[] = [
  // delta copies of one response: the larger output counts
  { session_id: "s1", runtime: "claude-code", stream: "main", content_hash: "a", record_id: "r1", ts: "2026-02-10T21:00:00.000Z", model: "claude-opus-4-6", usage: { input_tokens: 3, output_tokens: 5 }, usage_key: "msg_1:req_1" },
  { session_id: "s1", runtime: "claude-code", stream: "main", content_hash: "b", record_id: "r2", ts: "2026-02-10T21:00:01.000Z", model: "claude-opus-4-6", usage: { input_tokens: 3, output_tokens: 13 }, usage_key: "msg_1:req_1" },
  // the same record landed twice counts once
  { session_id: "s1", runtime: "claude-code", stream: "main", content_hash: "c", record_id: "r3", ts: "2026-02-11T00:10:00.000Z", model: "claude-haiku-4-5", usage: { input_tokens: 1, cached_input_tokens: 100, cache_write_tokens: 7, output_tokens: 2 }, usage_key: "msg_2:req_2" },
  { session_id: "s1", runtime: "claude-code", stream: "main", content_hash: "c", record_id: "r3", ts: "2026-02-11T00:10:00.000Z", model: "claude-haiku-4-5", usage: { input_tokens: 1, cached_input_tokens: 100, cache_write_tokens: 7, output_tokens: 2 }, usage_key: "msg_2:req_2" },
  // a running total: counts its growth; a replayed record nothing
  { session_id: "s2", runtime: "codex", stream: "main", content_hash: "d", ts: "2026-02-10T08:00:00.000Z", model: "gpt-5.2", usage: { input_tokens: 10, output_tokens: 4, reasoning_tokens: 1 }, usage_mode: "cumulative" },
  { session_id: "s2", runtime: "codex", stream: "main", content_hash: "e", ts: "2026-02-10T08:01:00.000Z", model: "gpt-5.2", usage: { input_tokens: 25, output_tokens: 9, reasoning_tokens: 3 }, usage_mode: "cumulative" },
  { session_id: "s2", runtime: "codex", stream: "main", content_hash: "f", ts: "2026-02-09T08:01:00.000Z", model: "gpt-5.2", usage: { input_tokens: 999 }, replayed: true },
  // a latest copy voided by a later reported-zero copy, and a record without a time
  { session_id: "s3", runtime: "gemini", stream: "main", content_hash: "g", ts: "2026-02-12T10:00:00.000Z", model: "gemini-2.5-pro", usage: { input_tokens: 50, output_tokens: 5 }, usage_mode: "latest", usage_key: "g-1" },
  { session_id: "s3", runtime: "gemini", stream: "main", content_hash: "h", ts: "2026-02-12T10:00:02.000Z", model: "gemini-2.5-pro", usage_mode: "latest", usage_key: "g-1" },
  { session_id: "s3", runtime: "gemini", stream: "main", content_hash: "i", model: "gemini-2.5-pro", usage: { output_tokens: 6 } },
  // version 2: prompt-size classes (a 250k prompt, a small one), 1-hour cache writes, a recorded cost apart
  { session_id: "s4", runtime: "claude-code", stream: "main", content_hash: "j", record_id: "r4", ts: "2026-02-13T09:00:00.000Z", model: "claude-sonnet-4-5", usage: { input_tokens: 10, cached_input_tokens: 249_990, cache_write_tokens: 100, cache_write_1h_tokens: 40, output_tokens: 5 }, usage_key: "msg_4:req_4" },
  { session_id: "s4", runtime: "claude-code", stream: "main", content_hash: "k", record_id: "r5", ts: "2026-02-13T09:01:00.000Z", model: "claude-sonnet-4-5", usage: { input_tokens: 10, output_tokens: 5 }, usage_key: "msg_5:req_5" },
  { session_id: "s4", runtime: "claude-code", stream: "main", content_hash: "l", record_id: "r6", ts: "2026-02-13T09:02:00.000Z", model: "claude-sonnet-4-5", usage: { input_tokens: 20, output_tokens: 7 }, usage_key: "msg_6:req_6", cost_usd: 0.25 },
];

describe("usage rollup format", () => {
  it("hashes a usage key as SHA-256 over mode, NUL and key (first 8 bytes, big-endian)", () => {
    const expected = createHash("sha256").update(Buffer.from("d\u0000msg_1:req_1", "utf8")).digest().subarray(0, 8).toString("hex");
    expect(usageKeyHash(GOLDEN_RECORDS[0]!)!.toString(16).padStart(16, "0")).toBe(expected);
    const latest = createHash("sha256").update(Buffer.from("l\u0000g-1", "utf8")).digest().subarray(0, 8).toString("hex");
    expect(usageKeyHash(GOLDEN_RECORDS[7]!)!.toString(16).padStart(16, "0")).toBe(latest);
    expect(usageKeyHash(GOLDEN_RECORDS[4]!)).toBeUndefined(); // cumulative
    expect(usageKeyHash(GOLDEN_RECORDS[9]!)).toBeUndefined(); // no key
    // Copies in a row (one message's content blocks) and changes of key or mode between them: each
    // hash is the one its own mode and key give.
    const rec = GOLDEN_RECORDS[0]!;
    const h = (mode: string, key: string) => createHash("sha256").update(Buffer.from(`${mode}\u0000${key}`, "utf8")).digest().readBigUInt64BE(0);
    const run: [UsageRecord, bigint][] = [
      [{ ...rec, usage_key: "k1" }, h("d", "k1")],
      [{ ...rec, usage_key: "k1" }, h("d", "k1")],
      [{ ...rec, usage_key: "k1", usage_mode: "latest" }, h("l", "k1")],
      [{ ...rec, usage_key: "k1", usage_mode: "delta" }, h("d", "k1")],
      [{ ...rec, usage_key: "k2" }, h("d", "k2")],
      [{ ...rec, usage_key: "k1" }, h("d", "k1")],
    ];
    for (const [r, want] of run) expect(usageKeyHash(r)).toBe(want);
  });

  it("encodes the golden records to the pinned bytes, and decodes them back", () => {
    const enc = encodeUsageRollup(buildUsageRollup(GOLDEN_RECORDS));
    expect(enc.json).toBe(readFileSync(golden("usage-rollup-v2/usage.json"), "utf8"));
    expect(enc.keys.equals(readFileSync(golden("usage-rollup-v2/usage.keys")))).toBe(true);
    // The keys file, re-derived with node:crypto: the three usage keys' hashes, sorted, big-endian.
    const h = (s: string) => createHash("sha256").update(s).digest().subarray(0, 8);
    expect(enc.keys.equals(Buffer.concat(["d\u0000msg_1:req_1", "d\u0000msg_2:req_2", "l\u0000g-1", "d\u0000msg_4:req_4", "d\u0000msg_5:req_5", "d\u0000msg_6:req_6"].map(h).sort(Buffer.compare)))).toBe(true);
    expect(JSON.parse(enc.json).keys).toEqual({ count: 6, sha256: createHash("sha256").update(enc.keys).digest("hex") });
    expect(JSON.parse(enc.json).prompt_classes).toEqual([128000, 199999, 200000, 271999, 272000, 512000]);
    const back = decodeUsageRollup(enc.json, enc.keys, "golden");
    expect(encodeUsageRollup(back)).toEqual(enc);
    // The pinned rows, re-derived by hand from the rules.
    expect(back.rows.map((r) => [r.session_id, r.day, r.model, r.prompt_class, r.contributions, r.usage, r.cost_usd])).toEqual([
      ["s1", "2026-02-10", "claude-opus-4-6", 0, 1, { input_tokens: 3, output_tokens: 13 }, null],
      ["s1", "2026-02-11", "claude-haiku-4-5", 0, 1, { input_tokens: 1, cached_input_tokens: 100, cache_write_tokens: 7, output_tokens: 2 }, null],
      ["s2", "2026-02-10", "gpt-5.2", 0, 2, { input_tokens: 25, output_tokens: 9, reasoning_tokens: 3 }, null],
      ["s3", "unknown", "gemini-2.5-pro", 0, 1, { output_tokens: 6 }, null],
      ["s4", "2026-02-13", "claude-sonnet-4-5", 0, 1, { input_tokens: 10, output_tokens: 5 }, null],
      ["s4", "2026-02-13", "claude-sonnet-4-5", 0, 1, { input_tokens: 20, output_tokens: 7 }, 0.25],
      // 250,100 tokens of prompt: above 200,000 and at most 271,999 — class 3
      ["s4", "2026-02-13", "claude-sonnet-4-5", 3, 1, { input_tokens: 10, cached_input_tokens: 249_990, cache_write_tokens: 100, cache_write_1h_tokens: 40, output_tokens: 5 }, null],
    ]);
    expect(rollupContributions(back).map((c) => [c.prompt, c.responses, c.cost_usd])).toEqual([[0, 1, undefined], [0, 1, undefined], [0, 2, undefined], [0, 1, undefined], [0, 1, undefined], [0, 1, 0.25], [200_001, 1, undefined]]);
    expect(back.sessions).toEqual(["s1", "s2", "s3", "s4"]);
    expect(back.keys.length).toBe(6);
    expect([...back.keys]).toEqual([...back.keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });

  it("refuses what is not a rollup, naming the file, and a newer version whole", () => {
    const enc = encodeUsageRollup(buildUsageRollup(GOLDEN_RECORDS));
    const good = JSON.parse(enc.json) as Record<string, unknown>;
    const cases: [unknown, string][] = [
      ["{", "not a usage rollup"],
      [{ ...good, format: "x" }, '"format"'],
      [{ ...good, columns: ["session_id"] }, '"columns"'],
      [{ ...good, rows: [["s1"]] }, "row 0"],
      [{ ...good, rows: [["s1", "rt", "d", null, 0, 1, null, null, -1, null, null, null, null, null, null]] }, "input_tokens"],
      [{ ...good, rows: [["s1", "rt", "d", null, 0, 1, null, null, 1, null, null, null, null, null, -1]] }, "cost_usd"],
      [{ ...good, prompt_classes: [5, 2] }, '"prompt_classes"'],
      [{ ...good, keys: "AAAA" }, '"keys"'],
      [{ ...good, keys: { count: 4, sha256: (good.keys as { sha256: string }).sha256 } }, "usage.keys holds 48 bytes"],
      [{ ...good, keys: { count: 6, sha256: "0".repeat(64) } }, "does not hash"],
    ];
    for (const [doc, why] of cases) {
      const text = typeof doc === "string" ? doc : JSON.stringify(doc);
      let err: unknown;
      try {
        decodeUsageRollup(text, enc.keys, "dir/usage.json");
      } catch (e) {
        err = e;
      }
      expect(isEventsError(err) && err.code === "InvalidRollup", why).toBe(true);
      expect((err as Error).message).toMatch(/^dir\/usage\.json: /);
      expect((err as Error).message).toContain(why);
    }
    let newer: unknown;
    try {
      decodeUsageRollup(JSON.stringify({ ...good, version: 3 }), enc.keys, "u.json");
    } catch (e) {
      newer = e;
    }
    expect(isEventsError(newer) && newer.code).toBe("NewerRollup");
    // Version 1 (summed every prompt size, no 1-hour writes, no recorded costs): refused whole, to be recounted.
    let older: unknown;
    try {
      decodeUsageRollup(readFileSync(golden("usage-rollup-v1/usage.json"), "utf8"), readFileSync(golden("usage-rollup-v1/usage.keys")), "v1.json");
    } catch (e) {
      older = e;
    }
    expect(isEventsError(older) && older.code).toBe("OlderRollup");
  });

  it("carries the golden records to the pinned bytes; a rollup continued from a carry is the rollup of everything", () => {
    const text = encodeUsageCarry(GOLDEN_RECORDS);
    expect(text).toBe(readFileSync(golden("usage-carry-v1/usage.carry"), "utf8"));
    // The replayed record (which countUsage skips) is not kept; the rest are, in order.
    expect(JSON.parse(text).rows.length).toBe(GOLDEN_RECORDS.length - 1);
    expect(encodeUsageCarry(decodeUsageCarry(text, "golden"))).toBe(text);
    const whole = encodeUsageRollup(buildUsageRollup(GOLDEN_RECORDS)).json;
    for (let cut = 0; cut <= GOLDEN_RECORDS.length; cut++) {
      const before = decodeUsageCarry(encodeUsageCarry(GOLDEN_RECORDS.slice(0, cut)), "c");
      expect(encodeUsageRollup(buildUsageRollup([...before, ...GOLDEN_RECORDS.slice(cut)])).json, `cut ${cut}`).toBe(whole);
    }
  });

  it("refuses what is not a carry, naming the file (a torn one too)", () => {
    const text = encodeUsageCarry(GOLDEN_RECORDS);
    const good = JSON.parse(text) as Record<string, unknown>;
    const row = (good.rows as unknown[][])[0]!;
    const cases: [string, string][] = [
      [text.slice(0, text.length >> 1), "not a usage carry"],
      [JSON.stringify({ ...good, format: "lake-usage-rollup" }), '"format"'],
      [JSON.stringify({ ...good, version: 2 }), '"version"'],
      [JSON.stringify({ ...good, columns: ["session_id"] }), '"columns"'],
      [JSON.stringify({ ...good, rows: [row.slice(1)] }), "row 0"],
      [JSON.stringify({ ...good, rows: [row.map((v, i) => (i === 0 ? 7 : v))] }), "wrong type"],
      [JSON.stringify({ ...good, rows: [row.map((v, i) => (i === 7 ? -1 : v))] }), "input_tokens"],
    ];
    for (const [doc, why] of cases) {
      let err: unknown;
      try {
        decodeUsageCarry(doc, "dir/x.carry");
      } catch (e) {
        err = e;
      }
      expect(isEventsError(err) && err.code === "InvalidRollup", why).toBe(true);
      expect((err as Error).message).toMatch(/^dir\/x\.carry: /);
      expect((err as Error).message).toContain(why);
    }
  });

  it("is exported without the record schema from @lake/events/usage", () => {
    expect(light.buildUsageRollup).toBe(buildUsageRollup);
    expect(light.countUsage).toBe(countUsage);
  });
});

// --- Adding rollups equals counting everything -------------------------------------------------

type Placed = UsageRecord & { place: number };

const SESSIONS = ["s0", "s1", "s2", "s3", "s4", "s5"];
const arbUsage: fc.Arbitrary<Usage | undefined> = fc.option(
  fc.record(
    { input_tokens: fc.nat(50), cached_input_tokens: fc.nat(50), cache_write_tokens: fc.nat(50), output_tokens: fc.nat(50), reasoning_tokens: fc.nat(5) },
    { requiredKeys: [] },
  ),
  { nil: undefined, freq: 5 },
);
const arbRecord = fc.record({
  s: fc.nat(SESSIONS.length - 1),
  stream: fc.constantFrom("main", "a1"),
  record_id: fc.option(fc.constantFrom("r0", "r1", "r2", "r3"), { nil: undefined }),
  content_hash: fc.constantFrom("c0", "c1", "c2", "c3", "c4"),
  ts: fc.option(fc.constantFrom("2026-03-01T10:00:00.000Z", "2026-03-01T23:59:59.000Z", "2026-03-02T00:00:00.000Z", "2026-03-03T12:00:00.000Z"), { nil: undefined }),
  model: fc.option(fc.constantFrom("m1", "m2"), { nil: undefined }),
  usage: arbUsage,
  usage_mode: fc.option(fc.constantFrom("delta" as const, "latest" as const, "cumulative" as const), { nil: undefined }),
  usage_key: fc.option(fc.constantFrom("k0", "k1", "k2", "k3", "k4"), { nil: undefined, freq: 2 }),
  is_sidechain: fc.option(fc.boolean(), { nil: undefined }),
  replayed: fc.option(fc.constant(true), { nil: undefined, freq: 8 }),
});

/** A drawn record as a UsageRecord of `runtime` (the fields drawn undefined left out). */
function drawnRecord(
  r: { s: number; stream: string; content_hash: string; record_id?: string | undefined; ts?: string | undefined; model?: string | undefined; usage?: Usage | undefined; usage_mode?: UsageRecord["usage_mode"] | undefined; usage_key?: string | undefined; is_sidechain?: boolean | undefined; replayed?: true | undefined; cost_usd?: number | undefined },
  runtime: string,
): UsageRecord {
  return {
    session_id: SESSIONS[r.s]!,
    runtime,
    stream: r.stream,
    content_hash: r.content_hash,
    ...(r.record_id !== undefined && { record_id: r.record_id }),
    ...(r.ts !== undefined && { ts: r.ts }),
    ...(r.model !== undefined && { model: r.model }),
    ...(r.usage !== undefined && { usage: r.usage }),
    ...(r.usage_mode !== undefined && { usage_mode: r.usage_mode }),
    ...(r.usage_key !== undefined && { usage_key: r.usage_key }),
    ...(r.is_sidechain !== undefined && { is_sidechain: r.is_sidechain }),
    ...(r.replayed !== undefined && { replayed: r.replayed }),
    ...(r.cost_usd !== undefined && { cost_usd: r.cost_usd }),
  };
}

/** Per (session, runtime, day, model): summed usage and the latest time — what the reports read. */
function projection(cs: readonly UsageContribution[]): Record<string, { usage: Usage; last: string | null }> {
  const out: Record<string, { usage: Usage; last: string | null }> = {};
  for (const c of cs) {
    const k = JSON.stringify([c.session_id, c.runtime, c.day, c.model]);
    const g = (out[k] ??= { usage: {}, last: null });
    for (const [key, v] of Object.entries(c.usage)) (g.usage as Record<string, number>)[key] = ((g.usage as Record<string, number>)[key] ?? 0) + v;
    if (c.ts !== null && (g.last === null || c.ts > g.last)) g.last = c.ts;
  }
  return out;
}

describe("rollups added together count what countUsage counts over all records", () => {
  it("holds for random records over partitions and bronze, with shared sessions and keys", () => {
    fc.assert(
      fc.property(
        fc.array(arbRecord, { minLength: 4, maxLength: 60, size: "max" }),
        fc.array(fc.nat(4), { minLength: SESSIONS.length, maxLength: SESSIONS.length }),
        fc.nat(3),
        (raw, placeOf, splitSession) => {
          // A session lives in one place (partitions 0-2, or 3 = bronze), except that one
          // session's records may be split over two places (a session resumed after its seal).
          const recs: Placed[] = raw.map((r, i) => {
            let place = placeOf[r.s]! % 4;
            if (r.s === splitSession && i % 2 === 1) place = (place + 1) % 4;
            return { ...drawnRecord(r, r.s % 2 ? "codex" : "claude-code"), place };
          });
          // Read order: partitions in order, then bronze; records in their order within each.
          const ordered = [0, 1, 2, 3].flatMap((p) => recs.filter((r) => r.place === p));
          const expected = projection(countUsage(ordered));
          const parts = [0, 1, 2].map((p) => ordered.filter((r) => r.place === p));
          const bronze = ordered.filter((r) => r.place === 3);
          // What maint writes, through the document bytes.
          const rollups = parts.map((p, i) => {
            const e = encodeUsageRollup(buildUsageRollup(p));
            return decodeUsageRollup(e.json, e.keys, `p${i}`);
          });
          const rescan = overlappingRollups(rollups, usageIdentity(bronze));
          const recount = [...parts.filter((_, i) => rescan.has(i)).flat(), ...bronze];
          const got = [...rollups.filter((_, i) => !rescan.has(i)).flatMap((r) => rollupContributions(r)), ...countUsage(recount)];
          expect(projection(got)).toEqual(expected);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("marks only the rollups that share something", () => {
    const r = (session: string, key?: string, mode?: "latest"): UsageRecord => ({
      session_id: session,
      runtime: "claude-code",
      stream: "main",
      content_hash: `${session}${key}`,
      usage: { output_tokens: 1 },
      ...(key !== undefined && { usage_key: key }),
      ...(mode !== undefined && { usage_mode: mode }),
    });
    const a = buildUsageRollup([r("a", "k1")]);
    const b = buildUsageRollup([r("b", "k1")]); // same key as a
    const c = buildUsageRollup([r("c", "k2")]);
    const d = buildUsageRollup([r("d", "k2", "latest")]); // same key, other mode: counted apart
    const e = buildUsageRollup([r("e", "k3")]);
    expect([...overlappingRollups([a, b, c, d, e])].sort()).toEqual([0, 1]);
    expect([...overlappingRollups([a, c, d, e], usageIdentity([r("x", "k3")]))].sort()).toEqual([3]);
    expect([...overlappingRollups([a, c, d, e], usageIdentity([r("c")]))].sort()).toEqual([1]);
    expect([...overlappingRollups([a, buildUsageRollup([r("a")])])].sort()).toEqual([0, 1]);
    // A hash in three rollups marks all three; nothing shared marks nothing.
    expect([...overlappingRollups([c, e, buildUsageRollup([r("y", "k2")]), buildUsageRollup([r("z", "k2")])])].sort()).toEqual([0, 2, 3]);
    expect(overlappingRollups([a, c, e]).size).toBe(0);
  });
});

// --- A rollup continued from its carry state ---------------------------------------------------

const arbCostRecord = fc.record({
  s: fc.nat(2),
  stream: fc.constantFrom("main", "a1"),
  record_id: fc.option(fc.nat(60).map((n) => `r${n}`), { nil: undefined, freq: 6 }),
  content_hash: fc.nat(60).map((n) => `c${n}`),
  ts: fc.option(fc.constantFrom("2026-03-01T10:00:00.000Z", "2026-03-01T23:59:59.000Z", "2026-03-02T00:00:00.000Z"), { nil: undefined }),
  model: fc.option(fc.constantFrom("m1", "m2"), { nil: undefined }),
  usage: arbUsage,
  usage_mode: fc.option(fc.constantFrom("delta" as const, "latest" as const, "cumulative" as const), { nil: undefined, freq: 3 }),
  usage_key: fc.option(fc.nat(60).map((n) => `k${n}`), { nil: undefined, freq: 2 }),
  is_sidechain: fc.option(fc.boolean(), { nil: undefined }),
  replayed: fc.option(fc.constant(true), { nil: undefined, freq: 10 }),
  cost_usd: fc.option(fc.double({ min: 0, max: 3, noNaN: true }), { nil: undefined, freq: 2 }),
});


describe("a rollup continued from its carry state", () => {
  it("whenever it continues, the bytes of counting every record (random records, float costs, cut anywhere), its carry grown in one step or two; it continues often", () => {
    let continued = 0;
    let refused = 0;
    let twoSteps = 0;
    fc.assert(
      fc.property(fc.array(arbCostRecord, { minLength: 1, maxLength: 40, size: "max" }), fc.nat(), (raw, at) => {
        const recs = raw.map((r) => drawnRecord(r, "claude-code"));
        const cut = at % (recs.length + 1);
        const before = recs.slice(0, cut);
        const whole = encodeUsageRollup(buildUsageRollup(recs));
        const c = continueUsageRollup(buildUsageRollup(before), usageIds(before), recs.slice(cut));
        if (c === undefined) {
          refused++;
          return;
        }
        continued++;
        const got = encodeUsageRollup(c.rollup);
        expect(got.json).toBe(whole.json);
        expect(got.keys.equals(whole.keys)).toBe(true);
        expect([...c.ids]).toEqual([...usageIds(recs)]);
        // The carry grown in two steps (through its encoded bytes) holds every record's document.
        const mid = cut + ((recs.length - cut) >> 1);
        const one = growUsageCarry(decodeUsageCarryState(Buffer.concat(encodeUsageCarryState(usageCarryState(before))), "a"), recs.slice(cut, mid));
        const two = one && growUsageCarry(decodeUsageCarryState(Buffer.concat(encodeUsageCarryState(one)), "b"), recs.slice(mid));
        // (the second half may meet the first: then it is counted whole)
        if (two === undefined) return;
        twoSteps++;
        expect(encodeUsageRollup(two.rollup).json).toBe(whole.json);
        expect(Buffer.concat(two.records).toString()).toBe(encodeUsageCarry(recs));
        expect(usageCarryRecords(two, "b")).toEqual(decodeUsageCarry(encodeUsageCarry(recs), "r"));
      }),
      { numRuns: 4000 },
    );
    expect(continued).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(100);
    expect(twoSteps).toBeGreaterThan(500);
  });

  it("does not continue past a record the earlier ones may meet: the same record, a copy of a response, a running total", () => {
    const base: UsageRecord = { session_id: "s1", runtime: "claude-code", stream: "main", content_hash: "a", record_id: "r1", ts: "2026-02-10T21:00:00.000Z", model: "m", usage: { input_tokens: 3, output_tokens: 5 }, usage_key: "k1" };
    const prev = buildUsageRollup([base]);
    const ids = usageIds([base]);
    const fresh: UsageRecord = { ...base, content_hash: "b", record_id: "r2", usage_key: "k2" };
    expect(continueUsageRollup(prev, ids, [fresh])).toBeDefined();
    expect(continueUsageRollup(prev, ids, [{ ...fresh, record_id: "r1" }])).toBeUndefined();
    expect(continueUsageRollup(prev, ids, [{ ...fresh, usage_key: "k1", usage: { input_tokens: 3, output_tokens: 9 } }])).toBeUndefined();
    const { usage_key: _k, record_id: _r, usage: _u, ...bare } = fresh;
    expect(continueUsageRollup(prev, ids, [{ ...bare, record_id: "r2", usage: { input_tokens: 1 }, usage_mode: "cumulative" }])).toBeUndefined();
    // Without a record id the content hash is the record's identity.
    const noId: UsageRecord = { ...bare, usage: { input_tokens: 1 }, content_hash: "z", usage_key: "k8" };
    expect(continueUsageRollup(buildUsageRollup([noId]), usageIds([noId]), [{ ...noId, usage_key: "k9" }])).toBeUndefined();
    // A record countUsage does not look at (no usage, or replayed) never stops it.
    expect(continueUsageRollup(prev, ids, [{ ...bare, record_id: "r1" }, { ...base, replayed: true }])).toBeDefined();
  });

  it("keeps the golden records' state to the pinned bytes; grown, it is the state of every record, its records added to, not decoded; damage is refused, naming the file", () => {
    const enc = (st: Parameters<typeof encodeUsageCarryState>[0]) => Buffer.concat(encodeUsageCarryState(st));
    const bytes = enc(usageCarryState(GOLDEN_RECORDS));
    expect(bytes.equals(readFileSync(golden("usage-carry-state-v1/usage.carry")))).toBe(true);
    const back = decodeUsageCarryState(bytes, "golden");
    expect(enc(back).equals(bytes)).toBe(true);
    expect(Buffer.concat(back.records).toString()).toBe(encodeUsageCarry(GOLDEN_RECORDS));
    expect(usageCarryRecords(back, "golden")).toEqual(decodeUsageCarry(encodeUsageCarry(GOLDEN_RECORDS), "golden"));
    // Grown at every cut where the records after it cannot meet those before: the same rollup,
    // hashes and document as the state of every record, with one chunk more.
    const whole = usageCarryState(GOLDEN_RECORDS);
    let grown = 0;
    for (let cut = 0; cut <= GOLDEN_RECORDS.length; cut++) {
      const g = growUsageCarry(decodeUsageCarryState(enc(usageCarryState(GOLDEN_RECORDS.slice(0, cut))), "c"), GOLDEN_RECORDS.slice(cut));
      if (g === undefined) continue;
      grown++;
      expect(encodeUsageRollup(g.rollup).json, `cut ${cut}`).toBe(encodeUsageRollup(whole.rollup).json);
      expect([...g.ids]).toEqual([...whole.ids]);
      expect(Buffer.concat(g.records).equals(Buffer.concat(whole.records)), `cut ${cut}`).toBe(true);
      expect(usageCarryRecords(decodeUsageCarryState(enc(g), "g"), "g")).toEqual(usageCarryRecords(whole, "w"));
      // Grown again from itself (the pieces of a grown state): still every record's document.
      expect(Buffer.concat(growUsageCarry(g, [])!.records).equals(Buffer.concat(whole.records))).toBe(true);
    }
    expect(grown).toBeGreaterThanOrEqual(2);

    const nl = bytes.indexOf(10);
    const refused = (bad: Buffer, why: string, read: (b: Buffer) => unknown = (b) => decodeUsageCarryState(b, "dir/x.carry")) => {
      let err: unknown;
      try {
        read(bad);
      } catch (e) {
        err = e;
      }
      expect(isEventsError(err) && err.code === "InvalidRollup", why).toBe(true);
      expect((err as Error).message).toMatch(/^dir\/x\.carry: /);
      expect((err as Error).message).toContain(why);
    };
    refused(bytes.subarray(0, bytes.length - 5), "the records line");
    refused(Buffer.from(encodeUsageCarry(GOLDEN_RECORDS)), '"format"');
    refused(bytes.subarray(0, nl >> 1), "no state line");
    // A changed digit in the records: the state reads (the records are not hashed then), the records do not.
    const flipped = Buffer.from(bytes);
    const at = nl + 1 + flipped.subarray(nl + 1).findIndex((b) => b >= 0x31 && b <= 0x38);
    flipped[at] = flipped[at]! + 1;
    refused(flipped, "do not hash", (b) => usageCarryRecords(decodeUsageCarryState(b, "dir/x.carry"), "dir/x.carry"));
  });
});

describe("the union of two sorted key sets", () => {
  // 64-bit keys that often share their high 32 bits (so the low halves decide), some at or above 2^63.
  const arbKey = fc.tuple(fc.constantFrom(0n, 1n, 0x8000_0000n, 0xffff_ffffn, 0x1234_5678n), fc.bigInt({ min: 0n, max: 0xffff_ffffn })).map(([hi, lo]) => (hi << 32n) | lo);
  const sortedSet = (xs: bigint[]): BigUint64Array => BigUint64Array.from([...new Set(xs)].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));

  it("is the sorted, unique keys of both (random sets, overlapping or not), in a new array", () => {
    fc.assert(
      fc.property(fc.array(arbKey, { maxLength: 300 }), fc.array(arbKey, { maxLength: 60 }), fc.nat(3), (xs, ys, shared) => {
        const a = sortedSet(xs);
        const b = sortedSet([...ys, ...xs.slice(0, shared)]);
        const got = union(a, b);
        expect([...got]).toEqual([...sortedSet([...xs, ...ys])]);
        expect(got.buffer).not.toBe(a.buffer);
        expect(got.buffer).not.toBe(b.buffer);
      }),
      { numRuns: 500 },
    );
  });
});

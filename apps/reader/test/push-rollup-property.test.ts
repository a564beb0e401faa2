// Property: over random fleets right after push — sessions split into random segments, some sessions
// in two runtimes or two parts, usage keys shared across sessions, records copied between segments,
// every usage mode — the usage lake-reader answers from push's segment rollups (a rollup of segments
// 0..N beside each segment N, built as push builds it: from the carry of rollup N-1 and segment N's
// rows, @lake/segments writeUsageRollupOf / usageRecordsOfRows and @lake/events' usage carry; some
// directories' newest rollup missing or damaged) equals countUsage over every row in read order.
// Each incremental rollup is the same bytes as writeUsageRollup over segments 0..N read back, and
// segment N's records counted from its rows are those readUsageRecords reads from its file. A second
// property runs sessions of more than 32 segments.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { USAGE_KEYS, countUsage, decodeUsageCarry, encodeUsageCarry, type CanonicalRecord, type Usage, type UsageContribution } from "@lake/events";
import { segmentKey, segmentUsageKey, sessionLabel, type SessionPartition } from "@lake/layout";
import { SegmentWriter, readUsageRecords, usageRecordsOfRows, writeUsageRollup, writeUsageRollupOf, type FleetRow } from "@lake/segments";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { resolveFleet, openReadableStore } from "../src/internal/fleet.js";
import { fleetUsage } from "../src/internal/usage-scan.js";
import { sampleRecords } from "./support/fixtures.js";

afterAll(cleanupTempDirs);

const template = (await sampleRecords()).find((r) => r.runtime === "claude-code" && r.usage !== undefined)!;

const SESSIONS = ["s-a", "s-b", "s-c", "s-d"];
const DAYS = ["2026-01-01", "2026-01-02", "2026-01-03"];

/** One generated record, before it is placed in a directory. */
const recordArb = fc.record({
  session: fc.integer({ min: 0, max: SESSIONS.length - 1 }),
  // Now and then the same session in a second runtime or a second part (after a seal): rollups that share a session.
  codex: fc.constantFrom(false, false, false, false, true),
  part: fc.constantFrom(1, 1, 1, 1, 1, 2),
  mode: fc.constantFrom<"delta" | "latest" | "cumulative" | undefined>("delta", "delta", "latest", "cumulative", undefined),
  // Keys of the session's own (a small pool: copies within it), now and then one of a pool shared by
  // every session (a copied response: the rollups overlap).
  key: fc.option(fc.integer({ min: 0, max: 15 }), { nil: undefined, freq: 3 }),
  sharedKey: fc.constantFrom(false, false, false, false, false, false, false, true),
  // A small pool too: the same record seen again (rule 2).
  id: fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined, freq: 4 }),
  stream: fc.constantFrom("main", "main", "side"),
  day: fc.integer({ min: 0, max: DAYS.length - 1 }),
  ms: fc.integer({ min: 0, max: 86_399_999 }),
  model: fc.constantFrom<string | undefined>("claude-opus-4-6", "claude-sonnet-4-5", undefined),
  usage: fc.record(
    Object.fromEntries(USAGE_KEYS.map((k) => [k, fc.option(fc.integer({ min: 0, max: 50_000 }), { nil: undefined, freq: 2 })])) as Record<(typeof USAGE_KEYS)[number], fc.Arbitrary<number | undefined>>,
  ),
  sidechain: fc.boolean(),
  replayed: fc.constantFrom(false, false, false, false, true),
  cost: fc.option(fc.integer({ min: 1, max: 500 }).map((c) => c / 100), { nil: undefined, freq: 5 }),
});

type Gen = typeof recordArb extends fc.Arbitrary<infer T> ? T : never;

const fleetArb = fc.record({
  records: fc.array(recordArb, { minLength: 1, maxLength: 40, size: "medium" }),
  // How many segments each directory's records are cut into (as many as it has records at most), and where.
  segments: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 16, maxLength: 16 }),
  cutSeed: fc.integer({ min: 0, max: 1 << 30 }),
  // Per directory: every rollup (push now), the newest missing (an older push, a stopped one), or the newest damaged.
  rollups: fc.array(fc.constantFrom("all", "all", "all", "missing", "damaged"), { minLength: 16, maxLength: 16 }),
});

/** Sessions of more than 32 segments: most records in one directory, cut into 33-45 segments. */
const longFleetArb = fc.record({
  records: fc
    .tuple(fc.array(recordArb.map((r): Gen => ({ ...r, session: 0, codex: false, part: 1 })), { minLength: 46, maxLength: 60 }), fc.array(recordArb, { maxLength: 8 }))
    .map(([long, rest]) => [...long, ...rest]),
  segments: fc.tuple(fc.integer({ min: 33, max: 45 }), fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 15, maxLength: 15 })).map(([a, rest]) => [a, ...rest]),
  cutSeed: fc.integer({ min: 0, max: 1 << 30 }),
  rollups: fc.array(fc.constantFrom("all", "all", "all", "missing", "damaged"), { minLength: 16, maxLength: 16 }),
});


function toRecord(g: Gen, i: number): CanonicalRecord {
  const usage: Usage = {};
  for (const k of USAGE_KEYS) if (g.usage[k] !== undefined) usage[k] = g.usage[k];
  const ts = new Date(Date.parse(`${DAYS[g.day]}T00:00:00.000Z`) + g.ms).toISOString();
  return {
    ...template,
    session_id: SESSIONS[g.session]!,
    runtime: g.codex ? "codex" : "claude-code",
    stream: g.stream,
    record_id: g.id === undefined ? undefined : `r${g.id}`,
    content_hash: `h${i}`,
    ts,
    model: g.model,
    usage: Object.keys(usage).length ? usage : undefined,
    usage_mode: g.mode,
    usage_key: g.key === undefined ? undefined : g.sharedKey ? `k${g.key}` : `k${g.key}-${g.session}`,
    is_sidechain: g.sidechain,
    replayed: g.replayed || undefined,
    cost_usd: g.cost,
  } as CanonicalRecord;
}

/** Summed usage per (session, runtime, day, model), and the responses counted. */
function sums(cs: readonly UsageContribution[]): Map<string, { usage: Usage; responses: number }> {
  const out = new Map<string, { usage: Usage; responses: number }>();
  for (const c of cs) {
    const k = `${c.session_id}|${c.runtime}|${c.day}|${c.model}`;
    let s = out.get(k);
    if (!s) out.set(k, (s = { usage: {}, responses: 0 }));
    for (const u of USAGE_KEYS) if (c.usage[u] !== undefined) s.usage[u] = (s.usage[u] ?? 0) + c.usage[u];
    s.responses += c.responses ?? 1;
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)));
}

async function property(arb: typeof fleetArb, numRuns: number, checkEvery: number, minFromRollups: number): Promise<void> {
    const writer = await SegmentWriter.open();
    let n = 0;
    // Cases answered at least partly from rollups (the rest overlapped everywhere, or had none usable).
    let fromRollups = 0;
    try {
      await fc.assert(
        fc.asyncProperty(arb, async (g) => {
          const root = tempDir(`push-rollup-prop-${n++}`);
          // Push's working copies and the reader's cache: beside the store, removed with it.
          const aside = tempDir(`push-rollup-prop-aside`);
          try {
            const records = g.records.map((r, i) => ({ g: r, rec: toRecord(r, i) }));
            // Session directories as push makes them: per session, part and runtime, dt its first day.
            const dirs = new Map<string, { p: SessionPartition; rows: CanonicalRecord[] }>();
            for (const { g: x, rec } of records) {
              const label = sessionLabel(rec.session_id, x.part);
              const id = `${label}\0${rec.runtime}`;
              let d = dirs.get(id);
              if (!d) dirs.set(id, (d = { p: { dt: rec.ts!.slice(0, 10), fleet: "f1", runtime: rec.runtime, agent: "host-a", session: label }, rows: [] }));
              d.rows.push(rec);
            }
            const inReadOrder: { key: string; rows: CanonicalRecord[] }[] = [];
            let di = 0;
            for (const d of dirs.values()) {
              const want = Math.min(g.segments[di]!, d.rows.length);
              const cuts = new Set<number>();
              for (let k = 0; cuts.size < want - 1; k++) cuts.add(1 + ((g.cutSeed + 7919 * k) % (d.rows.length - 1)));
              const bounds = [0, ...[...cuts].sort((a, b) => a - b), d.rows.length];
              const policy = g.rollups[di]!;
              di++;
              // Push's rollup of segments 0..s reads copies of them named as their keys sort.
              const work = join(aside, `work-${di}`);
              mkdirSync(work, { recursive: true });
              const local: string[] = [];
              let carry = encodeUsageCarry([]);
              for (let s = 0; s + 1 < bounds.length; s++) {
                const rows = d.rows.slice(bounds[s], bounds[s + 1]);
                const key = segmentKey(d.p, s);
                const path = join(root, ...key.split("/"));
                mkdirSync(dirname(path), { recursive: true });
                const fleetRows = rows.map((r, k): FleetRow => ({ ...r, agent: "host-a", landed_seq: s + 1, landed_row: k }));
                await writer.write(path, fleetRows, "bronze");
                inReadOrder.push({ key, rows });
                local.push(join(work, `seg-${String(s).padStart(6, "0")}.parquet`));
                copyFileSync(path, local[s]!);
                const newest = s + 2 === bounds.length;
                // As push counts: the carry of rollup s-1 (through its codec), then segment s's rows.
                const fromRows = usageRecordsOfRows(fleetRows, d.p.runtime);
                if (s % checkEvery === 0 || newest) expect(fromRows).toEqual(await readUsageRecords([{ path, layout: "bronze", runtime: d.p.runtime }]));
                const counted = [...decodeUsageCarry(carry, key), ...fromRows];
                carry = encodeUsageCarry(counted);
                // Push writes one beside every segment; the reader reads only the newest. The first
                // one stays too (covering segment 0 only: it must not be taken for the directory's).
                if (!newest && s > 0) continue;
                if (newest && policy === "missing") continue;
                const out = join(work, `rollup-${s}`);
                mkdirSync(out);
                const w = writeUsageRollupOf(counted, out);
                // The same bytes as counting every segment of the directory again, read back.
                if (newest || s === 0) {
                  const full = join(work, `full-${s}`);
                  mkdirSync(full);
                  const f = await writeUsageRollup(local.map((x) => ({ path: x, layout: "bronze" as const, runtime: d.p.runtime })), full, { label: key });
                  expect(readFileSync(w.json.path, "utf8")).toBe(readFileSync(f.json.path, "utf8"));
                  expect(readFileSync(w.keys.path).equals(readFileSync(f.keys.path))).toBe(true);
                }
                for (const [file, f] of [["keys", w.keys], ["json", w.json]] as const) {
                  const dest = join(root, ...segmentUsageKey(d.p, s, file, f.sha256).split("/"));
                  copyFileSync(f.path, dest);
                  if (newest && policy === "damaged" && file === "json") {
                    const b = readFileSync(dest);
                    b[b.length - 2] = b[b.length - 2]! ^ 1;
                    writeFileSync(dest, b);
                  }
                }
              }
            }
            inReadOrder.sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));
            const want = countUsage(inReadOrder.flatMap((x) => x.rows));
            const store = await openReadableStore(pathToFileURL(root).href);
            try {
              const files = await resolveFleet(store, join(aside, "cache"), { mirror: false });
              const got = await fleetUsage(files);
              const rows = await fleetUsage(files, { rowsOnly: true });
              expect(sums(rows)).toEqual(sums(want));
              expect(sums(got)).toEqual(sums(want));
              if (got.some((c) => c.responses !== undefined)) fromRollups++;
              // A damaged rollup is named; nothing else is.
              const damaged = g.rollups.slice(0, dirs.size).filter((x) => x === "damaged").length;
              expect(files.damaged.length).toBe(damaged);
            } finally {
              store.close();
            }
          } finally {
            rmSync(root, { recursive: true, force: true });
            rmSync(aside, { recursive: true, force: true });
          }
        }),
        { numRuns, seed: 19 },
      );
      expect(fromRollups).toBeGreaterThanOrEqual(minFromRollups);
    } finally {
      writer.close();
    }
}

describe("usage from push's segment rollups equals countUsage over every row", () => {
  it("random sessions, segments, overlaps, missing and damaged rollups", () => property(fleetArb, 10, 1, 5), 300_000);
  it("sessions of more than 32 segments, each rollup counted from the one before", () => property(longFleetArb, 3, 8, 2), 300_000);
});

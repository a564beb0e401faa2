// Usage reports over a fleet compacted by the real lake-maint: partitions whose usage rollup can be
// added as it is are answered from the rollup (their Parquet parts are not read), the rest from
// rows — and every report equals countUsage over every record either way.
import { execFileSync, spawnSync } from "node:child_process";
import { EXIT } from "@lake/cli";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { USAGE_KEYS, totalTokens, usageByDay, usageBySession, type CanonicalRecord, type Usage } from "@lake/events";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { claudeRecords, filesUnder, sampleRecords } from "./support/fixtures.js";
import { pushBronze } from "./support/fleet.js";
import { run, runJson } from "./support/run.js";

afterAll(cleanupTempDirs);

const MAINT = fileURLToPath(new URL("../../maint/bin/lake-maint.js", import.meta.url));
const maint = (args: string[]) => execFileSync(process.execPath, [MAINT, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH } });

type Row = Record<string, unknown>;
const expectTokens = (row: Row, u: Usage, what: string) => {
  for (const k of USAGE_KEYS) expect(row[k], `${what} ${k}`).toBe(u[k] ?? null);
  expect(row.total_tokens, `${what} total`).toBe(totalTokens(u));
};

/** Overwrite every compacted part with bytes that are not Parquet: a report that reads rows fails. */
function breakParts(root: string): number {
  const parts = filesUnder(join(root, "sessions", "compacted"), ".parquet");
  for (const p of parts) writeFileSync(p, "not parquet");
  return parts.length;
}

const all = [...(await claudeRecords()), ...(await sampleRecords())];

/** A fresh local fleet directory, its URL, and a reader environment with its own cache. */
function freshFleet(label: string): { root: string; store: string; env: NodeJS.ProcessEnv } {
  const root = tempDir(label);
  return { root, store: pathToFileURL(root).href, env: { LAKE_READER_CACHE: join(tempDir(`${label}-cache`), "cache") } };
}

/** The Claude session with the most usage, and a resumed copy of its first 40 records in a new session on another day (same usage keys). */
function resumedCopy(): { claude: CanonicalRecord[]; big: string; bigRecs: CanonicalRecord[]; copy: CanonicalRecord[] } {
  const claude = all.filter((r) => r.runtime === "claude-code");
  const [big] = [...usageBySession(claude)].sort((a, b) => b[1].count - a[1].count)[0]!;
  const bigRecs = claude.filter((r) => r.session_id === big);
  const copy = bigRecs.slice(0, 40).map((r) => ({ ...r, session_id: "resumed-copy", ts: "2026-04-01T00:00:00.000Z", source_path: "copy.jsonl" }));
  return { claude, big, bigRecs, copy };
}

function expectReports(got: { daily: Row[]; sessions: Row[] }, records: readonly CanonicalRecord[]) {
  const byDay = usageByDay(records);
  expect(got.daily.map((d) => d.date)).toEqual([...byDay.keys()].sort());
  for (const d of got.daily) expectTokens(d, byDay.get(String(d.date))!.usage, String(d.date));
  const bySession = usageBySession(records);
  expect(got.sessions.map((s) => s.session_id).sort()).toEqual([...bySession.keys()].sort());
  for (const s of got.sessions) {
    const w = bySession.get(String(s.session_id))!;
    expectTokens(s, w.usage, String(s.session_id));
    expect(s.models).toEqual([...w.by_model.keys()].filter((m) => m !== null).sort());
    expect(s.runtime).toBe(w.runtime);
  }
}

async function reports(store: string, env: NodeJS.ProcessEnv) {
  const daily = await runJson<{ daily: Row[]; totals: Row }>(["usage", "daily", "--json", "--store", store], env);
  const session = await runJson<{ sessions: Row[]; totals: Row }>(["usage", "session", "--json", "--store", store], env);
  const monthly = await runJson<{ monthly: Row[]; totals: Row }>(["usage", "monthly", "--json", "--store", store], env);
  return { daily: daily.daily, sessions: session.sessions, monthly: monthly.monthly, totals: [daily.totals, session.totals, monthly.totals] };
}

describe("usage from lake-maint's usage rollups", () => {
  it("a compacted fleet is answered from rollups alone, equal to countUsage over every record", async () => {
    const { root, store, env } = freshFleet("reader-rollup");
    expect(new Set(all.map((r) => r.runtime))).toEqual(new Set(["claude-code", "codex", "gemini"]));
    await pushBronze(root, all, { segments: 2 });
    const fromBronze = await reports(store, env);
    maint(["init", "--store", store, "--fleet-id", "f1"]);
    const compacted = JSON.parse(maint(["compact", "--store", store, "--json"])) as { partitions: { status: string }[] };
    expect(compacted.partitions.length).toBeGreaterThan(3);
    expect(compacted.partitions.every((p) => p.status === "compacted")).toBe(true);
    expect(filesUnder(join(root, "sessions", "compacted"), "usage.json").length).toBe(compacted.partitions.length);
    const fromRollups = await reports(store, env);
    expect(fromRollups).toEqual(fromBronze);
    expectReports(fromRollups, all);
    // --runtime filters what was counted, the same from rollups as from rows.
    for (const rt of ["claude-code", "codex", "gemini"]) {
      const got = await runJson<{ daily: Row[] }>(["usage", "daily", "--json", "--runtime", rt, "--store", store], env);
      const want = usageByDay(all.filter((r) => r.runtime === rt));
      expect(got.daily.map((d) => d.date)).toEqual([...want.keys()].sort());
      for (const d of got.daily) expectTokens(d, want.get(String(d.date))!.usage, `${rt} ${String(d.date)}`);
    }
    // Proof that no row was read: with every part unreadable the reports are unchanged, while
    // `usage blocks` (which needs each response's own time) reads rows: it finds every part
    // damaged, names each on stderr and says its answer is partial (exit 3).
    expect(breakParts(root)).toBe(compacted.partitions.length);
    expect(await reports(store, env)).toEqual(fromBronze);
    const blocks = await run(["usage", "blocks", "--json", "--store", store], env);
    expect(blocks.code).toBe(EXIT.partial);
    const named = blocks.err.trim().split("\n");
    expect(named).toHaveLength(compacted.partitions.length);
    for (const l of named) expect(l).toMatch(/^lake-reader usage: sessions\/compacted\/dt=[^/]+\/fleet=f1\/gen=[0-9a-f]+\/part-000000\.parquet: damaged: not a Parquet file .*; left out \(partial answer\)$/);
    // lake-maint verify recounts every rollup from its parts: broken parts are reported.
    const v = spawnSync(process.execPath, [MAINT, "verify", "--store", store, "--json"], { encoding: "utf8" });
    expect(v.status).not.toBe(0);
    expect(v.stdout).toMatch(/part-000000\.parquet","problem":"damaged: /);
  });

  it("a rollup that shares a session or a usage key with other data is counted from its rows", async () => {
    const { root, store, env } = freshFleet("reader-rollup-overlap");
    const { claude, copy } = resumedCopy();
    const codex = all.filter((r) => r.runtime === "codex");
    // 1. The resumed copy (same usage keys: a response counts once) lands later as un-compacted
    //    bronze on another day.
    // 2. The Codex session's running totals split over two parts: part 1 compacted, part 2 (pushed
    //    after the seal, in another day's partition) counted as growth from part 1's last total.
    const half = Math.floor(codex.length / 2);
    await pushBronze(root, [...claude, ...codex.slice(0, half)], { segments: 2 });
    maint(["init", "--store", store, "--fleet-id", "f1"]);
    maint(["compact", "--store", store, "--json"]);
    await pushBronze(root, codex.slice(half), { dt: "2026-06-01", part: 2, seal: false });
    await pushBronze(root, copy, { seal: false });
    const records = [...claude, ...codex, ...copy];
    const got = await reports(store, env);
    expectReports(got, records);
    // The copy adds nothing (its keys were counted in the compacted partition).
    expect(got.sessions.find((s) => s.session_id === "resumed-copy")).toBeUndefined();
    const codexRow = got.sessions.find((s) => s.runtime === "codex")!;
    expectTokens(codexRow, usageBySession(codex).values().next().value!.usage, "codex across parts");
    // Partitions that share nothing are still answered from their rollups: breaking every part
    // makes the answer partial (exit 3, the damaged parts named) only because the overlapping ones
    // must be read.
    breakParts(root);
    const broken = await run(["usage", "daily", "--json", "--store", store], env);
    expect(broken.code).toBe(EXIT.partial);
    expect(broken.err).toMatch(/part-000000\.parquet: damaged: not a Parquet file/);
  });

  it("a partition read from rows (no rollup) that shares keys with a rollup's is counted with it", async () => {
    const { root, store, env } = freshFleet("reader-rollup-rows");
    const { big, bigRecs, copy } = resumedCopy();
    await pushBronze(root, [...bigRecs, ...copy], { segments: 1 });
    maint(["init", "--store", store, "--fleet-id", "f1"]);
    maint(["compact", "--store", store]);
    // The big session's partition as an older maint left it: a format-1 marker, without a usage rollup.
    const dt = bigRecs.map((r) => r.ts!).sort()[0]!.slice(0, 10);
    const markerFile = join(root, `sessions/compacted/dt=${dt}/fleet=f1/_COMPACTED`);
    const marker = JSON.parse(readFileSync(markerFile, "utf8")) as Record<string, unknown>;
    delete marker.usage;
    marker.format = 1;
    writeFileSync(markerFile, JSON.stringify(marker));
    const got = await reports(store, env);
    expectReports(got, [...bigRecs, ...copy]);
    expect(got.sessions.map((s) => s.session_id)).toEqual([big]);
  });

  it("a malformed rollup is an error naming it (exit 6); a newer rollup version is not used, its rows are", async () => {
    const { root, store, env } = freshFleet("reader-rollup-bad");
    await pushBronze(root, all, { segments: 1 });
    maint(["init", "--store", store, "--fleet-id", "f1"]);
    maint(["compact", "--store", store]);
    const want = await reports(store, env);
    const [first] = filesUnder(join(root, "sessions", "compacted"), "usage.json");
    const good = readFileSync(first!, "utf8");
    // Bytes that are not what the marker records: never read; the partition is counted from its
    // rows, the rollup named, the answer marked partial (exit 3) though complete.
    writeFileSync(first!, ` ${good}`);
    const changed = await run(["usage", "daily", "--json", "--store", store], env);
    expect(changed.code).toBe(EXIT.partial);
    expect(changed.err).toMatch(/usage\.json: damaged: content hashes to [0-9a-f]+…, expected [0-9a-f]+… \(damaged\); left out/);
    expect((JSON.parse(changed.out) as { daily: Row[] }).daily).toEqual(want.daily);
    // The rest rewrites the marker's hashes to match, as a maint writing those bytes would: then the
    // rollup's own decoder decides.
    const rehash = () => {
      const markerFile = join(first!, "..", "..", "_COMPACTED");
      const m = JSON.parse(readFileSync(markerFile, "utf8")) as { usage: { sha256: string; bytes: number; keys: { sha256: string; bytes: number } } };
      for (const [o, f] of [[m.usage, first!], [m.usage.keys, first!.replace(/usage\.json$/, "usage.keys")]] as const) {
        const b = readFileSync(f);
        o.sha256 = createHash("sha256").update(b).digest("hex");
        o.bytes = b.length;
      }
      writeFileSync(markerFile, JSON.stringify(m));
    };
    writeFileSync(first!, JSON.stringify({ ...JSON.parse(good), version: 99 }));
    rehash();
    expect(await reports(store, env)).toEqual(want);
    // Key hashes that are not the ones the document names: refused, naming the rollup.
    const keysFile = first!.replace(/usage\.json$/, "usage.keys");
    const keys = readFileSync(keysFile);
    writeFileSync(first!, good);
    writeFileSync(keysFile, keys.subarray(0, keys.length - 8));
    rehash();
    const short = await run(["usage", "daily", "--json", "--store", store], env);
    expect(short.code).toBe(EXIT.corrupt);
    expect(short.err).toMatch(/usage\.json: not a usage rollup: usage\.keys holds \d+ bytes/);
    writeFileSync(keysFile, keys);
    rehash();
    expect(await reports(store, env)).toEqual(want);
    writeFileSync(first!, good.replace('"rows":[', '"rows":{'));
    rehash();
    const bad = await run(["usage", "daily", "--store", store], env);
    expect(bad.code).toBe(EXIT.corrupt);
    expect(bad.err.trim().split("\n")).toHaveLength(1);
    expect(bad.err).toMatch(/sessions\/compacted\/dt=[^/]+\/fleet=f1\/gen=[0-9a-f]+\/usage\.json: not a usage rollup/);
  });
});

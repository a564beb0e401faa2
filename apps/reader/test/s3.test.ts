import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { usageBySession, USAGE_KEYS, type CanonicalRecord } from "@lake/events";
import { openStore, type ObjectStore } from "@lake/layout";
import { createTestBucket } from "@lake/tooling/s3";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { claudeRecords, sampleRecords } from "./support/fixtures.js";
import { compactPartition, pushBronze, writeSnapshot } from "./support/fleet.js";
import { runJson } from "./support/run.js";

afterAll(cleanupTempDirs);

type Row = Record<string, unknown>;

function files(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else out.push(join(d, e.name));
    }
  };
  walk(dir);
  return out.sort();
}

describe("an s3:// fleet store on the radosgw test server, mirrored into the cache", () => {
  const local = tempDir("reader-s3-src");
  const cache = tempDir("reader-s3-cache");
  const env = { LAKE_READER_CACHE: cache, LAKE_ROOT: join(local, "root") };
  let url = "";
  let store: ObjectStore;
  let records: CanonicalRecord[] = [];

  beforeAll(async () => {
    records = await claudeRecords();
    const pushed = await pushBronze(local, records, { segments: 2 });
    // Compact one partition with lake-maint's marker form (session and part objects).
    const target = pushed.find((p) => p.session === "258c7280-ae70-4798-800f-63464d01a85d")!;
    const rows = records.filter((r) => r.session_id === target.session).map((r, i) => ({ ...r, agent: target.agent, landed_seq: 1, landed_row: i }));
    const { gen, part } = await compactPartition(local, target.dt, "f1", [{ session: target.session, rows }]);
    writeFileSync(
      join(local, `sessions/compacted/dt=${target.dt}/fleet=f1/_COMPACTED`),
      JSON.stringify({ format: 1, dt: target.dt, fleet: "f1", gen, sessions: [{ runtime: target.runtime, agent: target.agent, session: target.session, segments: 2, rows: rows.length }], parts: [{ key: part, rows: rows.length, bytes: 0, sha256: "" }], rows: rows.length, source_rows: rows.length }),
    );
    writeSnapshot(local, [{ claim_id: "c-9", agent: "host-a", subject: "mirror", text: "objects are mirrored by key and etag" }]);
    ({ url } = await createTestBucket("reader"));
    store = openStore(url);
    for (const f of files(local)) await store.upload(relative(local, f).split("\\").join("/"), { path: f });
  });

  afterAll(() => store?.close());

  it("usage session --json over s3 equals usageBySession and the local copy", async () => {
    const s3 = await runJson<{ sessions: Row[]; totals: Row }>(["usage", "session", "--json", "--store", url], env);
    const file = await runJson<{ sessions: Row[]; totals: Row }>(["usage", "session", "--json", "--store", pathToFileURL(local).href], env);
    expect(s3).toEqual(file);
    const want = usageBySession(records);
    expect(s3.sessions.length).toBe(want.size);
    for (const s of s3.sessions) for (const k of USAGE_KEYS) expect(s[k]).toBe(want.get(String(s.session_id))!.usage[k] ?? null);
  });

  it("mirrors each object once per (key, etag) and reads the compacted generation, not its bronze", async () => {
    const mirrored = files(join(cache, "mirror"));
    expect(mirrored.some((f) => f.includes("/gen="))).toBe(true);
    expect(mirrored.some((f) => f.includes("session=258c7280") && f.endsWith(".parquet"))).toBe(false);
    const before = new Map(mirrored.map((f) => [f, statSync(f).mtimeMs]));
    await runJson(["usage", "daily", "--json", "--store", url], env);
    const after = files(join(cache, "mirror"));
    expect(after).toEqual(mirrored);
    for (const f of after) expect(statSync(f).mtimeMs).toBe(before.get(f));
  });

  it("search reads the mirrored snapshot's claims", async () => {
    const r = await runJson<{ claims: Row[] }>(["search", "etag", "--json", "--store", url], env);
    expect(r.claims.map((c) => c.claim_id)).toEqual(["c-9"]);
  });

  it("sessions and sql work over s3", async () => {
    const rows = await runJson<Row[]>(["sessions", "--json", "--store", url], env);
    expect(rows.length).toBe(new Set(records.map((r) => r.session_id)).size);
    const n = await runJson<Row[]>(["sql", "SELECT count(*) AS n FROM fleet_rows", "--json", "--store", url], env);
    expect(n[0]!.n).toBe(records.length);
  });
});

describe("an s3:// fleet compacted by lake-maint: usage mirrors the rollups, not the parts", () => {
  it("usage daily/session over s3 equal the local store's, fetching only usage.json; blocks fetches the parts", async () => {
    const local = tempDir("reader-s3-rollup-src");
    const cache = tempDir("reader-s3-rollup-cache");
    const env = { LAKE_READER_CACHE: cache, LAKE_ROOT: join(local, "root") };
    const records = [...(await claudeRecords()), ...(await sampleRecords())];
    await pushBronze(local, records, { segments: 2 });
    const maint = fileURLToPath(new URL("../../maint/bin/lake-maint.js", import.meta.url));
    const localUrl = pathToFileURL(local).href;
    execFileSync(process.execPath, [maint, "init", "--store", localUrl, "--fleet-id", "f1"], { stdio: "pipe" });
    execFileSync(process.execPath, [maint, "compact", "--store", localUrl], { stdio: "pipe" });
    const { url } = await createTestBucket("reader-rollup");
    const store = openStore(url);
    try {
      for (const f of files(local)) await store.upload(relative(local, f).split("\\").join("/"), { path: f });
    } finally {
      store.close();
    }
    for (const report of ["daily", "session", "monthly"]) {
      const s3 = await runJson(["usage", report, "--json", "--store", url], env);
      expect(s3, report).toEqual(await runJson(["usage", report, "--json", "--store", localUrl], env));
    }
    const mirrored = files(join(cache, "mirror"));
    const rollups = files(local).filter((f) => f.endsWith("/usage.json"));
    expect(rollups.length).toBeGreaterThan(3);
    expect(mirrored.filter((f) => f.endsWith(".usage.json")).length).toBe(rollups.length);
    expect(mirrored.filter((f) => f.endsWith(".parquet"))).toEqual([]);
    // blocks needs every response's time: it reads (and so mirrors) the parts.
    expect(await runJson(["usage", "blocks", "--json", "--store", url], env)).toEqual(await runJson(["usage", "blocks", "--json", "--store", localUrl], env));
    expect(files(join(cache, "mirror")).filter((f) => f.endsWith(".parquet")).length).toBe(files(local).filter((f) => f.includes("/gen=") && f.endsWith(".parquet")).length);
  });
});

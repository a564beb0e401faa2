import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { readFileSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { usageBySession, USAGE_KEYS, type CanonicalRecord } from "@lake/events";
import { openStore } from "@lake/layout";
import { createTestBucket } from "@lake/tooling/s3";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { claudeRecords, filesUnder, sampleRecords } from "./support/fixtures.js";
import { compactWithMaint, pushBronze, snapshotWithMaint } from "./support/fleet.js";
import { runJson } from "./support/run.js";

afterAll(cleanupTempDirs);

type Row = Record<string, unknown>;

/** A new bucket on the test server holding every file under `local` at its relative path; its URL. */
async function toBucket(local: string, label: string): Promise<string> {
  const { url } = await createTestBucket(label);
  const store = openStore(url);
  try {
    for (const f of filesUnder(local)) await store.upload(relative(local, f).split("\\").join("/"), { path: f });
  } finally {
    store.close();
  }
  return url;
}

describe("an s3:// fleet store on the radosgw test server, mirrored into the cache", () => {
  const local = tempDir("reader-s3-src");
  const cache = tempDir("reader-s3-cache");
  const env = { LAKE_READER_CACHE: cache, LAKE_ROOT: join(local, "root") };
  let url = "";
  let records: CanonicalRecord[] = [];

  beforeAll(async () => {
    records = await claudeRecords();
    const pushed = await pushBronze(local, records, { segments: 2 });
    // Compact one partition with lake-maint.
    const target = pushed.find((p) => p.session === "258c7280-ae70-4798-800f-63464d01a85d")!;
    compactWithMaint(local, { dt: target.dt });
    snapshotWithMaint(local, [{ claim_id: "c-9", agent: "host-a", subject: "mirror", text: "objects are mirrored by key and etag" }]);
    url = await toBucket(local, "reader");
  });

  it("usage session --json over s3 equals usageBySession and the local copy", async () => {
    const s3 = await runJson<{ sessions: Row[]; totals: Row }>(["usage", "session", "--json", "--store", url], env);
    const file = await runJson<{ sessions: Row[]; totals: Row }>(["usage", "session", "--json", "--store", pathToFileURL(local).href], env);
    expect(s3).toEqual(file);
    const want = usageBySession(records);
    expect(s3.sessions.length).toBe(want.size);
    for (const s of s3.sessions) for (const k of USAGE_KEYS) expect(s[k]).toBe(want.get(String(s.session_id))!.usage[k] ?? null);
  });

  it("mirrors each object once per (key, etag) and reads the compacted generation, not its bronze", async () => {
    const mirrored = filesUnder(join(cache, "mirror"));
    expect(mirrored.some((f) => f.includes("/gen="))).toBe(true);
    expect(mirrored.some((f) => f.includes("session=258c7280") && f.endsWith(".parquet"))).toBe(false);
    const before = new Map(mirrored.map((f) => [f, statSync(f).mtimeMs]));
    await runJson(["usage", "daily", "--json", "--store", url], env);
    const after = filesUnder(join(cache, "mirror"));
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
    const url = await toBucket(local, "reader-rollup");
    for (const report of ["daily", "session", "monthly"]) {
      const s3 = await runJson(["usage", report, "--json", "--store", url], env);
      expect(s3, report).toEqual(await runJson(["usage", report, "--json", "--store", localUrl], env));
    }
    const mirrored = filesUnder(join(cache, "mirror"));
    const rollups = filesUnder(local).filter((f) => f.endsWith("/usage.json"));
    expect(rollups.length).toBeGreaterThan(3);
    expect(mirrored.filter((f) => f.includes("/usage.json/")).length).toBe(rollups.length);
    expect(mirrored.filter((f) => f.includes("/usage.keys/")).length).toBe(rollups.length);
    expect(mirrored.filter((f) => f.endsWith(".parquet"))).toEqual([]);
    // blocks needs every response's time: it reads (and so mirrors) the parts.
    expect(await runJson(["usage", "blocks", "--json", "--store", url], env)).toEqual(await runJson(["usage", "blocks", "--json", "--store", localUrl], env));
    expect(filesUnder(join(cache, "mirror")).filter((f) => f.endsWith(".parquet")).length).toBe(filesUnder(local).filter((f) => f.includes("/gen=") && f.endsWith(".parquet")).length);
  });
});

describe("an s3:// fleet is read in key order, whatever the mirrored files' etags", () => {
  it("the last `latest` copy of a response is the last segment's, as in place", async () => {
    const local = tempDir("reader-s3-order-src");
    const cache = tempDir("reader-s3-order-cache");
    const env = { LAKE_READER_CACHE: cache, LAKE_ROOT: join(local, "root") };
    // One Gemini-style response rewritten in place six times, one copy per segment: the last copy
    // read (seg-000005's: 60 input, 1 output) is the one that counts — not the largest output.
    const copy = (i: number, nonce = 0): CanonicalRecord => ({
      runtime: "gemini",
      session_id: "s-order",
      stream: "main",
      kind: "assistant",
      ts: `2026-03-01T10:00:0${i}.000Z`,
      model: "gemini-2.5-pro",
      text: `draft ${i}${" ".repeat(nonce)}`,
      usage: { input_tokens: 10 * (i + 1), output_tokens: 6 - i },
      usage_mode: "latest",
      usage_key: "resp-1",
      content_hash: `h${i}-${nonce}`,
      redaction_rules: [],
      source_path: "s-order.json",
      adapter: "gemini",
      adapter_version: "1",
    });
    // S3's etag of a single PUT is the MD5 of the bytes: pad the last copy until its segment's
    // etag does not sort last, so that etag order and key order differ where it matters.
    const md5 = (f: string) => createHash("md5").update(readFileSync(f)).digest("hex");
    let pushed;
    for (let nonce = 0; ; nonce++) {
      rmSync(join(local, "sessions"), { recursive: true, force: true });
      pushed = await pushBronze(local, [0, 1, 2, 3, 4].map((i) => copy(i)).concat([copy(5, nonce)]), { segments: 6 });
      const segs = filesUnder(pushed[0]!.dir).filter((f) => f.endsWith(".parquet"));
      expect(segs.length).toBe(6);
      const tags = segs.map(md5);
      if (tags[5]! < tags.reduce((a, b) => (a > b ? a : b))) break;
    }
    const url = await toBucket(local, "reader-order");
    const s3 = await runJson<{ daily: Row[] }>(["usage", "daily", "--json", "--store", url], env);
    expect(s3).toEqual(await runJson(["usage", "daily", "--json", "--store", pathToFileURL(local).href], env));
    expect(s3.daily.map((d) => [d.date, d.input_tokens, d.output_tokens])).toEqual([["2026-03-01", 60, 1]]);
    // The read model's views order by file too: the events view and tokens_daily agree.
    const sql = await runJson<Row[]>(["sql", "SELECT sum(input_tokens) AS i, sum(output_tokens) AS o FROM tokens_daily", "--json", "--store", url], env);
    expect([Number(sql[0]!.i), Number(sql[0]!.o)]).toEqual([60, 1]);
  });
});

import { readFileSync } from "node:fs";
import { EXIT } from "@lake/cli";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { claimEventKey, fleetClaimKey, ulid, type ObjectStore } from "@lake/layout";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { derivedClaimId, proposeClaim } from "../src/internal/claims.js";
import { buildSnapshotFile, readFleetClaims } from "../src/internal/snapshot.js";
import { BACKENDS, freshStore, initStore, keys, run } from "./helpers.js";

afterAll(cleanupTempDirs);

async function fleetClaim(store: ObjectStore, id: string) {
  const got = await store.get(fleetClaimKey(id));
  return got ? JSON.parse(Buffer.from(got.body).toString("utf8")) : undefined;
}

const at = (s: number) => new Date(Date.UTC(2026, 1, 10, 9, 0, s)).toISOString();

describe.each(BACKENDS)("claims gate and snapshot (%s)", (backend) => {
  it("promote validates, dedupes, revises and reports conflicts; snapshot publishes, swaps, and an unchanged fold publishes nothing", async () => {
    const url = await freshStore(backend, "claims");
    const store = await initStore(url);
    // Through the CLI: a proposal without a claim id.
    const p1 = await run(["propose", "--store", url, "--agent", "a1", "--repo", "lake", "--subject", "build", "--text", "Use pnpm, never npm install", "--json"]);
    expect(p1.code, p1.err.join()).toBe(0);
    expect(JSON.parse(p1.out[0]!).key).toMatch(/^claims\/events\/dt=\d{4}-\d\d-\d\d\/agent=a1\/[0-9A-Z]{26}\.json$/);
    // The same claim from another agent, whitespace aside: a duplicate.
    await proposeClaim(store, { agent: "a2", repo: "lake", subject: "build", text: "  Use pnpm,   never npm install ", kind: "fact" });
    // An explicit id, revised later by its agent; another agent's different claim under that id conflicts.
    await proposeClaim(store, { claim_id: "conv-1", agent: "a1", repo: "lake", subject: "style", text: "Imports use .js suffixes", kind: "convention", proposed_at: at(1) });
    await proposeClaim(store, { claim_id: "conv-1", agent: "a1", repo: "lake", subject: "style", text: "Imports use .js suffixes in relative paths", kind: "convention", proposed_at: at(2) });
    await proposeClaim(store, { claim_id: "conv-1", agent: "a2", repo: "lake", subject: "style", text: "Imports have no suffix", kind: "convention", proposed_at: at(3) });
    // Bad proposals: empty text; an agent that does not match the key.
    const bad1 = claimEventKey("2026-02-10", "a3", ulid());
    await store.putIfAbsent(bad1, Buffer.from(JSON.stringify({ agent: "a3", proposed_at: at(4), repo: "", subject: "", text: "   ", kind: "fact" })));
    const bad2 = claimEventKey("2026-02-10", "a3", ulid());
    await store.putIfAbsent(bad2, Buffer.from(JSON.stringify({ agent: "a4", proposed_at: at(5), repo: "", subject: "", text: "spoofed", kind: "fact" })));

    const r = await run(["promote", "--store", url, "--json"]);
    expect(r.code, r.err.join()).toBe(0);
    const rep = JSON.parse(r.out[0]!);
    const derived = derivedClaimId("lake", "build", "Use pnpm, never npm install");
    expect(rep.promoted.sort()).toEqual([derived, "conv-1"].sort());
    expect(rep.revised).toEqual(["conv-1"]);
    expect(rep.duplicates).toBe(1);
    expect(rep.rejected.map((x: { key: string }) => x.key).sort()).toEqual([bad1, bad2].sort());
    expect(rep.rejected.find((x: { key: string }) => x.key === bad2).reason).toMatch(/does not match the key's agent/);
    expect(rep.conflicts).toEqual([expect.objectContaining({ claim_id: "conv-1", reason: "claim conv-1 belongs to agent a1" })]);
    expect(await fleetClaim(store, derived)).toMatchObject({ agent: "a1", text: "Use pnpm, never npm install", revision: 1 });
    expect(await fleetClaim(store, "conv-1")).toMatchObject({ agent: "a1", text: "Imports use .js suffixes in relative paths", revision: 2, epoch: rep.epoch });

    // A second gate run over the same events writes nothing.
    const before = await Promise.all((await keys(store, "claims/fleet/")).map(async (k) => (await store.head(k))!.etag));
    const r2 = JSON.parse((await run(["promote", "--store", url, "--json"])).out[0]!);
    expect([r2.promoted, r2.revised, r2.duplicates]).toEqual([[], [], 3]);
    expect(await Promise.all((await keys(store, "claims/fleet/")).map(async (k) => (await store.head(k))!.etag))).toEqual(before);

    // Snapshot: blob under its SHA-256, then latest.json.
    const s1 = await run(["snapshot", "--store", url, "--json"]);
    expect(s1.code, s1.err.join()).toBe(0);
    const snap = JSON.parse(s1.out[0]!);
    expect(snap).toMatchObject({ status: "published", claims: 2 });
    const latest = (await store.get("snapshot/latest.json"))!;
    expect(JSON.parse(Buffer.from(latest.body).toString("utf8")).content_hash).toBe(snap.content_hash);
    const file = join(tempDir("snap"), "s.sqlite");
    await store.download(`snapshot/${snap.content_hash}.sqlite`, file);
    const db = new Database(file, { readonly: true });
    try {
      const ddl = db.prepare("SELECT name, sql FROM sqlite_master WHERE name IN ('claims', 'claims_fts', 'meta') ORDER BY name").all() as { name: string; sql: string }[];
      expect(ddl).toEqual([
        { name: "claims", sql: "CREATE TABLE claims (claim_id TEXT PRIMARY KEY, agent TEXT NOT NULL, repo TEXT, subject TEXT, text TEXT NOT NULL, kind TEXT, proposed_at TEXT, promoted_at TEXT, embedding BLOB)" },
        { name: "claims_fts", sql: "CREATE VIRTUAL TABLE claims_fts USING fts5(subject, text, content='claims', content_rowid='rowid')" },
        { name: "meta", sql: "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)" },
      ]);
      expect(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get()).toEqual({ value: "1" });
      // The reader's search: FTS5 over subject and text, joined back to claims.
      const hits = db.prepare("SELECT c.claim_id, c.agent FROM claims_fts f JOIN claims c ON c.rowid = f.rowid WHERE claims_fts MATCH ? ORDER BY rank").all("suffixes");
      expect(hits).toEqual([{ claim_id: "conv-1", agent: "a1" }]);
      expect(db.prepare("SELECT count(*) AS n FROM claims WHERE embedding IS NULL").get()).toEqual({ n: 2 });
    } finally {
      db.close();
    }

    // Unchanged fold: nothing published, pointer untouched.
    const snapKeys = await keys(store, "snapshot/");
    const s2 = JSON.parse((await run(["snapshot", "--store", url, "--json"])).out[0]!);
    expect(s2).toMatchObject({ status: "unchanged", content_hash: snap.content_hash });
    expect(await keys(store, "snapshot/")).toEqual(snapKeys);
    expect((await store.get("snapshot/latest.json"))!.etag).toBe(latest.etag);

    // A new promoted claim: a new blob, the pointer swapped, the old blob kept.
    await proposeClaim(store, { agent: "a2", repo: "lake", subject: "tests", text: "Tests use real S3", kind: "fact" });
    await run(["promote", "--store", url]);
    const s3 = JSON.parse((await run(["snapshot", "--store", url, "--json"])).out[0]!);
    expect(s3).toMatchObject({ status: "published", previous: snap.content_hash, claims: 3 });
    expect(await store.head(`snapshot/${snap.content_hash}.sqlite`)).toBeDefined();
    // verify: everything is consistent except the two invalid proposals, one line each.
    const v = await run(["verify", "--store", url]);
    expect(v.code).toBe(EXIT.partial);
    expect(v.out.map((l) => l.split(": ")[0]).sort()).toEqual([bad1, bad2].sort());
    store.close();
  });
});

it("the snapshot file is byte-for-byte deterministic for the same claims", async () => {
  const url = await freshStore("local", "snapdet");
  const store = await initStore(url);
  for (let i = 0; i < 20; i++) await proposeClaim(store, { agent: `a${i % 3}`, repo: "r", subject: `s${i}`, text: `claim number ${i} über ∑`, kind: "fact" });
  await run(["promote", "--store", url]);
  const claims = await readFleetClaims(store);
  const dir = tempDir("det");
  buildSnapshotFile(join(dir, "a.sqlite"), claims);
  buildSnapshotFile(join(dir, "b.sqlite"), [...claims].reverse());
  expect(readFileSync(join(dir, "a.sqlite")).equals(readFileSync(join(dir, "b.sqlite")))).toBe(true);
  store.close();
});

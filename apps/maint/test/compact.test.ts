import { utimesSync } from "node:fs";
import { EXIT } from "@lake/cli";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compactedMarkerKey, openStore, type ObjectStore, type SessionPartition } from "@lake/layout";
import { decodeUsageRollup, usageBySession } from "@lake/events";
import { readSegment } from "@lake/segments";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { BACKENDS, fixtureRecords, freshStore, initStore, keys, pushSession, rec, row, run, split } from "./helpers.js";

afterAll(cleanupTempDirs);

const P = (session: string, agent = "host-a"): SessionPartition => ({ dt: "2026-02-10", fleet: "f1", runtime: "claude-code", agent, session });

async function readPart(store: ObjectStore, key: string) {
  const path = join(tempDir("part"), "p.parquet");
  await store.download(key, path);
  return readSegment(path, "compacted");
}

async function marker(store: ObjectStore) {
  const got = await store.get(compactedMarkerKey({ dt: "2026-02-10", fleet: "f1" }));
  return got ? { etag: got.etag, value: JSON.parse(Buffer.from(got.body).toString("utf8")) } : undefined;
}

describe.each(BACKENDS)("compact (%s)", (backend) => {
  it("compacts sealed sessions only, is a no-op on an unchanged partition, never overwrites a live generation", async () => {
    const url = await freshStore(backend, "compact");
    const store = await initStore(url);
    const recs = await fixtureRecords("tool_heavy.jsonl", "s-heavy");
    await pushSession(store, P("s-heavy"), split(recs.map((r) => row(r, "host-a")), 3));
    await pushSession(store, P("s-open"), [[row(rec("s-open", 0, "still going"), "host-a")]], { seal: false });

    const first = await run(["compact", "--store", url, "--json"]);
    expect(first.code).toBe(0);
    const rep = JSON.parse(first.out[0]!).partitions[0];
    expect(rep.status).toBe("compacted");
    expect(rep.source_rows).toBe(recs.length);
    const m1 = (await marker(store))!;
    expect(m1.value.gen).toBe(rep.gen);
    expect(m1.value.sessions.map((s: { session: string }) => s.session)).toEqual(["s-heavy"]);
    expect(m1.value.epoch).toBeGreaterThanOrEqual(1);
    const parts1 = m1.value.parts.map((p: { key: string }) => p.key);
    const rows = (await Promise.all(parts1.map((k: string) => readPart(store, k)))).flat();
    expect(rows.length).toBe(m1.value.rows);
    // The generation's usage rollup: countUsage over the parts' rows, named by the marker.
    expect(m1.value.usage.key).toBe(`sessions/compacted/dt=2026-02-10/fleet=f1/gen=${m1.value.gen}/usage.json`);
    expect(m1.value.usage.keys.key).toBe(`sessions/compacted/dt=2026-02-10/fleet=f1/gen=${m1.value.gen}/usage.keys`);
    const keyBytes = Buffer.from((await store.get(m1.value.usage.keys.key))!.body);
    expect(keyBytes.length).toBe(m1.value.usage.keys.count * 8);
    const rollup = decodeUsageRollup(Buffer.from((await store.get(m1.value.usage.key))!.body).toString("utf8"), keyBytes, m1.value.usage.key);
    expect(rollup.rows.length).toBe(m1.value.usage.rows);
    const counted = usageBySession(rows).get("s-heavy")!.usage;
    const summed: Record<string, number> = {};
    for (const r of rollup.rows) for (const [k, v] of Object.entries(r.usage)) summed[k] = (summed[k] ?? 0) + v;
    expect(summed).toEqual(counted);
    expect(Object.keys(counted).length).toBeGreaterThan(2);
    expect(rows.every((r) => r.session_id === "s-heavy" && r.agent === "host-a" && r.runtime === "claude-code")).toBe(true);
    const bronzeBefore = await Promise.all((await keys(store, "sessions/dt=")).map(async (k) => [k, (await store.head(k))!.etag]));

    // Second run: no-op, marker untouched.
    const second = await run(["compact", "--store", url, "--json"]);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.out[0]!).partitions[0].status).toBe("unchanged");
    expect((await marker(store))!.etag).toBe(m1.etag);

    // A new sealed session: a new generation; the old generation's files are untouched.
    const oldEtags = await Promise.all(parts1.map(async (k: string) => (await store.head(k))!.etag));
    await pushSession(store, P("s-b", "host-b"), [[row(rec("s-b", 0, "hello"), "host-b")]]);
    const third = await run(["compact", "--store", url, "--json"]);
    const rep3 = JSON.parse(third.out[0]!).partitions[0];
    expect(rep3.status).toBe("compacted");
    expect(rep3.gen).not.toBe(m1.value.gen);
    expect(rep3.previous_gen).toBe(m1.value.gen);
    expect(await Promise.all(parts1.map(async (k: string) => (await store.head(k))?.etag))).toEqual(oldEtags);
    const m3 = (await marker(store))!;
    expect(m3.value.epoch).toBeGreaterThan(m1.value.epoch);
    expect(m3.value.rows).toBe(m1.value.rows + 1);
    // Bronze never rewritten.
    for (const [k, etag] of bronzeBefore) expect((await store.head(k!))?.etag).toBe(etag);
    // gc inside the grace period keeps the old (unnamed) generation — the period runs from the swap
    // that retired it, not only from its upload: files uploaded two hours ago are kept too.
    if (backend === "local") {
      const old = new Date(Date.now() - 2 * 3600_000);
      for (const k of [...parts1, m1.value.usage.key, m1.value.usage.keys.key]) utimesSync(join(new URL(url).pathname, ...k.split("/")), old, old);
    }
    const gc = await run(["gc", "--store", url, "--json"]);
    expect(gc.code).toBe(0);
    expect(JSON.parse(gc.out[0]!).partitions[0]).toMatchObject({ live_gen: rep3.gen, deleted: [], kept: [...parts1, m1.value.usage.key, m1.value.usage.keys.key] });
    store.close();
  });

  it("dedupes on (session_id, content_hash), never across sessions, never two empty-content records", async () => {
    const url = await freshStore(backend, "dedupe");
    const store = await initStore(url);
    const a0 = rec("s1", 0, "same text");
    const a0again = { ...a0, source_line: 99 }; // the same record landed twice (provenance differs, content the same)
    const a1 = rec("s1", 1, "other text");
    const e1 = rec("s1", 2, undefined); // no content: content_hash ""
    const e2 = rec("s1", 3, undefined);
    const e2again = { ...e2 };
    expect(a0.content_hash).toBe(a0again.content_hash);
    expect(e1.content_hash).toBe("");
    // Same content in another session (another agent) — must survive.
    const b0 = { ...a0, session_id: "s2" };
    expect(b0.content_hash).toBe(a0.content_hash);
    await pushSession(store, P("s1"), [[row(a0, "host-a"), row(a1, "host-a"), row(e1, "host-a")], [row(a0again, "host-a"), row(e2, "host-a"), row(e2again, "host-a")]]);
    await pushSession(store, P("s2", "host-b"), [[row(b0, "host-b")]]);
    const r = await run(["compact", "--store", url, "--json"]);
    expect(r.code).toBe(0);
    const m = (await marker(store))!;
    const rows = (await Promise.all(m.value.parts.map((p: { key: string }) => readPart(store, p.key)))).flat();
    const s1 = rows.filter((x) => x.session_id === "s1");
    const s2 = rows.filter((x) => x.session_id === "s2");
    expect(s1.filter((x) => x.text === "same text")).toHaveLength(1);
    expect(s1.filter((x) => x.text === "same text")[0]!.source_line).toBe(1); // the first copy is kept
    expect(s1.filter((x) => x.text === "other text")).toHaveLength(1);
    expect(s1.filter((x) => x.content_hash === "")).toHaveLength(3); // e1, e2, e2again all kept
    expect(s2).toHaveLength(1);
    expect(s2[0]!.agent).toBe("host-b");
    expect(m.value.rows).toBe(6);
    expect(m.value.source_rows).toBe(7);
    store.close();
  });

  it("skips a session whose _SEALED does not match its segments and reports it", async () => {
    const url = await freshStore(backend, "mismatch");
    const store = await initStore(url);
    await pushSession(store, P("s1"), [[row(rec("s1", 0, "x"), "host-a")]]);
    await pushSession(store, P("s2"), [[row(rec("s2", 0, "y"), "host-a")]], { seal: false });
    await store.put(`sessions/dt=2026-02-10/fleet=f1/runtime=claude-code/agent=host-a/session=s2/_SEALED`, Buffer.from(JSON.stringify({ sealed_at: "2026-02-11T00:00:00Z", segments: 2, rows: 1 })));
    const r = await run(["compact", "--store", url]);
    expect(r.code).toBe(EXIT.partial);
    expect(r.out.some((l) => l.startsWith("skipped sessions/dt=2026-02-10/fleet=f1/runtime=claude-code/agent=host-a/session=s2/_SEALED: _SEALED says 2 segments, found 1"))).toBe(true);
    const m = (await marker(store))!;
    expect(m.value.sessions.map((x: { session: string }) => x.session)).toEqual(["s1"]);
    store.close();
  });
});

it("refuses to run on a store without fleet.json (exit 8, names the key)", async () => {
  const url = await freshStore("local", "nofleet");
  const r = await run(["compact", "--store", url]);
  expect(r.code).toBe(EXIT.notFound);
  expect(r.err[0]).toMatch(/^lake-maint compact: fleet\.json: not found in file:/);
  openStore(url).close();
});

it("seal: seals an idle unsealed session with its segment and row counts; compaction then includes it", async () => {
  const url = await freshStore("local", "seal");
  const store = await initStore(url);
  await pushSession(store, P("s-idle"), [[row(rec("s-idle", 0, "a"), "host-a"), row(rec("s-idle", 1, "b"), "host-a")], [row(rec("s-idle", 2, "c"), "host-a")]], { seal: false });
  // Not idle for a day yet: nothing sealed.
  expect((await run(["seal", "--store", url])).out).toEqual(["seal: nothing to seal: 1 session not idle for 24 h yet (--idle to change)"]);
  const r = await run(["seal", "--store", url, "--idle", "0"]);
  expect(r.code).toBe(0);
  expect(r.out).toEqual(["sealed sessions/dt=2026-02-10/fleet=f1/runtime=claude-code/agent=host-a/session=s-idle/_SEALED"]);
  const sealed = JSON.parse(Buffer.from((await store.get("sessions/dt=2026-02-10/fleet=f1/runtime=claude-code/agent=host-a/session=s-idle/_SEALED"))!.body).toString("utf8"));
  expect(sealed).toMatchObject({ segments: 2, rows: 3, sealed_by: "lake-maint" });
  expect((await run(["compact", "--store", url])).code).toBe(0);
  expect((await marker(store))!.value.rows).toBe(3);
  expect((await run(["verify", "--store", url])).code).toBe(0);
  store.close();
});

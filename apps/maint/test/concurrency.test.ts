// Real processes (the built bin): two compactions at once, a crash between part files and the
// marker swap (its scratch directory removed by the rerun), and a run whose lease is taken over before its swap.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EXIT } from "@lake/cli";
import { compactedMarkerKey, type ObjectStore, type SessionPartition } from "@lake/layout";
import { dirLeaseOwner } from "@lake/durable";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { BACKENDS, fixtureRecords, freshStore, initStore, keys, pushSession, rec, row, run, runBin, split } from "./helpers.js";

afterAll(cleanupTempDirs);

const P = (session: string): SessionPartition => ({ dt: "2026-02-10", fleet: "f1", runtime: "claude-code", agent: "host-a", session });
const MARKER = compactedMarkerKey({ dt: "2026-02-10", fleet: "f1" });

async function genDirs(store: ObjectStore): Promise<string[]> {
  return [...new Set((await keys(store, "sessions/compacted/")).map((k) => /gen=([0-9a-f]+)\//.exec(k)?.[1]).filter((x): x is string => x !== undefined))].sort();
}

describe.each(BACKENDS)("maint processes (%s)", (backend) => {
  it("two compactions at once: exactly one writes, the other is told the lease is held", async () => {
    const url = await freshStore(backend, "race");
    const store = await initStore(url);
    await pushSession(store, P("s1"), split((await fixtureRecords("tool_heavy.jsonl", "s1")).map((r) => row(r, "host-a")), 2));
    await pushSession(store, P("s2"), [[row(rec("s2", 0, "two"), "host-a")]]);
    const env = { LAKE_MAINT_TEST_HOOK: "compact:after-lease=sleep:5000" };
    const [a, b] = await Promise.all([runBin(["compact", "--store", url, "--json"], env, backend), runBin(["compact", "--store", url, "--json"], env, backend)]);
    const codes = [a.code, b.code].sort();
    expect(codes, a.stderr + b.stderr).toEqual([0, EXIT.locked]);
    const statuses = [a, b].map((x) => JSON.parse(x.stdout).partitions[0].status).sort();
    expect(statuses).toEqual(["compacted", "held"]);
    expect(await genDirs(store)).toHaveLength(1);
    const marker = JSON.parse(Buffer.from((await store.get(MARKER))!.body).toString("utf8"));
    expect(await genDirs(store)).toEqual([marker.gen]);
    expect((await run(["verify", "--store", url])).code).toBe(0);
    store.close();
  });

  it("a crash between the part files and the marker swap leaves the old generation live", async () => {
    const url = await freshStore(backend, "crash");
    const store = await initStore(url);
    await pushSession(store, P("s1"), [[row(rec("s1", 0, "one"), "host-a"), row(rec("s1", 1, "uno"), "host-a")]]);
    expect((await run(["compact", "--store", url])).code).toBe(0);
    const before = (await store.get(MARKER))!;
    const g1 = JSON.parse(Buffer.from(before.body).toString("utf8"));
    const g1Parts = await Promise.all(g1.parts.map(async (p: { key: string }) => [p.key, (await store.head(p.key))!.etag]));

    await pushSession(store, P("s2"), [[row(rec("s2", 0, "two"), "host-a")]]);
    const tmp = tempDir("maint-crash-tmp");
    const crashed = await runBin(["compact", "--store", url, "--lease-ttl", "1"], { LAKE_MAINT_TEST_HOOK: "compact:after-parts=crash", TMPDIR: tmp }, backend);
    expect(crashed.signal).toBe("SIGKILL");
    // It left its scratch directory (downloaded segments, DuckDB's spill), its owner proven dead.
    const left = readdirSync(tmp).filter((n) => n.startsWith("lake-maint-compact-"));
    expect(left).toHaveLength(1);
    expect(dirLeaseOwner(join(tmp, left[0]!))?.liveness).toBe("dead");
    // The marker still names the old generation, whose files are intact; the new parts exist but nothing names them.
    const after = (await store.get(MARKER))!;
    expect(after.etag).toBe(before.etag);
    for (const [k, etag] of g1Parts) expect((await store.head(k))?.etag).toBe(etag);
    const dirs = await genDirs(store);
    expect(dirs).toHaveLength(2);
    expect(dirs).toContain(g1.gen);
    expect((await run(["verify", "--store", url])).code).toBe(0);
    // gc needs the partition's lease, which the crashed run still holds: it deletes nothing.
    expect((await run(["gc", "--store", url, "--grace", "0"])).code).toBe(EXIT.locked);
    expect(await genDirs(store)).toEqual(dirs);

    // The crashed run's lease expires (1 s TTL + 5 s skew bound); a rerun publishes the new generation.
    await new Promise((r) => setTimeout(r, 6500));
    const rerun = await runBin(["compact", "--store", url, "--json"], { TMPDIR: tmp }, backend);
    expect(rerun.code, rerun.stderr).toBe(0);
    const rep = JSON.parse(rerun.stdout).partitions[0];
    // The rerun removed what the killed run left, and its own.
    expect(readdirSync(tmp)).toEqual([]);
    expect(rep.status).toBe("compacted");
    expect(rep.previous_gen).toBe(g1.gen);
    expect(rep.rows).toBe(3);
    expect((await run(["verify", "--store", url])).code).toBe(0);
    // Now the old generation is unnamed: gc (grace 0) deletes it, keeps the live one and all of bronze.
    const bronze = await keys(store, "sessions/dt=");
    const gc = await run(["gc", "--store", url, "--grace", "0", "--json"]);
    expect(gc.code).toBe(0);
    // The dead generation's part files and its usage rollup.
    expect(JSON.parse(gc.out[0]!).partitions[0].deleted).toEqual([...g1Parts.map(([k]) => k), g1.usage.key, g1.usage.keys.key]);
    expect(await genDirs(store)).toEqual([rep.gen]);
    expect(await keys(store, "sessions/dt=")).toEqual(bronze);
    store.close();
  }, 60_000);
});

it("a run whose lease was taken over does not swap the marker (exit 9)", async () => {
  const url = await freshStore("local", "fence");
  const store = await initStore(url);
  await pushSession(store, P("s1"), [[row(rec("s1", 0, "one"), "host-a")]]);
  // The child stalls (like a paused VM) after writing its parts, so its lease lapses unrenewed.
  const child = runBin(["compact", "--store", url, "--lease-ttl", "1"], { LAKE_MAINT_TEST_HOOK: "compact:after-parts=block:12000" });
  let grabbed = false;
  for (let i = 0; i < 100 && !grabbed; i++) {
    await new Promise((r) => setTimeout(r, 250));
    const parts = (await keys(store, "sessions/compacted/")).length;
    if (parts === 0) continue; // the child has not reached its stall yet
    const grab = await run(["lease", "acquire", "--store", url, "--repo", "lake-maint", "--resource", "compact/dt=2026-02-10/fleet=f1", "--owner", "intruder", "--ttl", "60", "--json"]);
    grabbed = JSON.parse(grab.out[0]!).acquired;
  }
  expect(grabbed).toBe(true);
  const res = await child;
  expect(res.code, res.stderr).toBe(EXIT.refused);
  expect(res.stderr).toMatch(/lease lake-maint\/compact\/dt=2026-02-10\/fleet=f1 \(epoch 1\) lost/);
  expect(await store.get(MARKER)).toBeUndefined();
  store.close();
}, 60_000);

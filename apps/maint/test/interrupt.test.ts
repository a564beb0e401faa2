// Ctrl-C during a real digest and a real compact (the built bin, SIGINT from outside while it holds
// its first partition's lease): that partition finishes, no other starts, the lease is released, the
// run says so and exits 130; the rerun does the rest.
import { spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { compactedMarkerKey, digestKey, initFleet, listLeases, openStore, type SessionPartition } from "@lake/layout";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { BIN, fixtureRecords, freshStore, pushSession, row, runBin, split } from "./helpers.js";

afterAll(cleanupTempDirs);

describe("Ctrl-C", () => {
  it("digest stops before its next partition, releases its lease, says so, exits 130; the rerun completes", async () => {
    const url = await freshStore("local", "sigint");
    const store = openStore(url);
    await initFleet(store, "team-a");
    const recs = (await fixtureRecords("tool_heavy.jsonl", "d6e0bada")).map((r) => row(r, "host-a"));
    const parts: SessionPartition[] = ["2026-02-10", "2026-02-11", "2026-02-12"].map((dt) => ({ dt, fleet: "team-a", runtime: "claude-code", agent: "host-a", session: `s-${dt}` }));
    for (const p of parts) await pushSession(store, p, split(recs, 2));

    // Each partition sleeps 3 s holding its lease: SIGINT arrives inside the first one.
    const child = spawn(process.execPath, [BIN, "digest", "--store", url], { env: { ...process.env, LAKE_MAINT_TEST_HOOK: "digest:after-lease=sleep:3000" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exit = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    for (let i = 0; i < 600 && (await listLeases(store, { liveOnly: true })).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await listLeases(store, { liveOnly: true })).toHaveLength(1);
    child.kill("SIGINT");
    expect(await exit, stderr).toBe(130);
    expect(stderr).toBe("lake-maint: interrupted; 1 partitions done, run again to continue\n");
    expect(stdout.trim().split("\n")).toEqual([`wrote ${digestKey(parts[0]!)}`]);
    expect(await listLeases(store, { liveOnly: true })).toEqual([]);
    expect(await store.head(digestKey(parts[1]!))).toBeUndefined();

    const again = await runBin(["digest", "--store", url]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim().split("\n").sort()).toEqual([`wrote ${digestKey(parts[1]!)}`, `wrote ${digestKey(parts[2]!)}`]);
    for (const p of parts) expect(await store.head(digestKey(p))).toBeDefined();
    store.close();
  }, 120_000);

  it("compact stops before its next partition, releases its lease, says so, exits 130; the rerun completes", async () => {
    const url = await freshStore("local", "sigint-compact");
    const store = openStore(url);
    await initFleet(store, "team-a");
    const recs = (await fixtureRecords("tool_heavy.jsonl", "d6e0bada")).map((r) => row(r, "host-a"));
    const parts: SessionPartition[] = ["2026-02-10", "2026-02-11", "2026-02-12"].map((dt) => ({ dt, fleet: "team-a", runtime: "claude-code", agent: "host-a", session: `s-${dt}` }));
    for (const p of parts) await pushSession(store, p, split(recs, 2));

    const child = spawn(process.execPath, [BIN, "compact", "--store", url], { env: { ...process.env, LAKE_MAINT_TEST_HOOK: "compact:after-lease=sleep:3000" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exit = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    for (let i = 0; i < 600 && (await listLeases(store, { liveOnly: true })).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await listLeases(store, { liveOnly: true })).toHaveLength(1);
    child.kill("SIGINT");
    expect(await exit, stderr).toBe(130);
    expect(stderr).toBe("lake-maint: interrupted; 1 partitions done, run again to continue\n");
    expect(stdout.trim().split("\n")).toEqual([expect.stringMatching(/^compacted dt=2026-02-10\/fleet=team-a: gen [0-9a-f]{32} /)]);
    expect(await listLeases(store, { liveOnly: true })).toEqual([]);
    const marker = (p: SessionPartition) => store.head(compactedMarkerKey({ dt: p.dt, fleet: p.fleet }));
    expect(await marker(parts[0]!)).toBeDefined();
    expect(await marker(parts[1]!)).toBeUndefined();
    expect(await marker(parts[2]!)).toBeUndefined();

    // The rerun compacts the other two; the first is left as it is.
    const again = await runBin(["compact", "--store", url]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim().split("\n").map((l) => l.split(":")[0]).sort()).toEqual(["compacted dt=2026-02-11/fleet=team-a", "compacted dt=2026-02-12/fleet=team-a", "unchanged dt=2026-02-10/fleet=team-a"]);
    for (const p of parts) expect(await marker(p)).toBeDefined();
    store.close();
  }, 120_000);
});

import { appendFileSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { usageBySession } from "@lake/events";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { createTestBucket, s3Env } from "@lake/tooling/s3";
import { adapterTotals, fleetRecords, mirrorStore, runCli, vendorTree, walk } from "./helpers.js";

afterAll(cleanupTempDirs);

describe("collect → push → DuckDB", () => {
  it("lands the sample corpus, pushes it to a local fleet, and the fleet's usage equals the adapters'", async () => {
    const dir = tempDir("e2e");
    const tree = vendorTree(join(dir, "vendor"));
    const root = join(dir, "root");
    const fleet = join(dir, "fleet");
    const env = { HOME: join(dir, "home") };
    const c = await runCli(["collect", "--root", root, ...tree.flags, "--json"], env);
    expect(c.stderr).toBe("");
    expect(c.code).toBe(0);
    const summary = JSON.parse(c.stdout);
    expect(summary.sessions).toBeGreaterThanOrEqual(4);
    expect(summary.rounds).toBe(summary.sessions);
    const v = await runCli(["verify", "--root", root], env);
    expect(v.code, v.stdout).toBe(0);
    const p = await runCli(["push", "--root", root, "--store", `file://${fleet}`, "--agent", "host-a", "--seal-idle", "0", "--fleet-id", "f1", "--json"], env);
    expect(p.code, p.stderr).toBe(0);
    expect(JSON.parse(p.stdout)).toMatchObject({ fleet_id: "f1", sessions: summary.sessions, sealed: summary.sessions });

    const rows = await fleetRecords(fleet);
    expect(rows.length).toBe(summary.records);
    expect(new Set(rows.map((r) => r.fleet))).toEqual(new Set(["f1"]));
    const expected = await adapterTotals({ "claude-code": tree.claude, codex: tree.codex, gemini: tree.gemini });
    const got = new Map([...usageBySession(rows)].map(([k, t]) => [k, t.usage]));
    expect(got).toEqual(expected);
    // Every session directory is sealed with the segment and row counts.
    const sealed = walk(fleet).filter((f) => f.endsWith("_SEALED"));
    expect(sealed.length).toBe(new Set(rows.map((r) => `${r.runtime}/${r.session}`)).size);
    for (const s of sealed) expect(JSON.parse(readFileSync(s, "utf8"))).toMatchObject({ segments: 1 });
  });

  it("lands only what was appended, and the next push writes one new segment and sends nothing twice", async () => {
    const dir = tempDir("inc");
    const tree = vendorTree(join(dir, "vendor"));
    const root = join(dir, "root");
    const fleet = join(dir, "fleet");
    const env = { HOME: join(dir, "home") };
    expect((await runCli(["collect", "--root", root, ...tree.flags], env)).code).toBe(0);
    const push = () => runCli(["push", "--root", root, "--store", `file://${fleet}`, "--agent", "host-a", "--seal-idle", "3600", "--json"], env);
    const first = JSON.parse((await push()).stdout);
    expect(first.sealed).toBe(0);
    const again = JSON.parse((await push()).stdout);
    expect(again).toMatchObject({ sessions: 0, segments: 0, rows: 0 });

    const file = join(tree.claude, "-home-marco-projects-spotter", "tool_heavy.jsonl");
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    const sid = JSON.parse(lines[lines.length - 1]!).sessionId as string;
    const extra = [0, 1].map((i) =>
      JSON.stringify({ parentUuid: null, isSidechain: false, type: "user", sessionId: sid, uuid: `00000000-0000-4000-8000-00000000000${i}`, timestamp: "2026-02-12T10:00:0" + i + ".000Z", message: { role: "user", content: `appended ${i}` } }),
    );
    appendFileSync(file, extra.join("\n") + "\n");
    const c2 = JSON.parse((await runCli(["collect", "--root", root, ...tree.flags, "--json"], env)).stdout);
    expect(c2.landed_files).toBe(1);
    expect(c2.records).toBe(2);
    const p2 = JSON.parse((await push()).stdout);
    expect(p2).toMatchObject({ sessions: 1, segments: 1, rows: 2 });
    const segs = walk(fleet).filter((f) => f.includes(`session=${sid}`) && f.endsWith(".parquet"));
    expect(segs.map((f) => f.split("/").pop()).sort()).toEqual(["seg-000000.parquet", "seg-000001.parquet"]);
    const rows = await fleetRecords(fleet);
    const ids = rows.filter((r) => r.record_id).map((r) => `${r.session_id}/${r.stream}/${r.record_id}`);
    expect(new Set(ids).size).toBe(ids.length);
    expect(rows.filter((r) => r.text?.startsWith("appended ")).length).toBe(2);
  });

  it("pushes to an S3 fleet store (radosgw) and reads back the same records", async () => {
    const dir = tempDir("s3e2e");
    const tree = vendorTree(join(dir, "vendor"));
    const root = join(dir, "root");
    const { url } = await createTestBucket("collector");
    const env = { HOME: join(dir, "home"), ...s3Env() };
    expect((await runCli(["collect", "--root", root, ...tree.flags], env)).code).toBe(0);
    const p = await runCli(["push", "--root", root, "--store", url, "--agent", "host-b", "--seal-idle", "0", "--json"], env);
    expect(p.code, p.stderr).toBe(0);
    const sent = JSON.parse(p.stdout);
    // Mirror the store into a directory and read it as DuckDB would read the local fleet.
    const mirror = await mirrorStore(url, join(dir, "mirror"), "sessions/");
    const rows = await fleetRecords(mirror);
    expect(rows.length).toBe(sent.rows);
    const expected = await adapterTotals({ "claude-code": tree.claude, codex: tree.codex, gemini: tree.gemini });
    expect(new Map([...usageBySession(rows)].map(([k, t]) => [k, t.usage]))).toEqual(expected);
    expect(readdirSync(join(mirror, "sessions")).every((d) => d.startsWith("dt="))).toBe(true);
    // A second push sends nothing.
    const again = JSON.parse((await runCli(["push", "--root", root, "--store", url, "--agent", "host-b", "--json"], env)).stdout);
    expect(again).toMatchObject({ segments: 0, rows: 0 });
  });
});

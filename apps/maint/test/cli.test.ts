import { afterAll, describe, expect, it } from "vitest";
import { EXIT } from "@lake/cli";
import { declareIntent, heartbeat, openStore, type SessionPartition } from "@lake/layout";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { BACKENDS, fixtureRecords, freshStore, pushSession, row, run, runBin, split } from "./helpers.js";

afterAll(cleanupTempDirs);

describe.each(BACKENDS)("lake-maint through the built bin (%s)", (backend) => {
  it("init, digest, compact, verify", async () => {
    const url = await freshStore(backend, "flow");
    const init = await runBin(["init", "--store", url, "--fleet-id", "team-a", "--json"], {}, backend);
    expect(init.code, init.stderr).toBe(0);
    expect(Object.keys(JSON.parse(init.stdout)).sort()).toEqual(["created_at", "fleet_id", "schema_version"]);
    const again = await runBin(["init", "--store", url, "--fleet-id", "team-b"], {}, backend);
    expect(again.code).toBe(EXIT.refused);
    expect(again.stderr.trim()).toMatch(/^lake-maint init: fleet\.json: already exists in .* \(fleet_id team-a\); not replaced$/);
    const store = openStore(url);
    const part: SessionPartition = { dt: "2026-02-10", fleet: "team-a", runtime: "claude-code", agent: "host-a", session: "d6e0bada" };
    await pushSession(store, part, split((await fixtureRecords("tool_heavy.jsonl", "d6e0bada")).map((r) => row(r, "host-a")), 2));
    const digest = await runBin(["digest", "--store", url], {}, backend);
    expect(digest.code, digest.stderr).toBe(0);
    expect(digest.stdout.trim()).toBe(`wrote sessions/dt=2026-02-10/fleet=team-a/runtime=claude-code/agent=host-a/session=d6e0bada/digest.json`);
    expect(digest.stderr).toBe(""); // each action once, on stdout only
    const compact = await runBin(["compact", "--store", url], {}, backend);
    expect(compact.code, compact.stderr).toBe(0);
    expect(compact.stdout).toMatch(/^compacted dt=2026-02-10\/fleet=team-a: gen [0-9a-f]{32} \(\d+ rows from \d+, 1 parts, epoch 1\)/);
    expect(compact.stdout.trim().split("\n")).toHaveLength(1);
    expect(compact.stderr).toBe("");
    const gc = await runBin(["gc", "--store", url], {}, backend);
    expect(gc.code, gc.stderr).toBe(0);
    expect(gc.stdout).toBe("gc: nothing deleted: no old generations (1 partition, each only its live one)\n");
    const verify = await runBin(["verify", "--store", url, "--json"], {}, backend);
    expect(verify.code, verify.stdout).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ sessions: 1, segments: 2, compacted_partitions: 1, problems: [] });
    // A broken object: verify names it, one line, exit 3. A usage rollup that is not the bytes the
    // marker names is one.
    const marker = JSON.parse(Buffer.from((await store.get("sessions/compacted/dt=2026-02-10/fleet=team-a/_COMPACTED"))!.body).toString("utf8")) as { usage: { key: string } };
    const rollup = Buffer.from((await store.get(marker.usage.key))!.body).toString("utf8");
    await store.put(marker.usage.key, Buffer.from(rollup.replace(/"rows":\[\["d6e0bada","claude-code","2026-02-10","([^"]+)",(\d+)/, '"rows":[["d6e0bada","claude-code","2026-02-10","$1",9$2')));
    await store.put("sessions/dt=2026-02-10/fleet=team-a/runtime=claude-code/agent=host-a/session=d6e0bada/seg-000002.parquet", Buffer.from("not parquet"));
    const bad = await run(["verify", "--store", url]);
    expect(bad.code).toBe(EXIT.partial);
    // seg-000002 is past _SEALED's count of 2: a late segment, damaged here. Its damage is the
    // problem, not its number.
    expect(bad.out.filter((l) => l.includes("/_SEALED: "))).toEqual([]);
    expect(bad.out.some((l) => /seg-000002\.parquet: damaged: not a Parquet file/.test(l))).toBe(true);
    expect(bad.out.some((l) => l.startsWith(`${marker.usage.key}: content hashes to `))).toBe(true);
    store.close();
  }, 90_000);
});

describe.each(BACKENDS)("lease, roster, intents commands (%s)", (backend) => {
  it("say so when there is nothing to list", async () => {
    const url = await freshStore(backend, "empty");
    for (const [args, none] of [
      [["lease", "list"], "no leases held"],
      [["lease", "list", "--all"], "no leases"],
      [["intents", "list"], "no intents declared"],
      [["roster", "list"], "no live agents"],
    ] as const) {
      const r = await runBin([...args, "--store", url], {}, backend);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${none}\n`);
      const j = await runBin([...args, "--store", url, "--json"], {}, backend);
      expect(JSON.parse(j.stdout)).toEqual([]);
    }
  }, 60_000);

  it("lease acquire / held / release / list per the CLI contract", async () => {
    const url = await freshStore(backend, "lease");
    const base = ["--store", url, "--repo", "repo-x", "--resource", "src/a.ts"];
    const a = backend === "local" ? await runBin(["lease", "acquire", ...base, "--owner", "alice", "--ttl", "60", "--json"]) : undefined;
    const aOut = a ? { code: a.code, json: JSON.parse(a.stdout) } : await run(["lease", "acquire", ...base, "--owner", "alice", "--ttl", "60", "--json"]).then((r) => ({ code: r.code, json: JSON.parse(r.out[0]!) }));
    expect(aOut.code).toBe(0);
    expect(Object.keys(aOut.json).sort()).toEqual(["acquired", "epoch", "expires_at", "owner"]);
    expect(aOut.json).toMatchObject({ acquired: true, epoch: 1, owner: "alice" });
    expect(Date.parse(aOut.json.expires_at) - Date.now()).toBeGreaterThan(50_000);
    const b = await run(["lease", "acquire", ...base, "--owner", "bob", "--ttl", "60", "--json"]);
    expect(b.code).toBe(EXIT.locked);
    expect(JSON.parse(b.out[0]!)).toMatchObject({ acquired: false, epoch: 1, owner: "alice" });
    const list = await run(["lease", "list", "--store", url, "--json"]);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.out[0]!)).toEqual([expect.objectContaining({ repo: "repo-x", resource: "src/a.ts", owner: "alice", status: "held", epoch: 1, live: true })]);
    expect((await run(["lease", "release", ...base, "--owner", "bob", "--json"])).code).toBe(EXIT.locked);
    const rel = await run(["lease", "release", ...base, "--owner", "alice", "--json"]);
    expect(rel.code).toBe(0);
    expect(JSON.parse(rel.out[0]!)).toMatchObject({ released: true, epoch: 1, owner: "alice" });
    expect(JSON.parse((await run(["lease", "list", "--store", url, "--json"])).out[0]!)).toEqual([]);
    const b2 = await run(["lease", "acquire", ...base, "--owner", "bob", "--ttl", "60", "--json"]);
    expect(b2.code).toBe(0);
    expect(JSON.parse(b2.out[0]!)).toMatchObject({ acquired: true, epoch: 2, owner: "bob" });
  }, 60_000);

  it("roster list and intents list show live entries (--all: expired too)", async () => {
    const url = await freshStore(backend, "roster");
    const store = openStore(url);
    await heartbeat(store, { agent_id: "agent-1", runtime: "claude-code", repo: "lake", branch: "main", tool: "Bash", ttlSeconds: 60 });
    await heartbeat(store, { agent_id: "agent-0", runtime: "codex", repo: "lake", branch: "dev", ttlSeconds: 1 }, { now: () => Date.now() - 3_600_000 });
    await declareIntent(store, { agent_id: "agent-1", intents: [{ repo: "lake", resource: "apps/maint/src/cli.ts" }], ttlSeconds: 60 });
    const roster = await run(["roster", "list", "--store", url, "--json"]);
    expect(roster.code).toBe(0);
    expect(JSON.parse(roster.out[0]!)).toEqual([expect.objectContaining({ agent_id: "agent-1", runtime: "claude-code", repo: "lake", branch: "main", tool: "Bash", live: true })]);
    const all = JSON.parse((await run(["roster", "list", "--store", url, "--all", "--json"])).out[0]!);
    expect(all.map((x: { agent_id: string }) => x.agent_id).sort()).toEqual(["agent-0", "agent-1"]);
    const intents = await run(["intents", "list", "--store", url, "--json"]);
    expect(intents.code).toBe(0);
    expect(JSON.parse(intents.out[0]!)).toEqual([expect.objectContaining({ agent_id: "agent-1", intents: [expect.objectContaining({ repo: "lake", resource: "apps/maint/src/cli.ts" })] })]);
    expect((await run(["intents", "list", "--store", url])).out).toEqual([expect.stringMatching(/^agent-1 lake apps\/maint\/src\/cli\.ts expires=/)]);
    store.close();
  });
});

describe("usage errors", () => {
  it("answer with one line and exit 2", async () => {
    for (const args of [["nope"], ["compact", "--bogus"], ["lease"], ["lease", "acquire", "--store", "file:///tmp/x", "--repo", "r", "--resource", "x", "--owner", "o"], ["compact", "--store", "relative/dir"], ["compact", "extra"]]) {
      const r = await run(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err).toHaveLength(1);
      expect(r.err[0]).toMatch(/^lake-maint/);
    }
  });
  it("every command answers --help", async () => {
    for (const c of ["init", "seal", "digest", "compact", "propose", "promote", "snapshot", "verify", "gc", "run", "lease acquire", "lease release", "lease list", "roster list", "intents list"]) {
      const r = await run([...c.split(" "), "--help"]);
      expect(r.code).toBe(0);
      expect(r.out.join("\n")).toMatch(new RegExp(`^lake-maint ${c}`));
    }
  });
});

// `lake-maint run` (seal → digest → compact → promote → snapshot → gc, exit = the worst step's), the
// line every command prints when it does nothing and why, and a damaged _COMPACTED marker that
// compact replaces and gc steps around.
import { mkdirSync, rmSync } from "node:fs";
import { EXIT } from "@lake/cli";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { compactedMarkerKey, type ObjectStore, type SessionPartition } from "@lake/layout";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { BACKENDS, fixtureRecords, freshStore, initStore, pushSession, row, run, runBin, split } from "./helpers.js";

afterAll(cleanupTempDirs);

const A: SessionPartition = { dt: "2026-02-10", fleet: "f1", runtime: "claude-code", agent: "host-a", session: "d6e0bada" };
const B: SessionPartition = { dt: "2026-02-11", fleet: "f1", runtime: "claude-code", agent: "host-a", session: "f00dcafe" };

/** Two unsealed sessions in two dt partitions, from real transcripts, just pushed. */
async function twoSessions(store: ObjectStore): Promise<void> {
  await pushSession(store, A, split((await fixtureRecords("tool_heavy.jsonl", A.session)).map((r) => row(r, A.agent)), 2), { seal: false });
  await pushSession(store, B, [(await fixtureRecords("long_session.jsonl", B.session)).map((r) => row(r, B.agent))], { seal: false });
}

/** Run a command in-process: exit code and stdout lines (stderr must be empty). */
async function ok(args: string[], code = 0): Promise<string[]> {
  const r = await run(args);
  expect(r.code, r.err.join("\n")).toBe(code);
  return r.out;
}

describe("every command says why when it does nothing", () => {
  it("on an empty store, on unsealed sessions, and on a store where everything is current", async () => {
    const url = await freshStore("local", "why");
    const store = await initStore(url);
    const s = ["--store", url];
    // Empty store.
    expect(await ok(["seal", ...s])).toEqual(["seal: nothing to seal: no sessions in the store"]);
    expect(await ok(["seal", "--dt", "2026-02-10", ...s])).toEqual(["seal: nothing to seal: no sessions in the store matching dt=2026-02-10"]);
    expect(await ok(["digest", ...s])).toEqual(["digest: nothing to write: no sessions in the store"]);
    expect(await ok(["compact", ...s])).toEqual(["compact: nothing to compact: no sessions in the store"]);
    expect(await ok(["gc", ...s])).toEqual(["gc: nothing deleted: no compacted partitions in the store"]);
    expect(await ok(["promote", ...s])).toEqual(["promote: nothing to promote: no proposals under claims/events/"]);
    // Two sessions just pushed, not sealed.
    await twoSessions(store);
    expect(await ok(["seal", ...s])).toEqual(["seal: nothing to seal: 2 sessions not idle for 24 h yet (--idle to change)"]);
    expect(await ok(["seal", "--idle", "2h", ...s])).toEqual(["seal: nothing to seal: 2 sessions not idle for 2 h yet (--idle to change)"]);
    expect(await ok(["digest", ...s])).toEqual(["digest: nothing to write: 2 sessions not sealed yet (a digest waits for the seal)"]);
    expect(await ok(["compact", ...s])).toEqual([
      "empty dt=2026-02-10/fleet=f1: no sealed session yet (1 session not sealed)",
      "empty dt=2026-02-11/fleet=f1: no sealed session yet (1 session not sealed)",
      "compact: nothing to compact: 2 partitions with no sealed session yet (seal first)",
    ]);
    const seal = JSON.parse((await ok(["seal", "--json", ...s]))[0]!) as Record<string, unknown>;
    expect(seal).toMatchObject({ sessions: 2, already_sealed: 0, not_idle: 2, idle_seconds: 86_400, partitions: [] });
    // Sealed, digested, compacted: the second run of each has nothing to do and says so.
    expect(await ok(["seal", "--idle", "0", ...s])).toHaveLength(2);
    expect(await ok(["seal", "--idle", "0", ...s])).toEqual(["seal: nothing to seal: all 2 sessions sealed already"]);
    expect(await ok(["digest", ...s])).toHaveLength(2);
    expect(await ok(["digest", ...s])).toEqual(["digest: nothing to write: all 2 sealed sessions have digest.json already"]);
    expect((await ok(["compact", ...s])).filter((l) => l.startsWith("compacted "))).toHaveLength(2);
    const again = await ok(["compact", ...s]);
    expect(again.at(-1)).toBe("compact: nothing to compact: all 2 partitions current");
    expect(again.slice(0, 2).every((l) => /^unchanged dt=2026-02-1[01]\/fleet=f1: gen [0-9a-f]{32} is current \(_COMPACTED names this set of sealed sessions\)$/.test(l))).toBe(true);
    expect(await ok(["gc", ...s])).toEqual(["gc: nothing deleted: no old generations (2 partitions, each only its live one)"]);
    // A new session in one partition: a new generation there; the old one is younger than --grace.
    await pushSession(store, { ...A, session: "0a0a0a0a" }, [(await fixtureRecords("tool_heavy.jsonl", "0a0a0a0a")).slice(0, 5).map((r) => row(r, A.agent))]);
    expect((await ok(["compact", ...s])).filter((l) => l.startsWith("compacted dt=2026-02-10/"))).toHaveLength(1);
    expect(await ok(["gc", ...s])).toEqual(["gc: nothing deleted: 3 files of old generations younger than --grace 1 h (or the marker's last swap) kept"]);
    const snap = await ok(["snapshot", ...s]);
    expect(snap).toHaveLength(1);
    expect(await ok(["snapshot", ...s])).toEqual([snap[0]!.replace(/^published (\S+) \(0 claims\)$/, "unchanged $1 (0 claims): the promoted claims fold to the current snapshot; nothing published")]);
    store.close();
  }, 120_000);
});

describe.each(BACKENDS)("lake-maint run (%s)", (backend) => {
  it("runs seal → digest → compact → promote → snapshot → gc in that order; a second run does nothing and says why", async () => {
    const url = await freshStore(backend, "run");
    const store = await initStore(url);
    await twoSessions(store);
    const s = ["--store", url];
    expect(await ok(["propose", "--agent", "host-a", "--repo", "lake", "--subject", "build", "--text", "Use pnpm", ...s])).toHaveLength(1);
    const first = await runBin(["run", "--idle", "0", "--grace", "0", ...s], {}, backend);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toBe("");
    const lines = first.stdout.trimEnd().split("\n");
    const steps = lines.map((l) => l.split(":")[0]);
    // Each line names its step, the steps come in order, each at least once.
    expect([...new Set(steps)]).toEqual(["seal", "digest", "compact", "promote", "snapshot", "gc", "run"]);
    expect(lines.filter((l) => l.startsWith("seal: sealed "))).toHaveLength(2);
    expect(lines.filter((l) => l.startsWith("digest: wrote "))).toHaveLength(2);
    expect(lines.filter((l) => l.startsWith("compact: compacted "))).toHaveLength(2);
    expect(lines.filter((l) => l.startsWith("promote: promoted "))).toHaveLength(1);
    expect(lines.filter((l) => /^snapshot: published snapshot\/[0-9a-f]{64}\.sqlite \(1 claim\)$/.test(l))).toHaveLength(1);
    expect(lines.at(-1)).toBe("run: exit 0 (seal 0, digest 0, compact 0, promote 0, snapshot 0, gc 0)");
    expect((await runBin(["verify", ...s], {}, backend)).code).toBe(0);
    const second = await runBin(["run", "--idle", "0", "--grace", "0", "--json", ...s], {}, backend);
    expect(second.code, second.stderr).toBe(0);
    const j = JSON.parse(second.stdout) as { code: number; steps: { step: string; code: number; result: { partitions?: { status: string }[]; status?: string } }[] };
    expect(j.code).toBe(0);
    expect(j.steps.map((x) => x.step)).toEqual(["seal", "digest", "compact", "promote", "snapshot", "gc"]);
    expect(j.steps.find((x) => x.step === "compact")!.result.partitions!.map((p) => p.status)).toEqual(["unchanged", "unchanged"]);
    expect(j.steps.find((x) => x.step === "snapshot")!.result.status).toBe("unchanged");
    const text = await ok(["run", "--idle", "0", "--grace", "0", ...s]);
    expect(text.filter((l) => / nothing to |: nothing deleted: /.test(l))).toEqual([
      "seal: nothing to seal: all 2 sessions sealed already",
      "digest: nothing to write: all 2 sealed sessions have digest.json already",
      "compact: nothing to compact: all 2 partitions current",
      "gc: nothing deleted: no old generations (2 partitions, each only its live one)",
    ]);
    store.close();
  }, 180_000);
});

describe("lake-maint run when a step fails or is held", () => {
  it("a failing compact skips gc only; a held seal partition is 4 (locked); the exit code is the worst step's", async () => {
    const url = await freshStore("local", "run-fail");
    const store = await initStore(url);
    await twoSessions(store);
    const s = ["--store", url];
    await ok(["seal", "--idle", "0", "--dt", "2026-02-11", ...s]);
    await ok(["compact", ...s]);
    // A second seal-able session in dt=2026-02-10 whose seal lease another holds: seal says held (4).
    await ok(["lease", "acquire", "--repo", "lake-maint", "--resource", "seal/dt=2026-02-10/fleet=f1", "--owner", "someone-else", "--ttl", "600", ...s]);
    // dt=2026-02-11's marker cannot be read at all (a directory where the object should be): an I/O
    // failure of compact, not damage it could repair.
    const dir = fileURLToPath(url);
    const marker = join(dir, compactedMarkerKey({ dt: "2026-02-11", fleet: "f1" }));
    rmSync(marker);
    mkdirSync(join(marker, "x"), { recursive: true });
    const r = await run(["run", "--idle", "0", ...s]);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(/^lake-maint run: compact: .*_COMPACTED/);
    expect(r.out).toContain("seal: held dt=2026-02-10/fleet=f1: lease held by someone-else");
    expect(r.out).toContain("gc: skipped: compact failed");
    expect(r.out.some((l) => l.startsWith("promote: "))).toBe(true);
    expect(r.out.some((l) => l.startsWith("snapshot: published "))).toBe(true);
    const compactCode = r.code;
    expect(r.out.at(-1)).toBe(`run: exit ${compactCode} (seal ${EXIT.locked}, digest 0, compact ${compactCode}, promote 0, snapshot 0, gc skipped)`);
    // (A local store reports a directory where a key should be as an invalid key: a usage error, 2.)
    expect([EXIT.usage, EXIT.store, EXIT.corrupt, EXIT.io], r.err.join("\n")).toContain(compactCode);
    // Without the failure and the lease, everything is done and exit is 0.
    rmSync(marker, { recursive: true });
    await ok(["lease", "release", "--repo", "lake-maint", "--resource", "seal/dt=2026-02-10/fleet=f1", "--owner", "someone-else", ...s]);
    const fixed = await ok(["run", "--idle", "0", ...s]);
    expect(fixed.at(-1)).toBe("run: exit 0 (seal 0, digest 0, compact 0, promote 0, snapshot 0, gc 0)");
    store.close();
  }, 120_000);
});

describe("lake-maint run over a garbage _COMPACTED marker", () => {
  it("compact and gc skip that partition only (exit 3); the other partition is compacted; every other step runs", async () => {
    const url = await freshStore("local", "garbage");
    const store = await initStore(url);
    await twoSessions(store);
    const s = ["--store", url];
    await ok(["seal", "--idle", "0", ...s]);
    await ok(["compact", ...s]);
    const key = compactedMarkerKey({ dt: "2026-02-10", fleet: "f1" });
    await store.put(key, Buffer.from("garbage\n"));
    // A new session in the other partition, so compact has real work there.
    await pushSession(store, { ...B, session: "0b0b0b0b" }, [(await fixtureRecords("tool_heavy.jsonl", "0b0b0b0b")).slice(0, 4).map((r) => row(r, B.agent))]);
    const r = await run(["run", "--grace", "0", ...s]);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(EXIT.partial);
    // One line each, the key named once, the parser's message on the same line.
    expect(r.out).toContain(`compact: skipped ${key}: not JSON (Unexpected token 'g', "garbage " is not valid JSON); partition not compacted (fix or delete the marker)`);
    expect(r.out).toContain(`gc: skipped ${key}: not JSON (Unexpected token 'g', "garbage " is not valid JSON); nothing deleted in this partition`);
    expect(r.out.filter((l) => l.startsWith("compact: compacted dt=2026-02-11/"))).toHaveLength(1);
    expect(r.out.at(-1)).toBe("run: exit 3 (seal 0, digest 0, compact 3, promote 0, snapshot 0, gc 3)");
    store.close();
  }, 180_000);
});

// Usage right after push: the real lake-collector pushes the bundled samples, writing beside each
// segment the usage rollup of its session directory up to it (@lake/segments writeUsageRollup, named
// by its SHA-256); lake-reader adds a directory's newest rollup instead of reading the rows, with the
// same answer as from the rows alone, and a damaged rollup is named and its directory read from its
// segments. A session grown after its first push gets a second segment with the rollup of both.
import { EXIT } from "@lake/cli";
import { appendFileSync, readdirSync, rmSync, statSync, writeFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { parseKey } from "@lake/layout";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { collectedSamples, collector } from "./support/collected.js";
import { filesUnder } from "./support/fixtures.js";
import { run } from "./support/run.js";

afterAll(cleanupTempDirs);

describe("usage from push's segment rollups", () => {
  it("a fleet right after push is answered from its rollups, equal to its rows; a damaged rollup is named and its rows read", async () => {
    const s = collectedSamples("push-rollup");
    s.collectAndPush();
    const fleet = fileURLToPath(s.store);
    const keys = filesUnder(join(fleet, "sessions")).map((p) => p.slice(fleet.length + 1).split("\\").join("/"));
    const segs = keys.filter((k) => parseKey(k)?.kind === "segment");
    const rollups = keys.filter((k) => parseKey(k)?.kind === "segment-usage");
    expect(segs.length).toBeGreaterThan(1);
    // Both objects of a rollup beside every directory's first segment (each has one segment so far).
    const dirs = new Set(segs.map((k) => k.slice(0, k.lastIndexOf("/"))));
    expect(rollups.length).toBe(2 * dirs.size);
    for (const d of dirs) expect(rollups.filter((k) => k.startsWith(`${d}/seg-000000.usage.`)).length).toBe(2);

    const daily = async (env: NodeJS.ProcessEnv) => {
      const r = await run(["usage", "daily", "--json", "--store", s.store], env);
      return { code: r.code, err: r.err, out: JSON.parse(r.out) as { daily: unknown[]; totals: Record<string, unknown> } };
    };
    const fromRollups = await daily({ LAKE_READER_CACHE: join(s.dir, "cache-1") });
    expect(fromRollups.code).toBe(0);
    expect(fromRollups.out.daily.length).toBeGreaterThan(0);
    expect(Number(fromRollups.out.totals.total_tokens)).toBeGreaterThan(0);

    // A damaged rollup: named, its directory read from its segments, the answer unchanged.
    const json = rollups.find((k) => k.endsWith(".json"))!;
    const path = join(fleet, ...json.split("/"));
    const body = readFileSync(path);
    body[body.length - 2] = body[body.length - 2]! ^ 1;
    writeFileSync(path, body);
    const damaged = await daily({ LAKE_READER_CACHE: join(s.dir, "cache-2") });
    expect(damaged.err).toContain(json);
    // The answer is whole (rows read instead) but a stored object is damaged: the damage exit code.
    expect(damaged.code).toBe(EXIT.partial);
    expect(damaged.out.daily).toEqual(fromRollups.out.daily);
    expect(damaged.out.totals).toEqual(fromRollups.out.totals);

    // Without any rollup: the rows alone give the same answer.
    for (const k of rollups) rmSync(join(fleet, ...k.split("/")));
    const fromRows = await daily({ LAKE_READER_CACHE: join(s.dir, "cache-3") });
    expect(fromRows.code).toBe(0);
    expect(fromRows.out.daily).toEqual(fromRollups.out.daily);
    expect(fromRows.out.totals).toEqual(fromRollups.out.totals);
    expect(readdirSync(fleet).length).toBeGreaterThan(0);
  }, 120_000);

  it("a session grown after its first push: its second segment has the rollup of both, which usage answers from (its rows are not read)", async () => {
    const s = collectedSamples("push-rollup-grow");
    s.collectAndPush();
    const fleet = fileURLToPath(s.store);
    const sid = "258c7280-ae70-4798-800f-63464d01a85d";
    const source = filesUnder(s.projects).find((f) => f.endsWith(`${sid}.jsonl`))!;
    const daily = async (cache: string) => {
      const r = await run(["usage", "daily", "--json", "--store", s.store], { LAKE_READER_CACHE: join(s.dir, cache) });
      return { code: r.code, err: r.err, out: JSON.parse(r.out) as { daily: { date: string; output_tokens: number }[]; totals: Record<string, number> } };
    };
    const before = await daily("cache-0");
    expect(before.code, before.err).toBe(0);
    // One more billed response, on a day of its own.
    const last = JSON.parse(readFileSync(source, "utf8").trimEnd().split("\n").pop()!) as Record<string, unknown>;
    const grown = {
      ...last,
      type: "assistant",
      uuid: "0b1c2d3e-0000-4000-8000-000000000019",
      parentUuid: last.uuid ?? null,
      timestamp: "2026-02-20T10:00:00.000Z",
      requestId: "req_grown_after_push_19",
      message: { model: "claude-opus-4-6", id: "msg_grown_after_push_19", type: "message", role: "assistant", content: [{ type: "text", text: "grown" }], usage: { input_tokens: 7, output_tokens: 1919 } },
    };
    appendFileSync(source, `${JSON.stringify(grown)}\n`);
    collector(["collect", "--root", s.root, "--sources-only", "--source", `claude-code=${s.projects}`]);
    collector(["push", "--root", s.root, "--store", s.store, "--agent", "host-t"]);
    const keys = filesUnder(join(fleet, "sessions")).map((p) => p.slice(fleet.length + 1).split("\\").join("/"));
    const mine = keys.filter((k) => k.includes(`/session=${sid}/`));
    const segs = mine.filter((k) => parseKey(k)?.kind === "segment").sort();
    const dirs = (ks: string[]) => new Set(ks.filter((k) => parseKey(k)?.kind === "segment").map((k) => k.slice(0, k.lastIndexOf("/"))));
    expect(segs.map((k) => k.slice(k.lastIndexOf("/") + 1))).toEqual(["seg-000000.parquet", "seg-000001.parquet"]);
    for (const n of ["000000", "000001"]) expect(mine.filter((k) => k.includes(`/seg-${n}.usage.`)).length).toBe(2);

    const mid = await daily("cache-1");
    expect(mid.code, mid.err).toBe(0);
    expect(mid.out.totals.output_tokens).toBe(before.out.totals.output_tokens! + 1919);
    expect(mid.out.daily.find((d) => d.date === "2026-02-20")?.output_tokens).toBe(1919);
    // Segment 1's rollup was counted from segment 0's carry (push keeps one per open directory in
    // _export/usage/, the newest only). Without the carries, the next rollup downloads the earlier
    // segments instead, to the same sums.
    const carryDir = join(s.root, "_export", "usage");
    const carries = readdirSync(carryDir);
    expect(carries.length).toBe(dirs(keys).size);
    expect(carries.filter((n) => n.endsWith("-1.carry"))).toEqual([expect.stringMatching(new RegExp(`^${sid}-[0-9a-f]{32}-1\\.carry$`))]);
    for (const n of carries) rmSync(join(carryDir, n));
    appendFileSync(source, `${JSON.stringify({ ...grown, uuid: "0b1c2d3e-0000-4000-8000-000000000020", requestId: "req_grown_again_19", message: { ...grown.message, id: "msg_grown_again_19", usage: { input_tokens: 3, output_tokens: 2020 } } })}\n`);
    collector(["collect", "--root", s.root, "--sources-only", "--source", `claude-code=${s.projects}`]);
    collector(["push", "--root", s.root, "--store", s.store, "--agent", "host-t"]);
    const keys2 = filesUnder(join(fleet, "sessions")).map((p) => p.slice(fleet.length + 1).split("\\").join("/"));
    const segs2 = keys2.filter((k) => k.includes(`/session=${sid}/`) && parseKey(k)?.kind === "segment").sort();
    expect(segs2.length).toBe(3);
    expect(keys2.filter((k) => k.includes(`/session=${sid}/seg-000002.usage.`)).length).toBe(2);
    expect(readdirSync(carryDir)).toEqual([carries.find((n) => n.endsWith("-1.carry"))!.replace(/-1\.carry$/, "-2.carry")]);
    const after = await daily("cache-3");
    expect(after.code, after.err).toBe(0);
    expect(after.out.totals.output_tokens).toBe(before.out.totals.output_tokens! + 1919 + 2020);
    // Every segment cut: the answer is the same and whole (exit 0), so the rollup beside segment 2
    // stood for all three and no row of the directory was read.
    for (const k of segs2) {
      const path = join(fleet, ...k.split("/"));
      writeFileSync(path, readFileSync(path).subarray(0, statSync(path).size - 40));
    }
    const cut = await daily("cache-2");
    expect(cut.code, cut.err).toBe(0);
    expect(cut.out).toEqual(after.out);
    // Forgetting the session takes its carry (its usage records) with it.
    collector(["forget", sid, "--root", s.root, "--apply"]);
    expect(readdirSync(carryDir)).toEqual([]);
  }, 120_000);
});

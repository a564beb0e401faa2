// Usage right after push: the real lake-collector pushes the bundled samples, writing beside each
// session directory's first segment its usage rollup (@lake/segments writeUsageRollup, named by its
// SHA-256); lake-reader adds those rollups instead of reading the rows, with the same answer as
// from the rows alone, and a damaged rollup is named and its directory read from its segments.
import { EXIT } from "@lake/cli";
import { readdirSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { parseKey } from "@lake/layout";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { collectedSamples } from "./support/collected.js";
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
    // Both objects of a rollup beside every directory's first segment.
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
});

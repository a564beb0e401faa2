// Compaction under a small DuckDB memory limit: a partition whose rows do not fit in the limit is
// compacted (DuckDB spills to the scratch directory; parts are copied from their segments), and the
// parts hold exactly the input rows, in order, deduplicated by the compaction rule.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DuckDBInstance } from "@duckdb/node-api";
import { compactedMarkerKey, decodeCompacted } from "@lake/layout";
import { readSegment, sqlString, type FleetRow } from "@lake/segments";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { bigPartition } from "./big-partition.js";
import { freshStore, initStore, run } from "./helpers.js";

afterAll(cleanupTempDirs);

const LIMIT_MB = 48;

describe("compact under a memory limit", () => {
  it("compacts a partition larger than --memory-limit, parts equal to the input rows", async () => {
    const url = await freshStore("local", "compact-mem");
    const store = await initStore(url, "f1");
    const dir = tempDir("big");
    const big = await bigPartition(store, dir, { rows: 40_000, dt: "2026-01-15", fleet: "f1" });
    expect(big.sessions).toBeGreaterThan(4);

    // Control: the partition's rows held in DuckDB memory at once (what compaction did before)
    // do not fit under the limit.
    const db = await DuckDBInstance.create(":memory:", { memory_limit: `${LIMIT_MB}MiB`, threads: "1", temp_directory: "" });
    const conn = await db.connect();
    try {
      await expect(conn.run(`CREATE TABLE src AS SELECT * FROM read_parquet([${big.paths.map(sqlString).join(", ")}], file_row_number = true)`)).rejects.toThrow(/Out of Memory/i);
    } finally {
      conn.closeSync();
      db.closeSync();
    }

    const r = await run(["compact", "--store", url, "--memory-limit", String(LIMIT_MB), "--threads", "1", "--part-rows", "4000", "--json"]);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    const rep = JSON.parse(r.out[0]!).partitions[0];
    expect(rep.status).toBe("compacted");
    expect(rep.parts).toBe(Math.ceil(rep.rows / 4000));

    // Expected: every segment's rows in segment order, the first of each (session_id, content_hash) kept
    // (rows without content all kept), runtime and agent from the path.
    const expected: FleetRow[] = [];
    const seen = new Set<string>();
    for (const p of big.paths) {
      for (const row of await readSegment(p, "bronze", { runtime: "claude-code", agent: "host-a" })) {
        const k = `${row.session_id}\0${row.content_hash}`;
        if (row.content_hash !== "" && seen.has(k)) continue;
        seen.add(k);
        expected.push(row);
      }
    }
    const key = compactedMarkerKey({ dt: "2026-01-15", fleet: "f1" });
    const marker = decodeCompacted(key, (await store.get(key))!.body);
    const got: FleetRow[] = [];
    for (const [i, part] of marker.parts.entries()) {
      const path = join(dir, `part-${i}.parquet`);
      await store.download(part.key, path);
      got.push(...(await readSegment(path, "compacted")));
    }
    expect(got.length).toBe(expected.length);
    expect(marker.rows).toBe(expected.length);
    // Row by row, every column (first difference named).
    const text = (r: FleetRow | undefined) => JSON.stringify(r, r === undefined ? undefined : Object.keys(r).sort());
    const at = got.findIndex((g, i) => text(g) !== text(expected[i]));
    expect(at === -1 ? undefined : { at, got: got[at], expected: expected[at] }).toBeUndefined();
  }, 120_000);
});

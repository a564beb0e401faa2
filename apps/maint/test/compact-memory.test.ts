// Compaction under a small DuckDB memory limit: a partition whose rows do not fit in the limit is
// compacted (DuckDB spills to the scratch directory; parts are copied from their segments, never
// sorted), and the parts hold exactly the input rows, in order, deduplicated by the compaction rule —
// in parts of a few thousand rows on one thread, and as one part on two.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DuckDBInstance } from "@duckdb/node-api";
import { PREFIXES, compactedMarkerKey, decodeCompacted } from "@lake/layout";
import { readSegment, sqlString, type FleetRow } from "@lake/segments";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { bigPartition } from "./big-partition.js";
import { freshStore, initStore, run } from "./helpers.js";

afterAll(cleanupTempDirs);

const LIMIT_MB = 48;

describe("compact under a memory limit", () => {
  it("compacts a partition larger than --memory-limit, parts equal to the input rows, in order", async () => {
    const url = await freshStore("local", "compact-mem");
    const store = await initStore(url, "f1");
    const dir = tempDir("big");
    // Copies compaction drops: each session's second segment repeats the last 300 rows of its first
    // (a run at a file's start), and a third segment repeats the whole first (runs between the rows
    // without content, which are kept).
    const big = await bigPartition(store, dir, { rows: 40_000, dt: "2026-01-15", fleet: "f1", overlap: 300, repeatFirst: true });
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
    expect(big.rows - expected.length).toBeGreaterThan(4_000); // copies dropped, in two files of every three

    const compactAs = async (args: string[]): Promise<{ rows: number; parts: number }> => {
      for await (const o of store.listAll(PREFIXES.compacted)) await store.delete(o.key);
      const r = await run(["compact", "--store", url, ...args, "--json"]);
      expect(r.err).toEqual([]);
      expect(r.code).toBe(0);
      const rep = JSON.parse(r.out[0]!).partitions[0];
      expect(rep.status).toBe("compacted");
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
      return { rows: rep.rows, parts: rep.parts };
    };

    // Parts of 4,000 rows, one DuckDB thread.
    const small = await compactAs(["--memory-limit", String(LIMIT_MB), "--threads", "1", "--part-rows", "4000"]);
    expect(small.parts).toBe(Math.ceil(small.rows / 4000));
    // The partition as one part, two threads: its rows are written in the order they are read, never
    // sorted (sorting them took more than 64 MiB: "failed to pin block"), and the copies left out
    // file by file keep that order.
    expect((await compactAs(["--memory-limit", "64", "--threads", "2"])).parts).toBe(1);
  }, 180_000);
});

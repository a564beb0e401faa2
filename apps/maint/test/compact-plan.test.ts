// The SELECT a compacted part is copied from keeps the order DuckDB reads the rows in: DuckDB's plan
// for it has no sort and no join (the operators its order-preservation rules do not cover), and the
// rows come out in (file, row) order, less the runs of dropped rows, with two threads. A DuckDB whose
// optimizer turned the dropped-row filter into a join, or that needed a sort, fails here.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DuckDBInstance } from "@duckdb/node-api";
import { sqlString, writeSegment } from "@lake/segments";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { partSelect } from "../src/internal/compact.js";
import { fixtureRecords } from "./helpers.js";

afterAll(cleanupTempDirs);

describe("a compacted part's SELECT", () => {
  it("has no sort and no join in DuckDB's plan, and gives the rows in read order less the dropped runs", async () => {
    const dir = tempDir("plan");
    const recs = await fixtureRecords("tool_heavy.jsonl", "s-plan");
    // Three segments of the session (thirds of its records), each its own file.
    const third = Math.ceil(recs.length / 3);
    const files: { path: string; runtime: string; agent: string }[] = [];
    for (let i = 0; i < 3; i++) {
      const path = join(dir, `seg-${i}.parquet`);
      // Each row numbered by its place in the session (landed_row): what the part's order is checked by.
      await writeSegment(path, recs.slice(i * third, (i + 1) * third).map((r, j) => ({ ...r, agent: "host-a", landed_seq: i + 1, landed_row: i * third + j })), "bronze");
      files.push({ path, runtime: "claude-code", agent: "host-a" });
    }
    const sizes = [0, 1, 2].map((i) => recs.slice(i * third, (i + 1) * third).length);
    expect(Math.min(...sizes)).toBeGreaterThan(6);
    // Dropped: a run at the start of file 1, one row and a run in file 2; the part runs from row 2 of
    // file 0 to the second-to-last row of file 2 (a run of file 2 reaching past it is clipped).
    const dropped = new Map<number, [number, number][]>([
      [1, [[0, 2]]],
      [2, [[1, 1], [4, sizes[2]! - 1]]],
    ]);
    const lastRn = sizes[2]! - 2;
    const select = partSelect(files, 0, 2, 2, lastRn, dropped);

    const db = await DuckDBInstance.create(":memory:", { threads: "2", preserve_insertion_order: "true" });
    const conn = await db.connect();
    try {
      const plan = (await conn.runAndReadAll(`EXPLAIN COPY (${select}) TO ${sqlString(join(dir, "part.parquet"))} (FORMAT parquet)`)).getRows().map((r) => String(r[1])).join("\n");
      expect(plan).toMatch(/COPY_TO_FILE/);
      expect(plan).not.toMatch(/JOIN|ORDER_BY|SORT|CROSS_PRODUCT|WINDOW/);

      // What comes out: (file, row) in read order, less the dropped runs and outside [row 2 of file 0, lastRn of file 2].
      const got = (await conn.runAndReadAll(`SELECT landed_row FROM (${select})`)).getRowObjectsJS().map((r) => Number(r.landed_row));
      const want: number[] = [];
      for (let f = 0; f < 3; f++) {
        for (let rn = 0; rn < sizes[f]!; rn++) {
          if (f === 0 && rn < 2) continue;
          if (f === 2 && rn > lastRn) continue;
          if ((dropped.get(f) ?? []).some(([from, to]) => rn >= from && rn <= to)) continue;
          want.push(f * third + rn);
        }
      }
      expect(got).toEqual(want);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });
});

// DuckDB writes a Parquet row group from memory, whole (that buffer does not spill): at its default
// of 122,880 rows a group of wide rows alone outgrows a small memory_limit. copyParquet's
// rowGroupRows, sized by rowGroupRowsFor from the rows' size (averageRowBytes, read from the
// footers), keeps each group under the limit; compaction uses them.
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { MAX_ROW_GROUP_ROWS, MIN_ROW_GROUP_ROWS, averageRowBytes, copyParquet, rowGroupRowsFor, sqlString } from "../src/index.js";

afterAll(cleanupTempDirs);

const LIMIT = 64 * 1024 * 1024;
const ROWS = 120_000;

describe("row groups sized to the memory limit", () => {
  it("rowGroupRowsFor keeps a group to an eighth of the limit, within DuckDB's bounds", () => {
    expect(rowGroupRowsFor(1_000, LIMIT)).toBe(Math.floor(LIMIT / 8 / 1_000));
    expect(rowGroupRowsFor(10, LIMIT)).toBe(MAX_ROW_GROUP_ROWS);
    expect(rowGroupRowsFor(10_000_000, LIMIT)).toBe(MIN_ROW_GROUP_ROWS);
    expect(rowGroupRowsFor(0, LIMIT)).toBe(MAX_ROW_GROUP_ROWS);
  });

  it("a COPY of wide rows runs out of memory at DuckDB's default group size and fits with rowGroupRowsFor", async () => {
    const dir = tempDir("row-groups");
    const src = join(dir, "src.parquet");
    // ~1.3 KB rows that do not compress away in memory: 120,000 of them are ~150 MB (in small groups
    // here, so that reading them back needs little memory).
    const free = await DuckDBInstance.create(":memory:", { threads: "1" });
    const f = await free.connect();
    try {
      await f.run(`COPY (SELECT i, md5(i::VARCHAR) || repeat(md5((i * 7)::VARCHAR), 40) AS content FROM range(${ROWS}) t(i)) TO ${sqlString(src)} (FORMAT parquet, ROW_GROUP_SIZE 8192)`);
    } finally {
      f.closeSync();
      free.closeSync();
    }
    const db = await DuckDBInstance.create(":memory:", { memory_limit: `${LIMIT / 1024 / 1024}MiB`, threads: "1", preserve_insertion_order: "false", temp_directory: join(dir, "tmp") });
    const conn = await db.connect();
    try {
      const rowBytes = await averageRowBytes(conn, [src]);
      expect(rowBytes).toBeGreaterThan(1_200);
      expect(rowBytes).toBeLessThan(1_500);
      const select = `SELECT * FROM read_parquet(${sqlString(src)})`;
      // Control: the default group (all 120,000 rows) does not fit.
      await expect(copyParquet(conn, select, join(dir, "default.parquet"))).rejects.toThrow(/Out of Memory/);
      const rows = rowGroupRowsFor(rowBytes, LIMIT);
      const info = await copyParquet(conn, select, join(dir, "sized.parquet"), { rowGroupRows: rows });
      const meta = (await conn.runAndReadAll(`SELECT num_rows::BIGINT AS n, num_row_groups::BIGINT AS g FROM parquet_file_metadata(${sqlString(info.path)})`)).getRowObjectsJS()[0]!;
      expect(Number(meta.n)).toBe(ROWS);
      // ROW_GROUP_SIZE is DuckDB's least rows per group (a group ends at a chunk's end): at most
      // ROWS / rows groups, and many more than the default's one.
      expect(Number(meta.g)).toBeGreaterThan(ROWS / rows / 2);
      expect(Number(meta.g)).toBeLessThanOrEqual(Math.ceil(ROWS / rows));
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  }, 60_000);
});

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, describe, expect, it } from "vitest";
import { canonicalize, SEGMENT_COLUMNS } from "@lake/events";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { SegmentWriter, isSegmentError, readSegment, sqlString, writeSegment, type FleetRow } from "../src/index.js";

afterAll(cleanupTempDirs);

function rows(n: number, agent = "host-a"): FleetRow[] {
  const out: FleetRow[] = [];
  for (let i = 0; i < n; i++) {
    const rec = canonicalize(
      {
        runtime: "claude-code",
        session_id: "s1",
        stream: i % 3 === 0 ? "main" : "agent-a1",
        record_id: `r${i}`,
        ts: new Date(Date.UTC(2026, 1, 10, 21, 0, i)).toISOString(),
        kind: i % 2 ? "assistant" : "tool_result",
        text: `line ${i} it's "quoted"`,
        ...(i % 2 ? { usage: { input_tokens: i, output_tokens: 2 * i, ...(i % 4 === 1 ? { reasoning_tokens: 0 } : {}) }, usage_key: `req${i}` } : { is_error: i % 4 === 0, exit_code: i % 5 }),
        source_path: "p/s1.jsonl",
        source_offset: i * 100,
        source_line: i + 1,
        adapter: "claude-code",
        adapter_version: "1",
      },
      i % 7 === 0 ? ["github-pat", "aws-access-key-id"] : [],
    );
    out.push({ ...rec, agent, landed_seq: 1 + Math.floor(i / 10), landed_row: i % 10 });
  }
  return out;
}

describe("segments", () => {
  it("round-trips every column through a compacted part", async () => {
    const dir = tempDir("seg");
    const input = rows(50);
    const info = await writeSegment(join(dir, "part-000000.parquet"), input, "compacted");
    expect(info.rows).toBe(50);
    expect(info.sha256).toMatch(/^[0-9a-f]{64}$/);
    const back = await readSegment(info.path, "compacted");
    expect(back).toEqual(input);
  });

  it("keeps runtime and agent out of bronze files and gets them back from the Hive path", async () => {
    const dir = tempDir("seg");
    const sessionDir = join(dir, "sessions/dt=2026-02-10/fleet=f1/runtime=claude-code/agent=host-a/session=s1");
    mkdirSync(sessionDir, { recursive: true });
    const w = await SegmentWriter.open();
    try {
      await w.write(join(sessionDir, "seg-000000.parquet"), rows(20).slice(0, 10), "bronze");
      await w.write(join(sessionDir, "seg-000001.parquet"), rows(20).slice(10), "bronze");
    } finally {
      w.close();
    }
    const db = await DuckDBInstance.create(":memory:");
    const conn = await db.connect();
    const glob = sqlString(join(dir, "sessions/dt=*/fleet=*/runtime=*/agent=*/session=*/seg-*.parquet"));
    const cols = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${glob}, hive_partitioning = true)`)).getRowObjectsJS().map((r) => r.column_name);
    expect(cols).toEqual([...SEGMENT_COLUMNS.map((c) => c.name), "agent", "dt", "fleet", "runtime", "session"]);
    const r = (await conn.runAndReadAll(`SELECT runtime, agent, count(*) AS n, sum(output_tokens) AS out FROM read_parquet(${glob}, hive_partitioning = true) GROUP BY ALL`)).getRowObjectsJS();
    expect(r).toEqual([{ runtime: "claude-code", agent: "host-a", n: 20n, out: BigInt(rows(20).reduce((a, x) => a + (x.usage?.output_tokens ?? 0), 0)) }]);
    const meta = (await conn.runAndReadAll(`SELECT DISTINCT compression FROM parquet_metadata(${glob})`)).getRowObjectsJS();
    expect(meta.map((m) => m.compression)).toEqual(["ZSTD"]);
    conn.closeSync();
    db.closeSync();
    const back = await readSegment(join(sessionDir, "seg-000001.parquet"), "bronze", { runtime: "claude-code", agent: "host-a" });
    expect(back).toEqual(rows(20).slice(10));
  });

  it("refuses a row without a required column, naming the file", async () => {
    const dir = tempDir("seg");
    const bad = { ...rows(1)[0]!, session_id: undefined } as unknown as FleetRow;
    await expect(writeSegment(join(dir, "x.parquet"), [bad], "compacted")).rejects.toSatisfy((e: unknown) => isSegmentError(e) && /x\.parquet: .*session_id/.test((e as Error).message));
  });
});

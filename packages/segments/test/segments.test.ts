import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, describe, expect, it } from "vitest";
import { canonicalize, COMPACTED_COLUMNS, SEGMENT_COLUMNS, USAGE_KEYS, duckdbCreateTable, type Column } from "@lake/events";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { SegmentWriter, checkContentHash, duckdb, isSegmentError, readLandedSeqs, readSegment, sqlString, usageRecordsOfRows, usageRollupOf, writeSegment, writeUsageRollupOf, type FleetRow, type RecordLine, type SegmentLayout } from "../src/index.js";

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

  it("reads a segment's landed files and row count from its landed_seq column alone, as reading its rows gives them", async () => {
    const dir = tempDir("seg");
    const { landed_seq: _seq, landed_row: _row, ...unplaced } = rows(36)[35]!;
    const input: FleetRow[] = [...rows(35), unplaced];
    const info = await writeSegment(join(dir, "seg-000000.parquet"), input, "bronze");
    const back = await readSegment(info.path, "bronze", { runtime: "claude-code", agent: "host-a" });
    const seqs = [...new Set(back.map((r) => r.landed_seq).filter((s) => s !== undefined))].sort((a, b) => a - b);
    expect(seqs).toEqual([1, 2, 3, 4]);
    expect(await readLandedSeqs(info.path)).toEqual({ seqs, rows: 36 });
    await expect(readLandedSeqs(join(dir, "missing.parquet"))).rejects.toSatisfy((e: unknown) => isSegmentError(e) && (e as Error).message.includes("missing.parquet"));
  });

  it("refuses a row without a required column, naming the file", async () => {
    const dir = tempDir("seg");
    const bad = { ...rows(1)[0]!, session_id: undefined } as unknown as FleetRow;
    await expect(writeSegment(join(dir, "x.parquet"), [bad], "compacted")).rejects.toSatisfy((e: unknown) => isSegmentError(e) && /x\.parquet: .*session_id/.test((e as Error).message));
  });

  it("writes the values, order and Parquet schema a value-by-value DuckDB Appender writes, from rows and from JSON lines", async () => {
    const dir = tempDir("seg");
    const odd = ["lone \ud800 high", "lone \udc00 low", "pair 😀 \u0000 nul \u001f", 'tab\t"q" \\ back \\ud800', "é ü 中文", "x".repeat((16 << 20) + 10)];
    const input = rows(40);
    odd.forEach((text, i) => (input[i] = { ...input[i]!, text }));
    input[0] = { ...input[0]!, ts: "2026-02-10T21:00:00+02:00" };
    input[1] = { ...input[1]!, ts: "not a time" };
    for (const layout of ["bronze", "compacted"] as const) {
      const ref = join(dir, `ref-${layout}.parquet`);
      await appenderReference(ref, input, layout);
      const w = await SegmentWriter.open();
      try {
        await w.write(join(dir, `rows-${layout}.parquet`), input, layout);
        const lines: RecordLine[] = input.map((r) => ({ json: JSON.stringify(r), tsMs: r.ts === undefined ? null : Date.parse(r.ts), landed_seq: r.landed_seq, landed_row: r.landed_row }));
        await w.writeLines(join(dir, `lines-${layout}.parquet`), lines, layout, { agent: "host-a" });
        // The same lines as their UTF-8 bytes (a landed file's lines, never decoded): the same file.
        await w.writeLines(join(dir, `bytes-${layout}.parquet`), lines.map((l) => ({ ...l, json: Buffer.from(l.json as string) })), layout, { agent: "host-a" });
      } finally {
        w.close();
      }
      for (const f of [`rows-${layout}.parquet`, `lines-${layout}.parquet`, `bytes-${layout}.parquet`]) expect(await sameFile(ref, join(dir, f))).toEqual({ schema: true, rows: 40, differing: 0 });
      expect(readFileSync(join(dir, `bytes-${layout}.parquet`)).equals(readFileSync(join(dir, `lines-${layout}.parquet`)))).toBe(true);
    }
  });

  it("writes a rows file of many buffers (written while the next fills) as the Appender writes the rows, fills them again for the next write, and waits for them when a row is refused", async () => {
    const dir = tempDir("seg");
    // ~20 MB of lines: five buffers and more, so writes wait for room and buffers are filled again.
    const input = rows(4000).map((r, i) => ({ ...r, text: `${i} ${"abcdefghij".repeat(500)}` }));
    const ref = join(dir, "ref.parquet");
    await appenderReference(ref, input, "compacted");
    const lines: RecordLine[] = input.map((r) => ({ json: Buffer.from(JSON.stringify(r)), tsMs: Date.parse(r.ts!), landed_seq: r.landed_seq, landed_row: r.landed_row }));
    const w = await SegmentWriter.open();
    try {
      await w.writeLines(join(dir, "many.parquet"), lines, "compacted", { agent: "host-a" });
      // The writer's buffers, filled by that write, are filled again by the next: the same file a fresh writer writes.
      await w.write(join(dir, "small.parquet"), rows(40), "compacted");
      const fresh = await SegmentWriter.open();
      try {
        await fresh.write(join(dir, "small-fresh.parquet"), rows(40), "compacted");
      } finally {
        fresh.close();
      }
      expect(readFileSync(join(dir, "small.parquet")).equals(readFileSync(join(dir, "small-fresh.parquet")))).toBe(true);
      // A line with no agent past the first buffers: refused, naming the column; the rows file is gone.
      const refused = lines.map((l, i) => (i === 3000 ? l : { ...l, agent: "host-a" }));
      await expect(w.writeLines(join(dir, "refused.parquet"), refused, "compacted")).rejects.toSatisfy((e: unknown) => isSegmentError(e) && /refused\.parquet: .*column agent/.test((e as Error).message));
    } finally {
      w.close();
    }
    expect(await sameFile(ref, join(dir, "many.parquet"))).toEqual({ schema: true, rows: 4000, differing: 0 });
    expect(readdirSync(dir).sort()).toEqual(["many.parquet", "ref.parquet", "small-fresh.parquet", "small.parquet"]);
  });

  it("onCopy is called once, with the rows file whole and the segment not yet sealed; a throw from it fails the write once the COPY is done, leaving the segment and no rows file", async () => {
    const dir = tempDir("seg");
    const input = rows(300);
    const lines: RecordLine[] = input.map((r) => ({ json: Buffer.from(JSON.stringify(r)), tsMs: Date.parse(r.ts!), landed_seq: r.landed_seq, landed_row: r.landed_row }));
    const w = await SegmentWriter.open();
    try {
      const seen: { rowsLines: number; sealed: boolean }[] = [];
      const info = await w.writeLines(join(dir, "a.parquet"), lines, "bronze", {
        onCopy: () => {
          const rowsFile = readdirSync(dir).filter((f) => f.startsWith("a.parquet.rows-"));
          expect(rowsFile.length).toBe(1);
          // The segment is sealed (its content hash recorded) on this thread, after the COPY: not yet.
          let sealed: boolean;
          try {
            sealed = checkContentHash(join(dir, "a.parquet")).status === "ok";
          } catch {
            sealed = false;
          }
          seen.push({ rowsLines: readFileSync(join(dir, rowsFile[0]!), "utf8").split("\n").filter(Boolean).length, sealed });
        },
      });
      expect(seen).toEqual([{ rowsLines: 300, sealed: false }]);
      expect(info.rows).toBe(300);
      await expect(w.writeLines(join(dir, "b.parquet"), lines, "bronze", { onCopy: () => { throw new Error("caller failed"); } })).rejects.toThrow(/caller failed/);
    } finally {
      w.close();
    }
    expect(readdirSync(dir).sort()).toEqual(["a.parquet", "b.parquet"]);
    expect(checkContentHash(join(dir, "b.parquet")).status).toBe("ok");
  });

  it("usageRollupOf gives the bytes writeUsageRollupOf writes, named as it names them", () => {
    const dir = tempDir("seg");
    const records = usageRecordsOfRows(rows(30), "claude-code");
    const bodies = usageRollupOf(records);
    const written = writeUsageRollupOf(records, dir);
    expect(bodies.rows).toBeGreaterThan(0);
    expect(bodies.rows).toBe(written.rows);
    expect(bodies.keys.count).toBe(written.keys.count);
    for (const f of ["json", "keys"] as const) {
      expect(join(dir, bodies[f].name)).toBe(written[f].path);
      expect(Buffer.from(bodies[f].body).equals(readFileSync(written[f].path))).toBe(true);
      expect(bodies[f].sha256).toBe(written[f].sha256);
    }
  });

  it("writes segments side by side on its connections, each the file one connection writes", async () => {
    const dir = tempDir("seg");
    const input = rows(300);
    const parts = [0, 1, 2, 3, 4].map((i) => input.slice(i * 60, i * 60 + 60));
    const one = await SegmentWriter.open();
    const two = await SegmentWriter.open({ connections: 2 });
    try {
      for (const [i, p] of parts.entries()) await one.write(join(dir, `one-${i}.parquet`), p, "bronze");
      // Five writes at once on two connections: three wait for one to be given back.
      const infos = await Promise.all(parts.map((p, i) => two.write(join(dir, `two-${i}.parquet`), p, "bronze")));
      expect(infos.map((x) => x.rows)).toEqual([60, 60, 60, 60, 60]);
    } finally {
      one.close();
      two.close();
    }
    for (const i of parts.keys()) expect(readFileSync(join(dir, `two-${i}.parquet`)).equals(readFileSync(join(dir, `one-${i}.parquet`)))).toBe(true);
    // A closed writer refuses, naming the file.
    await expect(two.write(join(dir, "closed.parquet"), parts[0]!, "bronze")).rejects.toSatisfy((e: unknown) => isSegmentError(e) && /closed\.parquet: .*closed/.test((e as Error).message));
  });

  it("refuses a line that is not JSON, naming the file", async () => {
    const dir = tempDir("seg");
    const w = await SegmentWriter.open();
    try {
      await expect(w.writeLines(join(dir, "y.parquet"), [{ json: "{not json" }], "bronze")).rejects.toSatisfy((e: unknown) => isSegmentError(e) && /y\.parquet: /.test((e as Error).message));
    } finally {
      w.close();
    }
  });
});

/** The writer as it was: a DuckDB Appender fed value by value into a table, then COPY (the reference). */
async function appenderReference(path: string, input: readonly FleetRow[], layout: SegmentLayout): Promise<void> {
  const D = duckdb();
  const cols: readonly Column[] = layout === "bronze" ? SEGMENT_COLUMNS : COMPACTED_COLUMNS;
  const usage = new Set<string>(USAGE_KEYS);
  const db = await D.DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  try {
    await conn.run(duckdbCreateTable("t", [], cols));
    const app = await conn.createAppender("t");
    for (const row of input) {
      for (const col of cols) {
        const v = usage.has(col.name) ? (row.usage as Record<string, number | undefined> | undefined)?.[col.name] : (row as unknown as Record<string, unknown>)[col.name];
        if (v === undefined || v === null) {
          if (col.type === "varchar[]") app.appendList(D.listValue([]), D.LIST(D.VARCHAR));
          else app.appendNull();
          continue;
        }
        if (col.type === "varchar") app.appendVarchar(String(v));
        else if (col.type === "boolean") app.appendBoolean(Boolean(v));
        else if (col.type === "integer") app.appendInteger(Number(v));
        else if (col.type === "bigint") app.appendBigInt(BigInt(v as number));
        else if (col.type === "double") app.appendDouble(Number(v));
        else if (col.type === "timestamp") {
          const ms = Date.parse(String(v));
          if (Number.isNaN(ms)) app.appendNull();
          else app.appendTimestamp(D.timestampValue(BigInt(ms) * 1000n));
        } else app.appendList(D.listValue((v as unknown[]).map(String)), D.LIST(D.VARCHAR));
      }
      app.endRow();
    }
    app.closeSync();
    await conn.run(`COPY t TO ${sqlString(path)} (FORMAT parquet, COMPRESSION zstd)`);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** Whether two Parquet files have the same schema, and how many rows differ in place (row by row, in file order). */
async function sameFile(a: string, b: string): Promise<{ schema: boolean; rows: number; differing: number }> {
  const db = await DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  try {
    const schema = async (f: string) => JSON.stringify((await conn.runAndReadAll(`SELECT name, type, repetition_type, converted_type, logical_type FROM parquet_schema(${sqlString(f)})`)).getRowObjectsJson());
    const n = (await conn.runAndReadAll(`SELECT count(*) FROM read_parquet(${sqlString(a)})`)).getRows()[0]![0];
    const numbered = (f: string) => `(SELECT row_number() OVER () AS n, to_json(x) AS j FROM read_parquet(${sqlString(f)}) x)`;
    const differing = (await conn.runAndReadAll(`SELECT count(*) FROM ${numbered(a)} p FULL JOIN ${numbered(b)} q USING (n) WHERE p.j IS DISTINCT FROM q.j`)).getRows()[0]![0];
    return { schema: (await schema(a)) === (await schema(b)), rows: Number(n), differing: Number(differing) };
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

import { spawnSync } from "node:child_process";
import { copyFileSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createHash, randomInt } from "node:crypto";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, describe, expect, it } from "vitest";
import { canonicalize } from "@lake/events";
import { loadedModules, MODULES_IMPORT } from "@lake/tooling/modules";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { CONTENT_HASH_KEY, CONTENT_HASH_PLACEHOLDER, CheckedFiles, SegmentWriter, checkContentHash, checkFileSha256, copyParquet, readSegment, type FleetRow } from "../src/index.js";
import * as light from "../src/hash.js";
import { CopyConnection } from "../src/internal/duckdb.js";

afterAll(cleanupTempDirs);

const VECTOR = new URL("./vectors/hashed-segment.parquet", import.meta.url).pathname;
const EXPECT = JSON.parse(readFileSync(new URL("./vectors/hashed-segment.json", import.meta.url), "utf8")) as { content_hash: string; file_sha256: string; hash_offset: number; rows: number; bytes: number };

function rows(n: number): FleetRow[] {
  return Array.from({ length: n }, (_, i) => ({
    ...canonicalize({ runtime: "codex", session_id: "s1", stream: "main", record_id: `r${i}`, ts: new Date(Date.UTC(2026, 1, 10, 0, 0, i)).toISOString(), kind: "assistant", text: `t${i} ${CONTENT_HASH_KEY}`, adapter: "codex", adapter_version: "1", source_path: "p/s.jsonl", source_offset: i * 10, source_line: i + 1 }, []),
    agent: "a",
    landed_seq: 1,
    landed_row: i,
  }));
}

function flip(buf: Buffer, bit: number): Buffer {
  const bad = Buffer.from(buf);
  bad[bit >> 3] = bad[bit >> 3]! ^ (1 << (bit & 7));
  return bad;
}

describe("the content hash in a Parquet file's footer (lake.sha256)", () => {
  it("golden vector: the footer records the SHA-256 of the bytes with the value read as 64 ASCII zeros", () => {
    const bytes = readFileSync(VECTOR);
    expect(bytes.length).toBe(EXPECT.bytes);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(EXPECT.file_sha256);
    expect(bytes.subarray(EXPECT.hash_offset, EXPECT.hash_offset + 64).toString("latin1")).toBe(EXPECT.content_hash);
    // The rule, by hand: placeholder in, hash, compare.
    const zeroed = Buffer.from(bytes);
    zeroed.write(CONTENT_HASH_PLACEHOLDER, EXPECT.hash_offset, "latin1");
    expect(createHash("sha256").update(zeroed).digest("hex")).toBe(EXPECT.content_hash);
    expect(checkContentHash(VECTOR)).toEqual({ status: "ok", sha256: EXPECT.content_hash });
    expect(light.checkContentHash(VECTOR)).toEqual({ status: "ok", sha256: EXPECT.content_hash });
  });

  it("every file the writer and copyParquet write records its hash, and still reads as Parquet", async () => {
    const dir = tempDir("seg-hash");
    const w = await SegmentWriter.open();
    try {
      for (const layout of ["bronze", "compacted"] as const) {
        const path = join(dir, `${layout}.parquet`);
        const info = await w.write(path, rows(50), layout);
        expect(checkContentHash(path)).toEqual({ status: "ok", sha256: info.contentHash });
        expect(checkFileSha256(path, info.sha256)).toEqual({ status: "ok", sha256: info.sha256 });
        expect((await readSegment(path, layout, { runtime: "codex", agent: "a" })).map((r) => r.record_id)).toEqual(rows(50).map((r) => r.record_id));
      }
    } finally {
      w.close();
    }
    const db = await DuckDBInstance.create(":memory:");
    const c = await db.connect();
    try {
      const path = join(dir, "q.parquet");
      const info = await copyParquet(c, "SELECT range AS a FROM range(1000)", path, { zstdLevel: 9 });
      expect(checkContentHash(path)).toEqual({ status: "ok", sha256: info.contentHash });
      expect(checkFileSha256(path, info.sha256)).toEqual({ status: "ok", sha256: info.sha256 });
      expect(info.bytes).toBe(statSync(path).size);
      const back = await c.runAndReadAll(`SELECT sum(a)::BIGINT AS s FROM read_parquet('${path}')`);
      expect(Number(back.getRowObjectsJS()[0]!.s)).toBe(499500);
    } finally {
      c.closeSync();
      db.closeSync();
    }
  });

  it("the writer's own connection (the native bindings) writes the bytes a node-api connection writes", async () => {
    const dir = tempDir("seg-hash");
    // Over 1 MiB (md5 hex hardly compresses): the seal reads the file in more than one chunk.
    const select = "SELECT range AS a, md5(range::VARCHAR) AS h FROM range(60000)";
    const own = await CopyConnection.open({ threads: "1" });
    const db = await DuckDBInstance.create(":memory:", { threads: "1" });
    const c = await db.connect();
    try {
      const a = await copyParquet(own, select, join(dir, "own.parquet"));
      const b = await copyParquet(c, select, join(dir, "api.parquet"));
      expect(a.bytes).toBeGreaterThan(1 << 20);
      expect({ ...a, path: "" }).toEqual({ ...b, path: "" });
      expect(readFileSync(a.path).equals(readFileSync(b.path))).toBe(true);
      expect(checkFileSha256(a.path, a.sha256)).toEqual({ status: "ok", sha256: a.sha256 });
      await expect(own.run("SELECT * FROM no_such_table")).rejects.toThrow(/no_such_table/);
    } finally {
      own.close();
      c.closeSync();
      db.closeSync();
    }
  });

  it("the writer's connection loads the one native module installed, without detect-libc or node:child_process; node-api loaded after it works on the same", () => {
    const duckdb = fileURLToPath(new URL("../dist/internal/duckdb.js", import.meta.url));
    const run = (then: string) => {
      const code = `const m = await import(${JSON.stringify(duckdb)}); const c = await m.CopyConnection.open({ threads: "1" }); await c.run("SELECT 1"); c.close(); ${then}`;
      const r = spawnSync(process.execPath, ["--import", MODULES_IMPORT, "--input-type=module", "-e", code], { encoding: "utf8" });
      const { modules, stderr } = loadedModules(r.stderr);
      expect(r.status, stderr).toBe(0);
      return { modules, stdout: r.stdout };
    };
    const copy = run("");
    expect(copy.modules.filter((u) => u.endsWith("/duckdb.node"))).toHaveLength(1);
    expect(copy.modules.filter((u) => u === "node:child_process" || u.includes("/detect-libc/"))).toEqual([]);
    const both = run(`const db = await m.duckdb().DuckDBInstance.create(":memory:"); const conn = await db.connect(); console.log(String((await conn.runAndReadAll("SELECT 6 * 7")).getRows()[0][0])); conn.closeSync(); db.closeSync();`);
    expect(both.stdout.trim()).toBe("42");
    expect(both.modules.filter((u) => u.endsWith("/duckdb.node"))).toEqual(copy.modules.filter((u) => u.endsWith("/duckdb.node")));
  });

  it("a single bit flipped anywhere (64 random positions, the first, the last, inside the hash and the key) is damage", () => {
    const dir = tempDir("seg-hash-flip");
    const good = readFileSync(VECTOR);
    const key = good.lastIndexOf(Buffer.from(CONTENT_HASH_KEY));
    const bits = [0, good.length * 8 - 1, EXPECT.hash_offset * 8 + 3, key * 8 + 1, (good.length - 6) * 8, ...Array.from({ length: 64 }, () => randomInt(good.length * 8))];
    for (const bit of bits) {
      const path = join(dir, `flip-${bit}.parquet`);
      writeFileSync(path, flip(good, bit));
      const r = checkContentHash(path);
      expect(r.status, `bit ${bit}`).toBe("damaged");
      expect(r.status === "damaged" && !r.reason.includes("\n")).toBe(true);
    }
  });

  it("a cut file, a file with no recorded hash, a placeholder left in, and a non-Parquet file are damaged, with the reason", async () => {
    const dir = tempDir("seg-hash-cut");
    const good = readFileSync(VECTOR);
    for (const n of [good.length - 1, good.length - 100, 100, 8, 0]) {
      const cut = join(dir, `cut-${n}.parquet`);
      writeFileSync(cut, good.subarray(0, n));
      expect(checkContentHash(cut), `cut at ${n}`).toMatchObject({ status: "damaged", reason: expect.stringMatching(/PAR1|too short|footer/) });
    }
    const text = join(dir, "text.parquet");
    writeFileSync(text, "hello, this is not parquet at all");
    expect(checkContentHash(text)).toMatchObject({ status: "damaged", reason: expect.stringMatching(/not a Parquet file/) });
    const db = await DuckDBInstance.create(":memory:");
    const c = await db.connect();
    const plain = join(dir, "plain.parquet");
    await c.run(`COPY (SELECT 1 AS a) TO '${plain}' (FORMAT parquet)`);
    c.closeSync();
    db.closeSync();
    expect(checkContentHash(plain)).toMatchObject({ status: "damaged", reason: expect.stringMatching(/no content hash recorded/) });
    const placeholder = join(dir, "placeholder.parquet");
    const p = Buffer.from(good);
    p.write(CONTENT_HASH_PLACEHOLDER, EXPECT.hash_offset, "latin1");
    writeFileSync(placeholder, p);
    expect(checkContentHash(placeholder)).toMatchObject({ status: "damaged", reason: expect.stringMatching(/placeholder/) });
    expect(checkContentHash(join(dir, "missing.parquet"))).toMatchObject({ status: "damaged", reason: expect.stringMatching(/ENOENT/) });
  });

  it("CheckedFiles remembers a good check by inode, size and times, forgets it when the file changes, never remembers damage", () => {
    const dir = tempDir("seg-hash-cache");
    const path = join(dir, "seg.parquet");
    copyFileSync(VECTOR, path);
    const cacheFile = join(dir, "cache", "checked.json");
    const a = CheckedFiles.open(cacheFile);
    expect(a.content(path)).toEqual({ status: "ok", sha256: EXPECT.content_hash });
    a.save();
    const saved = JSON.parse(readFileSync(cacheFile, "utf8")) as { format: number; files: Record<string, string> };
    expect(saved.format).toBe(1);
    const st = statSync(path, { bigint: true });
    expect(saved.files[`c:${path}`]).toBe(`${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${EXPECT.content_hash}`);
    // Damage the file but keep its size and modification time: the change time still differs.
    const { mtime } = statSync(path);
    writeFileSync(path, flip(readFileSync(VECTOR), 4000));
    utimesSync(path, mtime, mtime);
    const b = CheckedFiles.open(cacheFile);
    expect(b.content(path).status).toBe("damaged");
    b.save();
    expect((JSON.parse(readFileSync(cacheFile, "utf8")) as { files: Record<string, string> }).files[`c:${path}`]).toBeUndefined();
    // Unchanged file, cached: the check does not read it (a cache entry made up for it is believed).
    copyFileSync(VECTOR, path);
    const c = CheckedFiles.open(cacheFile);
    expect(c.content(path).status).toBe("ok");
    c.save();
    const s2 = statSync(path, { bigint: true });
    writeFileSync(cacheFile, JSON.stringify({ format: 1, files: { [`c:${path}`]: `${s2.dev}:${s2.ino}:${s2.size}:${s2.mtimeNs}:${s2.ctimeNs}:${"a".repeat(64)}` } }));
    expect(CheckedFiles.open(cacheFile).content(path)).toEqual({ status: "ok", sha256: "a".repeat(64) });
    // A whole-file check is remembered with the hash it matched, and asked for another hash it reads again.
    const d = CheckedFiles.open(join(dir, "other.json"));
    expect(d.file(path, EXPECT.file_sha256).status).toBe("ok");
    expect(d.file(path, "b".repeat(64)).status).toBe("damaged");
    // A garbage cache file is an empty cache.
    writeFileSync(cacheFile, "{not json");
    expect(CheckedFiles.open(cacheFile).content(path)).toEqual({ status: "ok", sha256: EXPECT.content_hash });
  });
});

import { afterAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { crc32 } from "node:zlib";
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { decodeIndex, encodeBlock, encodeIndexHeader, ENTRY_STRING_FIELDS, INDEX_SCHEMA, isStoreError, openSession, readIndex, verify, type IndexBlock } from "../src/index.js";
import { convert, jline, src } from "./helpers.js";

afterAll(cleanupTempDirs);

const vecDir = new URL("./vectors/", import.meta.url);
const vector = Buffer.from(readFileSync(new URL("entries-v2.hex", vecDir), "utf8").replace(/\s+/g, ""), "hex");
const vectorJson = JSON.parse(readFileSync(new URL("entries-v2.json", vecDir), "utf8")) as IndexBlock;
/** One block per landed file: the vector's content as the index writes it. */
const blocksOf = (v: IndexBlock): Buffer[] => v.files.map((f) => encodeBlock({ files: [f], entries: v.entries.filter((e) => e.seq === f.seq) }).bytes);

describe("entries.bin format (golden vector)", () => {
  it("encodes the vector's content to exactly the vector's bytes", () => {
    expect(Buffer.concat([encodeIndexHeader(), ...blocksOf(vectorJson)]).equals(vector)).toBe(true);
    expect(createHash("sha256").update(vector).digest("hex")).toBe("d115e9894be5e165f49cf744d28fcf8a475620102a2af8ec2b87fda8ab7e009a");
  });
  it("decodes the vector to its content", () => {
    const d = decodeIndex(vector, "entries-v2.hex");
    expect(d.files).toEqual(vectorJson.files);
    expect(d.entries).toEqual(vectorJson.entries);
    expect(d.blocks).toBe(2);
    expect(d.strings).toBe(14);
  });
  it("a block holds one landed file, its entries its rows in order, blocks in sequence order", () => {
    expect(() => encodeBlock(vectorJson)).toThrow(/one landed file, not 2/);
    const [f1, f2] = vectorJson.files as [IndexBlock["files"][number], IndexBlock["files"][number]];
    const [e1, e2] = vectorJson.entries as [IndexBlock["entries"][number], IndexBlock["entries"][number]];
    expect(() => encodeBlock({ files: [f1], entries: [e2, e1] })).toThrow(/entry 0 of file .* is seq 1 row 1/);
    expect(() => encodeBlock({ files: [f1], entries: [e1] })).toThrow(/2 records and 1 entries/);
    // Blocks out of sequence order are not an index this store wrote.
    const [b1, b2] = blocksOf(vectorJson) as [Buffer, Buffer];
    expect(() => decodeIndex(Buffer.concat([encodeIndexHeader(), b2, b1]), "swapped")).toThrow(/swapped: block at byte \d+ is seq 1, after seq 2/);
    void f2;
  });
  it("every single-byte flip and every truncation is detected (a cut between blocks by index.state's counts)", () => {
    for (let i = 0; i < vector.length; i++) {
      const b = Buffer.from(vector);
      b[i] = b[i]! ^ 0x01;
      expect(() => decodeIndex(b, "flip"), `flip at ${i}`).toThrow();
    }
    const between = 8 + blocksOf(vectorJson)[0]!.length;
    for (let n = 9; n < vector.length; n++) {
      if (n === between) expect(decodeIndex(vector.subarray(0, n), "cut").blocks).toBe(1);
      else expect(() => decodeIndex(vector.subarray(0, n), "cut"), `cut at ${n}`).toThrow();
    }
    // A string ref past the block's table, under a CRC-32 that holds, is named with its entry and field.
    const block = blocksOf(vectorJson)[0]!;
    const nfields = ENTRY_STRING_FIELDS.length; // an entry row: seq, row, flags, kind, then these string refs
    const rowBytes = 13 + 4 * nfields;
    const ne = block.readUInt32LE(24);
    const entryAt = block.length - 4 - ne * rowBytes;
    const reref = (pos: number, value: number): Buffer => {
      const b = Buffer.from(block);
      b.writeUInt32LE(value, pos);
      b.writeUInt32LE(crc32(b.subarray(8, b.length - 4)), b.length - 4);
      return Buffer.concat([encodeIndexHeader(), b]);
    };
    expect(() => decodeIndex(reref(entryAt + 9, 999), "k.bin")).toThrow(/^k\.bin: block at byte 8 entry 0 kind: string ref 999 out of range$/);
    expect(() => decodeIndex(reref(entryAt + rowBytes + 13, 998), "f.bin")).toThrow(/^f\.bin: block at byte 8 entry 1 \w+: string ref 998 out of range$/);
    // An absent field (0xffffffff) is not out of range.
    expect(decodeIndex(reref(entryAt + 13 + 4 * (nfields - 1), 0xffffffff), "a.bin").entries).toHaveLength(vectorJson.entries.filter((e) => e.seq === vectorJson.files[0]!.seq).length);
    try {
      decodeIndex(vector.subarray(0, 30), "x.bin");
    } catch (e) {
      expect(isStoreError(e) && e.code).toBe("Corrupt");
      expect((e as Error).message).toMatch(/^x\.bin: /);
    }
  });
});

function setup() {
  const base = tempDir("store-index");
  const root = join(base, "root");
  const srcDir = join(base, "src");
  mkdirSync(srcDir, { recursive: true });
  return { root, file: join(srcDir, "s.jsonl") };
}

async function collect(root: string, file: string, index = true) {
  const s = await openSession(root, "s1");
  const p = s.beginPass();
  await p.collectAppend(src(file), convert);
  const r = p.finish({ index });
  s.close();
  return r;
}

describe("the derived index", () => {
  it("holds identifiers and roles, never text; readIndex has the chain's shape", async () => {
    const { root, file } = setup();
    writeFileSync(file, jline("a", "SECRET-TEXT", { parent: "p0", call: "c1" }) + jline("b"));
    await collect(root, file);
    const bin = readFileSync(join(root, "s1/index/entries.bin"));
    expect(bin.includes(Buffer.from("SECRET-TEXT"))).toBe(false);
    const idx = readIndex(root, "s1");
    expect(idx.indexedSeq).toBe(1);
    expect(idx.derived).toBe(false);
    expect(idx.files[0]).toMatchObject({ seq: 1, stream: "main", kind: "transcript", records: 2 });
    expect(idx.files[0]!.sha256).toBe(createHash("sha256").update(readFileSync(join(root, "s1", idx.files[0]!.rel))).digest("hex"));
    expect(idx.entries[0]).toMatchObject({ seq: 1, row: 0, stream: "main", kind: "user", record_id: "a", parent_id: "p0", tool_call_id: "c1", duplicate: false });
    const state = readFileSync(join(root, "s1/index/index.state"), "utf8");
    expect(state).toMatch(/^indexed_seq +1$/m);
    expect(state).toMatch(/^entries +2$/m);
  });

  it("catches up when indexed_seq is behind, and rebuilds when deleted or of another schema", async () => {
    const { root, file } = setup();
    writeFileSync(file, jline("a"));
    await collect(root, file);
    appendFileSync(file, jline("b"));
    await collect(root, file, false); // lands, index left behind
    expect(readIndex(root, "s1").indexedSeq).toBe(1);
    const s = await openSession(root, "s1");
    const u = s.updateIndex();
    s.close();
    expect(u).toMatchObject({ indexedSeq: 2, files: 1, entries: 1, rebuilt: false });
    const full = readIndex(root, "s1");
    expect(full.entries.map((e) => e.record_id)).toEqual(["a", "b"]);
    rmSync(join(root, "s1/index"), { recursive: true });
    expect(readIndex(root, "s1")).toMatchObject({ indexedSeq: 2, derived: true });
    appendFileSync(file, jline("c"));
    const r = await collect(root, file);
    expect(r.index).toMatchObject({ rebuilt: true, indexedSeq: 3 });
    expect(readIndex(root, "s1").entries.map((e) => e.record_id)).toEqual(["a", "b", "c"]);
    // schema change: discarded and rebuilt
    const sp = join(root, "s1/index/index.state");
    writeFileSync(sp, readFileSync(sp, "utf8").replace(new RegExp(`^schema +${INDEX_SCHEMA}$`, "m"), "schema        99"));
    const s2 = await openSession(root, "s1");
    expect(s2.updateIndex().rebuilt).toBe(true);
    s2.close();
    expect(readIndex(root, "s1").entries).toHaveLength(3);
    // a block a crash left past index.state is dropped by the next append
    const bp = join(root, "s1/index/entries.bin");
    appendFileSync(bp, Buffer.from("LKBKgarbage"));
    expect(readIndex(root, "s1").derived).toBe(false);
    appendFileSync(file, jline("d"));
    await collect(root, file);
    expect(readIndex(root, "s1").entries.map((e) => e.record_id)).toEqual(["a", "b", "c", "d"]);
    expect(() => decodeIndex(readFileSync(bp), bp)).not.toThrow();
  });

  it("a re-land after a crash between landing and the cursor: later copies are duplicates, id-less records keep both", async () => {
    const { root, file } = setup();
    writeFileSync(file, jline("a"));
    await collect(root, file);
    const cp = join(root, "s1/streams/main/transcript.cursor");
    const old = readFileSync(cp);
    appendFileSync(file, jline("b") + JSON.stringify({ type: "user", text: "no id" }) + "\n");
    await collect(root, file);
    writeFileSync(cp, old); // as if the cursor save was lost
    await collect(root, file);
    const e = readIndex(root, "s1").entries;
    expect(e.map((x) => [x.seq, x.record_id ?? null, x.duplicate])).toEqual([
      [1, "a", false],
      [2, "b", false],
      [2, null, false],
      [3, "b", true],
      [3, null, false],
    ]);
    const v = verify(root);
    expect(v.ok).toBe(true);
    expect(v.relanded).toBe(2);
  });
});

describe("a session left behind session.state (no stale lock to say so)", () => {
  it("raises the counter above the disk before landing, and the index catches up from the landed records", async () => {
    const root = tempDir("store-lazy");
    const dir = tempDir("store-lazy-src");
    const a = join(dir, "a.jsonl");
    const b = join(dir, "b.jsonl");
    writeFileSync(a, jline("a1") + jline("a2"));
    writeFileSync(b, jline("b1"));
    const collect = async (paths: string[]) => {
      const s = await openSession(root, "s1");
      try {
        const p = s.beginPass();
        for (const f of paths) await p.collectAppend(src(f, { stream: f === a ? "main" : "agent-b" }), convert);
        return p.finish();
      } finally {
        s.close();
      }
    };
    await collect([a, b]);
    const statePath = join(root, "s1", "session.state");
    const state = readFileSync(statePath, "utf8");
    // Land more, then put back the older session.state and index: what a lost write would leave.
    const indexState = readFileSync(join(root, "s1", "index", "index.state"), "utf8");
    const entries = readFileSync(join(root, "s1", "index", "entries.bin"));
    appendFileSync(a, jline("a3"));
    await collect([a, b]);
    writeFileSync(statePath, state);
    writeFileSync(join(root, "s1", "index", "index.state"), indexState);
    writeFileSync(join(root, "s1", "index", "entries.bin"), entries);
    // A no-op pass over b alone: its cursor's last_seq is below the counter, but a's is not.
    appendFileSync(b, jline("b2"));
    const sum = await collect([a, b]);
    expect(sum.landed).toBe(1);
    const idx = readIndex(root, "s1");
    expect(idx.files.map((f) => f.seq)).toEqual([1, 2, 3, 4]);
    expect(idx.entries.map((e) => e.record_id)).toEqual(["a1", "a2", "b1", "a3", "b2"]);
    expect(verify(root).ok).toBe(true);
  });
});

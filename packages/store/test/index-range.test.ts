// The index of a long session read for what is new, not whole: an update takes the dedupe keys (record
// ids, block by block) of what is indexed and decodes no entry; a read by range (`from`) decodes the
// entries of the files from that seq on, lists every file, and answers for every entry (first parent
// links, first copies of record ids) by searching the index again, never holding it;
// the same answers come from the landed files when index/ is gone.
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { openSession, readIndex, releaseIndex } from "../src/index.js";
import { decodedEntries } from "../src/internal/indexer.js";
import { convert, jline, src } from "./helpers.js";

afterAll(cleanupTempDirs);

const lines = (prefix: string, n: number, extra: (i: number) => Record<string, unknown> = () => ({})) => Array.from({ length: n }, (_, i) => jline(`${prefix}-${i}`, "hello", extra(i))).join("");

/** One pass over the session's sources (path → stream), as a collector in a new process does it: nothing kept of the index. */
async function pass(root: string, sources: Record<string, string>): Promise<{ decoded: number; summary: ReturnType<import("../src/index.js").Pass["finish"]> }> {
  releaseIndex(root, "s1");
  const before = decodedEntries();
  const s = await openSession(root, "s1");
  try {
    const p = s.beginPass();
    for (const [path, stream] of Object.entries(sources)) await p.collectAppend(src(path, { stream }), convert);
    const summary = p.finish();
    return { decoded: decodedEntries() - before, summary };
  } finally {
    s.close();
  }
}

function setup() {
  const base = tempDir("index-range");
  mkdirSync(join(base, "src"), { recursive: true });
  return { root: join(base, "root"), main: join(base, "src", "main.jsonl"), agent: join(base, "src", "agent.jsonl") };
}

describe("an index read for what is new", () => {
  it("an update decodes no entry of what is indexed (its record ids only), and still marks a re-land of any earlier file", async () => {
    const { root, main } = setup();
    for (let i = 0; i < 20; i++) {
      appendFileSync(main, lines(`r${i}`, 500));
      const { decoded, summary } = await pass(root, { [main]: "main" });
      expect(summary.index).toMatchObject({ files: 1, entries: 500, rebuilt: i === 0 });
      expect(decoded).toBe(0);
    }
    // A record of the first file landed again (a copied project folder): a re-land, found from the keys alone.
    appendFileSync(main, jline("r0-7") + jline("new"));
    const { decoded } = await pass(root, { [main]: "main" });
    expect(decoded).toBe(0);
    const idx = readIndex(root, "s1", { from: 21 });
    expect(idx.entries.map((e) => [e.record_id, e.duplicate])).toEqual([["r0-7", true], ["new", false]]);
  });

  it("a read by range decodes the files from `from` on, lists every file, and is the whole index's tail", async () => {
    const { root, main } = setup();
    for (let i = 0; i < 10; i++) {
      appendFileSync(main, lines(`r${i}`, 300));
      await pass(root, { [main]: "main" });
    }
    const whole = readIndex(root, "s1");
    const before = decodedEntries();
    const tail = readIndex(root, "s1", { from: 9 });
    expect(decodedEntries() - before).toBe(600);
    expect(tail.files).toEqual(whole.files);
    expect(tail.entries).toEqual(whole.entries.filter((e) => e.seq >= 9));
    expect(tail).toMatchObject({ indexedSeq: 10, derived: false, from: 9 });
    // After an update in this process (a watcher), the same read takes the files it kept and reads only the blocks past `from`.
    appendFileSync(main, lines("r10", 300));
    const s = await openSession(root, "s1");
    const p = s.beginPass();
    await p.collectAppend(src(main), convert);
    p.finish();
    s.close();
    const kept = readIndex(root, "s1", { from: 9 });
    releaseIndex(root, "s1");
    expect(kept.files).toEqual(readIndex(root, "s1").files);
    expect(kept.entries).toEqual(readIndex(root, "s1", { from: 9 }).entries);
    expect(kept.lookup!.firstEntries(["r3-1", "r10-2"])).toEqual(readIndex(root, "s1", { from: 9 }).lookup!.firstEntries(["r3-1", "r10-2"]));
    expect(() => readIndex(root, "s1", { from: -1 })).toThrow(/from -1 is not a sequence/);
    // Only the fields asked for are decoded into the entries.
    const slim = readIndex(root, "s1", { from: 9, fields: [] });
    expect(slim.entries).toStrictEqual(readIndex(root, "s1", { from: 9 }).entries.map(({ record_id: _r, ...e }) => e));
    // Only the entries of the files asked for (push: those not sent yet): every file listed, the
    // others' entries not decoded; the same from the blocks a watcher kept.
    const odd = (f: { seq: number }) => f.seq % 2 === 1;
    const all = readIndex(root, "s1");
    for (const read of [() => readIndex(root, "s1", { entriesOf: odd }), () => readIndex(root, "s1", { from: 4, entriesOf: odd })]) {
      releaseIndex(root, "s1");
      const at = decodedEntries();
      const some = read();
      expect(some.files).toEqual(all.files);
      expect(some.entries).toEqual(all.entries.filter((e) => e.seq % 2 === 1 && (some.from === undefined || e.seq >= some.from)));
      expect(decodedEntries() - at).toBe(some.entries.length);
    }
  });

  it("answers for every entry, before the range or in it: first parent links and first copies, re-lands never, from the index or from the landed files", async () => {
    const { root, main, agent } = setup();
    // main: m-0 … m-9, then a re-land of m-3 in a later file; agent: its first link (to m-5) in its second file.
    writeFileSync(main, lines("m", 10, (i) => (i > 0 ? { parent: `m-${i - 1}` } : {})));
    writeFileSync(agent, jline("a-0"));
    await pass(root, { [main]: "main", [agent]: "agent" });
    appendFileSync(main, jline("m-3", "again", { parent: "elsewhere" }));
    appendFileSync(agent, jline("a-1", "hello", { parent: "m-5" }) + jline("a-2", "hello", { parent: "a-1" }));
    await pass(root, { [main]: "main", [agent]: "agent" });
    appendFileSync(main, jline("m-10", "hello", { parent: "m-9" }));
    await pass(root, { [main]: "main", [agent]: "agent" });
    const check = (from: number) => {
      const idx = readIndex(root, "s1", { from });
      const before = decodedEntries();
      const parents = idx.lookup!.firstParents(["main", "agent", "nobody"]);
      const firsts = idx.lookup!.firstEntries(["m-3", "m-5", "a-1", "m-10", "missing"]);
      return { idx, parents, firsts, decoded: decodedEntries() - before };
    };
    const atFive = check(5);
    expect(atFive.idx.files.map((f) => f.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(atFive.idx.entries.map((e) => e.record_id)).toEqual(["m-10"]);
    expect(atFive.parents).toEqual(new Map([["main", "m-0"], ["agent", "m-5"]]));
    // The first copy of m-3 (file 1, row 3), not its re-land in file 3; a record id's entry is decoded only when found.
    expect([...atFive.firsts].map(([id, e]) => [id, e.seq, e.row, e.stream, e.duplicate])).toEqual([
      ["m-3", 1, 3, "main", false],
      ["m-5", 1, 5, "main", false],
      ["a-1", 4, 0, "agent", false],
      ["m-10", 5, 0, "main", false],
    ]);
    expect(atFive.decoded).toBe(4);
    // The same answers whatever the range.
    expect(check(2).firsts).toEqual(atFive.firsts);
    expect(check(2).parents).toEqual(atFive.parents);
    // index/ gone: the same answers, derived from the landed files.
    rmSync(join(root, "s1", "index"), { recursive: true });
    const derived = check(5);
    expect(derived.idx).toMatchObject({ derived: true, from: 5 });
    expect(derived.idx.entries).toEqual(atFive.idx.entries);
    expect(derived.parents).toEqual(atFive.parents);
    expect(derived.firsts).toEqual(atFive.firsts);
  });
});

// The index cache (the dedupe keys of what a process last wrote of a session's index, so the next
// update reads nothing back) is bounded by sessions and by the keys they hold together: a pass over
// many sessions keeps what it works on, not every index it passed; the session just used stays,
// however long it is. Readers read the index from disk and keep nothing.
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { openSession, readIndex, releaseIndex } from "../src/index.js";
import { keptIndexes } from "../src/internal/indexer.js";
import { convert, jline, src } from "./helpers.js";

afterAll(cleanupTempDirs);

async function land(root: string, sessionId: string, file: string): Promise<void> {
  const s = await openSession(root, sessionId);
  const p = s.beginPass();
  await p.collectAppend(src(file), convert);
  p.finish({ index: true });
  s.close();
}

const lines = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => jline(`${prefix}-${i}`)).join("");

describe("the index cache", () => {
  it("holds at most 131,072 keys over the sessions it keeps, always the one just used, and still answers each index", async () => {
    const base = tempDir("index-cache");
    const root = join(base, "root");
    mkdirSync(join(base, "src"), { recursive: true });
    // 6 sessions of 25,000 records: 150,000 entries, more than the cache holds together.
    const ids = Array.from({ length: 6 }, (_, i) => `s${i}`);
    for (const id of ids) {
      const file = join(base, "src", `${id}.jsonl`);
      writeFileSync(file, lines(id, 25_000));
      await land(root, id, file);
      const kept = keptIndexes();
      expect(kept.keys).toBeLessThanOrEqual(131_072);
      expect(kept.sessions.at(-1)).toBe(join(root, id));
    }
    expect(keptIndexes().sessions.length).toBeLessThan(ids.length);
    // One session longer than the whole budget is kept alone, while it is the one in use.
    const big = join(base, "src", "big.jsonl");
    writeFileSync(big, lines("big", 135_000));
    await land(root, "big", big);
    expect(keptIndexes()).toEqual({ sessions: [join(root, "big")], keys: 135_000 });
    appendFileSync(big, lines("more", 10));
    await land(root, "big", big);
    expect(keptIndexes()).toEqual({ sessions: [join(root, "big")], keys: 135_010 });
    // An evicted index reads from disk as it was written; a reader keeps nothing.
    expect(readIndex(root, "s0").entries).toHaveLength(25_000);
    expect(keptIndexes().sessions).toEqual([join(root, "big")]);
    // A caller done with a session drops it; the index still reads.
    releaseIndex(root, "big");
    expect(keptIndexes().sessions).toEqual([]);
    expect(readIndex(root, "big").entries).toHaveLength(135_010);
  });
});

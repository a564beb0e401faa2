// A parse reads what is new, not the session: the index by range (the entries past the chain's head; the ones
// before searched only for a child still waiting for its launch), and a fold of the rounds that keeps no record
// address. The rounds are the ones a parse of the whole index publishes, byte for byte, at every step of the real
// Claude Code session with subagents (an anchored compaction agent among them) growing through the real store.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readIndex } from "@lake/store";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { buildRound, encodeRound, parse, readChain, releaseFold, type SessionIndex } from "../src/index.js";
import { keptChains } from "../src/internal/chain.js";
import { SESSION, collect, completeSource, partialSource } from "./support/store-session.js";

afterAll(cleanupTempDirs);

/** The round the whole index gives next (encoded), or null. */
async function fromWholeIndex(root: string): Promise<{ file: string; bytes: string } | null> {
  const body = buildRound(SESSION, (await readChain(root, SESSION)).rounds, readIndex(root, SESSION));
  if (!body) return null;
  const enc = encodeRound(body);
  return { file: enc.fileName, bytes: enc.bytes.toString("utf8") };
}

describe("parse by range", () => {
  it("asks the index for the entries past the head only, folds no record address, and publishes the rounds the whole index gives", async () => {
    const src = tempDir("parse-range-src");
    const root = join(tempDir("parse-range"), "root");
    const cuts = [40, 80, 120, 160];
    partialSource(src, cuts[0]!);
    const asked: { from: number; head: number; entries: number; earliest: number; indexed: number }[] = [];
    const byRange = (root: string, id: string, options: { from: number }): SessionIndex => {
      const index = readIndex(root, id, options);
      asked.push({ from: options.from, head: 0, entries: index.entries.length, earliest: Math.min(...index.entries.map((e) => e.seq)), indexed: readIndex(root, id).entries.length });
      return index;
    };
    for (let i = 0; i <= cuts.length; i++) {
      await collect(root, src, 16 * 1024);
      const expected = await fromWholeIndex(root);
      // A fresh process's parse (nothing kept): by range, and its fold keeps no record address.
      releaseFold(root, SESSION);
      const r = await parse(root, SESSION, { readIndex: byRange });
      asked.at(-1)!.head = r.head?.throughSeq ?? 0;
      expect(keptChains().records).toBe(0);
      expect(r.published && { file: r.published.file, bytes: readFileSync(join(root, "_conversations", SESSION, "rounds", r.published.file), "utf8") }).toEqual(expected);
      expect(expected).not.toBeNull();
      if (i < cuts.length) completeSource(src, cuts[i]!, cuts[i + 1]);
    }
    expect(asked).toHaveLength(cuts.length + 1);
    asked.forEach((a, i) => {
      // Each read starts just past the head the parse before it left, and holds nothing before it.
      expect(a.from).toBe(i === 0 ? 1 : asked[i - 1]!.head + 1);
      if (i > 0) expect(a.entries).toBeLessThan(a.indexed);
      if (a.entries > 0) expect(a.earliest).toBeGreaterThanOrEqual(a.from);
    });
    expect(readdirSync(join(root, "_conversations", SESSION, "rounds"))).toHaveLength(cuts.length + 1);
  });
});

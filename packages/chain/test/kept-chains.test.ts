// The fold cache (what a parse in this process left a chain as, so the next parse reads no round
// again) is bounded by chains and by the calls their (lean) folds hold together: a first collect over
// many long sessions does not keep every fold it made; the chain just parsed stays.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { parse, releaseFold, type SessionIndex } from "../src/index.js";
import { keptChains } from "../src/internal/chain.js";
import { landFiles, type Rec } from "./support/landed.js";

afterAll(cleanupTempDirs);

/** A session of `turns` turns of a prompt, one tool call and its result, landed as one file; its index. */
function session(root: string, id: string, turns: number): SessionIndex {
  const records: Rec[] = [];
  for (let i = 0; i < turns; i++) {
    records.push({ kind: "user", id: `${id}-u${i}`, ...(i > 0 ? { parent: `${id}-r${i - 1}` } : {}) });
    records.push({ kind: "tool_call", id: `${id}-c${i}`, parent: `${id}-u${i}`, call: `${id}-t${i}` });
    records.push({ kind: "tool_result", id: `${id}-r${i}`, parent: `${id}-c${i}`, call: `${id}-t${i}` });
  }
  const { files, entries } = landFiles(root, id, [{ stream: "main", records }]);
  return { indexedSeq: files.length, files, entries };
}

describe("the fold cache", () => {
  it("holds at most 131,072 calls over the chains it keeps, always the one just parsed", async () => {
    const root = tempDir("kept-chains");
    const ids = Array.from({ length: 10 }, (_, i) => `s${i}`);
    for (const id of ids) {
      const index = session(root, id, 14_000);
      const r = await parse(root, id, { readIndex: () => index });
      expect(r.published?.round).toBe(1);
      const kept = keptChains();
      expect(kept.calls).toBeLessThanOrEqual(131_072);
      expect(kept.dirs.at(-1)).toBe(join(root, "_conversations", id));
    }
    expect(keptChains().dirs.length).toBeLessThan(ids.length);
    // A chain longer than the whole budget is kept alone while it is the one parsed.
    const big = session(root, "big", 135_000);
    await parse(root, "big", { readIndex: () => big });
    expect(keptChains().dirs).toEqual([join(root, "_conversations", "big")]);
    expect(keptChains().calls).toBe(135_000);
    // A caller done with a chain drops its fold; the next parse folds it from its rounds.
    releaseFold(root, "big");
    expect(keptChains().dirs).toEqual([]);
    expect((await parse(root, "big", { readIndex: () => big })).published).toBeNull();
    expect(keptChains().dirs).toEqual([join(root, "_conversations", "big")]);
  });
});

// Four parsers on one chain at once, each in its own process: exactly one head, no fork, the losers write nothing.
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { readIndex } from "@lake/store";
import { buildRound, DEFAULT_POLICY, encodeRound, parseRoundFileName, readChain, verify } from "@lake/chain";
import { copyRoot, rootWithPendingRound, runChild, type ChildResult } from "./support/children.js";
import { SESSION } from "./support/store-session.js";

afterAll(cleanupTempDirs);

let template = "";
beforeAll(async () => {
  template = await rootWithPendingRound(100, 200);
}, 120_000);

function rounds(root: string): string {
  return join(root, "_conversations", SESSION, "rounds");
}

/** Start four children, wait until all four are loaded and spinning, then let them go at once. */
async function race(args: (i: number) => string[]): Promise<ChildResult[]> {
  const barrier = tempDir("chain-barrier");
  const running = Promise.all([0, 1, 2, 3].map((i) => runChild([...args(i), `barrier:${barrier}`])));
  while (readdirSync(barrier).filter((n) => n.startsWith("ready-")).length < 4) await new Promise((r) => setTimeout(r, 20));
  writeFileSync(join(barrier, "go"), "");
  const results = await running;
  outcomes.push(results.map((r) => r.out?.error ?? (r.out?.published ? "published" : "nothing-new")).sort().join(","));
  return results;
}

/** What each race gave (printed at the end: shows the lock and the head check were really contended). */
const outcomes: string[] = [];
afterAll(() => console.log(`race outcomes: ${outcomes.join(" | ")}`));

async function expectOneHead(root: string, results: ChildResult[], losers: string[]): Promise<void> {
  for (const r of results) expect(r.signal, r.stderr).toBeNull();
  const winners = results.filter((r) => typeof r.out?.published === "string");
  expect(winners).toHaveLength(1);
  for (const r of results) if (r !== winners[0]) expect(losers).toContain(r.out?.error ?? (r.out?.published === null ? "nothing-new" : "?"));
  // exactly rounds 1 and 2, nothing else in the directory (no temp file, no reservation, no second round 2)
  const names = readdirSync(rounds(root)).sort();
  expect(names.map((n) => parseRoundFileName(n)?.round)).toEqual([1, 2]);
  expect(names[1]).toBe(winners[0]?.out?.published);
  const chain = await readChain(root, SESSION);
  expect(chain.rounds.map((r) => r.round)).toEqual([1, 2]);
  expect((await verify(root, SESSION)).ok).toBe(true);
  expect(readdirSync(join(root, "_conversations", SESSION)).sort()).toEqual(["conversation.state", "rounds"]);
}

describe("four parsers at once", () => {
  it("parse x4 (two races): one publishes round 2, the others get Locked or find nothing new", async () => {
    for (let n = 0; n < 2; n++) {
      const root = copyRoot(template, "chain-race");
      const results = await race(() => ["parse", root, SESSION, "link", "-"]);
      await expectOneHead(root, results, ["Locked", "nothing-new"]);
    }
  });

  it("publishRound x4 of four different rounds built on the same head: one wins, no fork", async () => {
    for (let n = 0; n < 3; n++) {
      const root = copyRoot(template, "chain-race");
      const { rounds: existing } = await readChain(root, SESSION);
      const index = readIndex(root, SESSION);
      const dir = tempDir("chain-bodies");
      const files = [0, 1, 2, 3].map((i) => {
        // four parsers with different policy versions: four different rounds 2
        const body = buildRound(SESSION, existing, index, { ...DEFAULT_POLICY, version: 100 + i });
        const p = join(dir, `body-${i}.json`);
        writeFileSync(p, JSON.stringify(body));
        return { p, name: encodeRound(body as NonNullable<typeof body>).fileName };
      });
      expect(new Set(files.map((f) => f.name)).size).toBe(4);
      const results = await race((i) => ["publish", root, (files[i] as { p: string }).p, n === 2 ? "reserve" : "link", "-"]);
      await expectOneHead(root, results, ["Locked", "NotHead"]);
    }
  });
});

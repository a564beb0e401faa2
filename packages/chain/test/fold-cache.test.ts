// conversation.fold: a parse in a fresh process (a one-shot collect) folds the chain from the file the
// last parse left instead of reading every round, while rounds/ holds exactly what it folded and
// conversation.state is the text it names. It gives the rounds (and the fold) a parse that reads
// every round gives, byte for byte, at every step of the real Claude Code session with subagents
// growing through the real store; one that is old, damaged or foreign is not used.
import { createHash } from "node:crypto";
import { chmodSync, cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { FOLD_MIN_BYTES, isChainError, parse, releaseFold, verify } from "../src/index.js";
import { ChainState } from "../src/internal/conversation.js";
import { FOLD_FILE, decodeFold, encodeFold } from "../src/internal/fold-cache.js";
import { decodeRound } from "../src/internal/round.js";
import { SESSION, collect, completeSource, partialSource } from "./support/store-session.js";

afterAll(cleanupTempDirs);

const chain = (root: string) => join(root, "_conversations", SESSION);
const rounds = (root: string) => join(chain(root), "rounds");
const foldOf = (root: string) => readFileSync(join(chain(root), FOLD_FILE), "utf8");
const roundFiles = (root: string) => Object.fromEntries(readdirSync(rounds(root)).sort().map((n) => [n, readFileSync(join(rounds(root), n), "utf8")]));

/** A parse as a fresh process makes it: nothing of the chain kept in memory; a fold written however small the chain. */
async function freshParse(root: string) {
  releaseFold(root, SESSION);
  return parse(root, SESSION, { foldMinBytes: 0 });
}

/** Overwrite round 1's bytes with a same-length text that no longer matches its digest. */
function damageRoundOne(root: string): void {
  const name = readdirSync(rounds(root)).sort()[0]!;
  const p = join(rounds(root), name);
  const text = readFileSync(p, "utf8");
  chmodSync(p, 0o644);
  writeFileSync(p, text.replace(/"round":1/, '"round":7'));
  chmodSync(p, 0o444);
}

describe("conversation.fold", () => {
  it("golden vector: the lean fold of the two vector rounds, and back", () => {
    const vectors = new URL("./vectors/", import.meta.url);
    const names = ["r000001-89f34411c166.sf", "r000002-84473b06bc5a.sf"];
    const st = new ChainState("s1", true);
    for (const n of names) st.apply(decodeRound(readFileSync(new URL(n, vectors)), n), `rounds/${n}`);
    const state = `schema 1\nround 2\ncommit ${st.head!.commit}\nfile ${names[1]}\nthrough_seq 4\n`;
    const stored = readFileSync(new URL("conversation.fold", vectors));
    expect(encodeFold(st, state)).toEqual(stored);
    const back = decodeFold(stored, { conversation: "s1", stateText: state, roundFiles: names, roundsDir: "rounds" });
    expect(back && encodeFold(back, state)).toEqual(stored);
    // Any byte changed: not a fold.
    for (const at of [0, 40, stored.indexOf(0x0a) - 1, stored.length - 2]) {
      const bad = Buffer.from(stored);
      bad[at] = bad[at]! ^ 1;
      expect(decodeFold(bad, { conversation: "s1", stateText: state, roundFiles: names, roundsDir: "rounds" })).toBeNull();
    }
  });

  it("gives the rounds and the fold that reading every round gives, step by step", async () => {
    const src = tempDir("fold-src");
    const cached = join(tempDir("fold-cached"), "root");
    const cuts = [40, 80, 120, 160];
    partialSource(src, cuts[0]!);
    for (let i = 0; i <= cuts.length; i++) {
      await collect(cached, src, 16 * 1024);
      if (i > 0) expect(existsSync(join(chain(cached), FOLD_FILE))).toBe(true);
      // The same root without its fold: a parse there reads every round.
      const replayed = join(tempDir("fold-replayed"), "root");
      cpSync(cached, replayed, { recursive: true });
      rmSync(join(chain(replayed), FOLD_FILE), { force: true });
      const a = await freshParse(cached);
      const b = await freshParse(replayed);
      expect(a.published?.round).toBe(i + 1);
      expect(a).toEqual(b);
      expect(roundFiles(cached)).toEqual(roundFiles(replayed));
      // The fold written after folding from the file is the one written after reading every round.
      expect(foldOf(cached)).toBe(foldOf(replayed));
      if (i < cuts.length) completeSource(src, cuts[i]!, cuts[i + 1]);
    }
    // Nothing new: the fold on disk already stands for the chain and is not rewritten.
    const before = foldOf(cached);
    expect((await freshParse(cached)).published).toBeNull();
    expect(foldOf(cached)).toBe(before);
    expect((await verify(cached, SESSION)).ok).toBe(true);
  });

  it("is written by default only for a chain whose rounds hold FOLD_MIN_BYTES or more", async () => {
    const src = tempDir("fold-src");
    const root = join(tempDir("fold-default"), "root");
    partialSource(src, 40);
    await collect(root, src, 16 * 1024);
    releaseFold(root, SESSION);
    await parse(root, SESSION);
    // The fixture's first rounds are a few KB: read again by the next parse, not cached.
    expect(readdirSync(chain(root)).sort()).toEqual(["conversation.state", "rounds"]);
    releaseFold(root, SESSION);
    const size = readdirSync(rounds(root)).reduce((n, f) => n + readFileSync(join(rounds(root), f)).length, 0);
    expect(size).toBeLessThan(FOLD_MIN_BYTES);
    completeSource(src, 40, 80);
    await collect(root, src, 16 * 1024);
    await parse(root, SESSION, { foldMinBytes: size });
    expect(readdirSync(chain(root)).sort()).toEqual(["conversation.fold", "conversation.state", "rounds"]);
    // Once there, it is kept up to date whatever the threshold.
    completeSource(src, 80, 120);
    await collect(root, src, 16 * 1024);
    releaseFold(root, SESSION);
    await parse(root, SESSION);
    expect(foldOf(root)).toContain(`"rounds":[[1,`);
    expect(JSON.parse(foldOf(root).split("\n")[0]!).rounds).toHaveLength(3);
  });

  it("reads no round while the fold stands for the chain; verify still reads them all", async () => {
    const src = tempDir("fold-src");
    const root = join(tempDir("fold-noread"), "root");
    partialSource(src, 80);
    await collect(root, src, 16 * 1024);
    await freshParse(root);
    damageRoundOne(root);
    completeSource(src, 80, 120);
    await collect(root, src, 16 * 1024);
    // Round 1 no longer decodes, yet the next round is published from the fold.
    expect((await freshParse(root)).published?.round).toBe(2);
    const report = await verify(root, SESSION);
    expect(report.ok).toBe(false);
    expect(report.problems.join("\n")).toContain(readdirSync(rounds(root)).sort()[0]);
    // Without the fold a parse reads every round and meets the damage.
    completeSource(src, 120, 160);
    await collect(root, src, 16 * 1024);
    rmSync(join(chain(root), FOLD_FILE));
    await expect(freshParse(root)).rejects.toSatisfy((e) => isChainError(e) && e.code === "Corrupt");
  });

  /** A root with two rounds and a fold, round 1 then damaged (a parse that reads it fails), and more landed. */
  async function damagedBehindFold(label: string): Promise<{ root: string; src: string }> {
    const src = tempDir(`${label}-src`);
    const root = join(tempDir(label), "root");
    partialSource(src, 40);
    await collect(root, src, 16 * 1024);
    await freshParse(root);
    completeSource(src, 40, 80);
    await collect(root, src, 16 * 1024);
    await freshParse(root);
    damageRoundOne(root);
    completeSource(src, 80, 120);
    await collect(root, src, 16 * 1024);
    return { root, src };
  }
  const corrupt = (e: unknown) => isChainError(e) && e.code === "Corrupt";

  it("is not used when damaged: its digest line does not match", async () => {
    const { root } = await damagedBehindFold("fold-damaged");
    const text = foldOf(root);
    writeFileSync(join(chain(root), FOLD_FILE), text.replace(/"through_seq":(\d)/, '"through_seq":9$1'));
    await expect(freshParse(root)).rejects.toSatisfy(corrupt);
  });

  it("is not used when its digest checks but its layout is another", async () => {
    const { root } = await damagedBehindFold("fold-layout");
    const line = foldOf(root).split("\n")[0]!;
    const other = JSON.stringify({ ...JSON.parse(line), calls: [] });
    writeFileSync(join(chain(root), FOLD_FILE), `${other}\n${createHash("sha256").update(other).digest("hex")}\n`);
    await expect(freshParse(root)).rejects.toSatisfy(corrupt);
  });

  it("is not used when conversation.state is not the text it names", async () => {
    const { root } = await damagedBehindFold("fold-state");
    writeFileSync(join(chain(root), "conversation.state"), "");
    await expect(freshParse(root)).rejects.toSatisfy(corrupt);
  });

  it("is not used when rounds/ holds another round than it folded", async () => {
    const { root } = await damagedBehindFold("fold-rounds");
    // A round 3 another publisher installed (publishRound writes no fold): the fold names two rounds, rounds/ holds three.
    const two = readdirSync(rounds(root)).sort()[1]!;
    writeFileSync(join(rounds(root), "r000003-000000000000.sf"), readFileSync(join(rounds(root), two)));
    await expect(freshParse(root)).rejects.toSatisfy(corrupt);
  });
});

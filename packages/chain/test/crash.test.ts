// A parser process killed (SIGKILL) at every step of a publication leaves no partial round, and the next publish
// succeeds with the same bytes an uninterrupted run gives.
import { readdirSync, readFileSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { decodeRound, isChainError, parse, parseRoundFileName, readChain, verify, type PublishStep } from "@lake/chain";
import { copyRoot, rootWithPendingRound, runChild } from "./support/children.js";
import { SESSION } from "./support/store-session.js";

afterAll(cleanupTempDirs);

const LINK_STEPS: PublishStep[] = ["locked", "temp-written", "temp-synced", "temp-readonly", "installed", "temp-removed", "dir-synced", "state-written", "unlocked"];
const RESERVE_STEPS: PublishStep[] = ["locked", "temp-written", "temp-synced", "temp-readonly", "reserved", "installed", "dir-synced", "state-written", "unlocked"];

let template = "";
let reference = new Map<string, Buffer>();

function rounds(root: string): string {
  return join(root, "_conversations", SESSION, "rounds");
}

function snapshot(root: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const n of readdirSync(rounds(root)).sort()) if (parseRoundFileName(n)) out.set(n, readFileSync(join(rounds(root), n)));
  return out;
}

beforeAll(async () => {
  template = await rootWithPendingRound(100, 200); // a short session: the protocol is under test here
  const ref = copyRoot(template, "chain-ref");
  expect((await parse(ref, SESSION)).published?.round).toBe(2);
  reference = snapshot(ref);
  expect(reference.size).toBe(2);
}, 120_000);

describe("a writer killed at every step", () => {
  for (const [mode, steps] of [["link", LINK_STEPS], ["reserve", RESERVE_STEPS]] as const) {
    for (const step of steps) {
      it(`${mode} mode, killed at ${step}`, async () => {
        const root = copyRoot(template, "chain-crash");
        const r = await runChild(["parse", root, SESSION, mode, step, "0"]);
        expect(r.signal, r.stderr).toBe("SIGKILL");

        // What a reader sees right after the kill: complete rounds, or an empty reservation; never a partial round.
        const visible = readdirSync(rounds(root)).filter((n) => parseRoundFileName(n));
        let reservations = 0;
        for (const n of visible) {
          const p = join(rounds(root), n);
          if (statSync(p).size === 0) reservations++;
          else expect(decodeRound(readFileSync(p), p).commit.slice(0, 12)).toBe(parseRoundFileName(n)?.digest12);
        }
        expect(reservations).toBe(mode === "reserve" && step === "reserved" ? 1 : 0);
        const chain = await readChain(root, SESSION);
        const installed = steps.indexOf(step) >= steps.indexOf("installed");
        expect(chain.rounds.length).toBe(installed ? 2 : 1);
        expect((await verify(root, SESSION)).ok).toBe(true);

        // The next publish succeeds (a reservation younger than a minute first refuses, as the spec says).
        if (reservations > 0) {
          await expect(parse(root, SESSION)).rejects.toSatisfy((e) => isChainError(e) && e.code === "Reserved");
          const p = join(rounds(root), visible[visible.length - 1] as string);
          const old = (Date.now() - 2 * 60_000) / 1000;
          utimesSync(p, old, old);
        }
        const next = await parse(root, SESSION, { installMode: mode });
        expect(next.published?.round ?? null).toBe(installed ? null : 2);
        expect(snapshot(root)).toEqual(reference);
        // nothing left behind: no temporary file, no lock
        expect(readdirSync(rounds(root)).filter((n) => !parseRoundFileName(n))).toEqual([]);
        expect(readdirSync(join(root, "_conversations", SESSION)).sort()).toEqual(["conversation.state", "rounds"]);
        expect((await verify(root, SESSION)).ok).toBe(true);
      });
    }
  }
});

// The README's runnable example, run against a real storage root (the fixture landed through @lake/store). The test
// also checks that the README shows this code verbatim.
import { readFileSync } from "node:fs";
import { afterAll, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { collect, SESSION } from "./support/store-session.js";

// #region example
import { foldChain, parse, verify, type StreamNode } from "@lake/chain";

/** Parse a session's new landed records into its chain, then print the conversation as a tree. */
export async function showConversation(root: string, sessionId: string): Promise<string[]> {
  const { published, head } = await parse(root, sessionId); // takes the chain's .lock; publishes the next round or nothing
  const lines = [`published ${published?.file ?? "nothing"}; head round ${head?.round ?? 0} reaches seq ${head?.throughSeq ?? 0}`];
  const conv = await foldChain(root, sessionId); // the fold of every round, nothing else
  const walk = (stream: StreamNode, depth: number): void => {
    for (const turn of stream.turns) {
      lines.push(`${"  ".repeat(depth)}${stream.name} turn ${turn.index}: ${turn.records.length} records, ${turn.calls.length} calls`);
      for (const call of turn.calls) for (const child of call.children) walk(child, depth + 1); // child agents under their call
    }
  };
  walk(conv.main, 0);
  const report = await verify(root, sessionId); // commit digests + every landed file each round cites
  lines.push(report.ok ? "verify: ok" : report.problems.join("\n"));
  return lines;
}
// #endregion example

afterAll(cleanupTempDirs);

it("the README example runs on a real root and prints the tree", async () => {
  const root = tempDir("chain-example");
  await collect(root);
  const lines = await showConversation(root, SESSION);
  expect(lines[0]).toMatch(/^published r000001-[0-9a-f]{12}\.sf; head round 1 reaches seq \d+$/);
  expect(lines.some((l) => /^ {2}a881341 turn 0: \d+ records, \d+ calls$/.test(l))).toBe(true);
  expect(lines[lines.length - 1]).toBe("verify: ok");
  const again = await showConversation(root, SESSION);
  expect(again[0]).toMatch(/^published nothing; head round 1/);
});

it("the README shows the example verbatim", () => {
  const src = readFileSync(new URL("./example.test.ts", import.meta.url), "utf8");
  const region = /\/\/ #region example\n([\s\S]*?)\/\/ #endregion example/.exec(src)?.[1];
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  expect(region).toBeTruthy();
  expect(readme).toContain(region as string);
});

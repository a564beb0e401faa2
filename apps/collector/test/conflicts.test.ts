// Conflicts a person can resolve: `conflicts` lists each with its reason and since when, and only
// `resolve SOURCE --mode …` moves one. A shrunk file and a same-size rewrite, over real transcripts,
// through the built bin; verify after each.
import { appendFileSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usageBySession } from "@lake/events";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { fleetRecords, runCli, vendorTree, walk } from "./helpers.js";

afterAll(cleanupTempDirs);

const TOOL_HEAVY = "-home-marco-projects-spotter/tool_heavy.jsonl";

interface Conflict {
  session: string;
  cursor: string;
  source: string;
  path?: string;
  reason: string;
  since: string;
  offset?: number;
}

let dir: string;
let cleanUsage: Map<string, unknown>;

async function usageOf(root: string, fleet: string) {
  const p = await runCli(["push", "--root", root, "--store", `file://${fleet}`, "--agent", "t"]);
  expect(p.code, p.stderr).toBe(0);
  return new Map([...usageBySession(await fleetRecords(fleet))].map(([k, v]) => [k, v.usage]));
}

beforeAll(async () => {
  dir = tempDir("conflicts");
  const tree = vendorTree(join(dir, "clean"));
  const root = join(dir, "clean-root");
  expect((await runCli(["collect", "--root", root, ...tree.flags])).code).toBe(0);
  cleanUsage = await usageOf(root, join(dir, "clean-fleet"));
}, 300_000);

async function conflicts(root: string, flags: string[]): Promise<Conflict[]> {
  const r = await runCli(["conflicts", "--root", root, ...flags, "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { conflicts: Conflict[] }).conflicts;
}

describe("conflicts and resolve", { timeout: 300_000 }, () => {
  it("a shrunk file: listed with its reason and since when; continue-from-offset refused; reread-from-start lands it again, counted once", async () => {
    const tree = vendorTree(join(dir, "shrunk"));
    const root = join(dir, "shrunk-root");
    expect((await runCli(["collect", "--root", root, ...tree.flags])).code).toBe(0);
    const file = join(tree.claude, TOOL_HEAVY);
    const text = readFileSync(file, "utf8");
    const keep = text.split("\n").slice(0, 10).join("\n") + "\n";
    truncateSync(file, Buffer.byteLength(keep));
    const first = await runCli(["collect", "--root", root, ...tree.flags, "--json"]);
    expect(first.code).toBe(3);
    const s = JSON.parse(first.stdout) as { problems: { path: string; reason: string }[]; conflicts: number };
    expect(s.conflicts).toBe(1);
    expect(s.problems.find((p) => p.path === file)?.reason).toMatch(/^conflict: source is shorter than the cursor's offset/);
    expect(first.stderr).toContain(file);

    const listed = await conflicts(root, tree.flags);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ path: file, source: `claude-code:${TOOL_HEAVY}`, cursor: "streams/main/transcript.cursor", offset: Buffer.byteLength(text) });
    expect(listed[0]!.reason).toMatch(/^source is shorter than the cursor's offset \(size \d+ < offset \d+\)$/);
    expect(Date.parse(listed[0]!.since)).toBeGreaterThan(Date.now() - 600_000);
    const asText = await runCli(["conflicts", "--root", root, ...tree.flags]);
    expect(asText.stdout).toContain(`${file}: source is shorter than the cursor's offset`);

    // Later passes skip it and only count it; nothing moves it but resolve.
    const again = await runCli(["collect", "--root", root, ...tree.flags, "--json"]);
    expect(again.code).toBe(3);
    expect(JSON.parse(again.stdout).conflicts).toBe(1);
    expect(again.stderr).not.toContain(file);

    const refused = await runCli(["resolve", file, "--root", root, ...tree.flags, "--mode", "continue-from-offset"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/shorter than the cursor's offset .*only reread-from-start applies/);
    expect((await runCli(["resolve", file, "--root", root, ...tree.flags])).code).toBe(2);
    expect((await runCli(["resolve", join(tree.claude, "nope.jsonl"), "--root", root, ...tree.flags, "--mode", "reread-from-start"])).code).toBe(2);

    const before = new Map(walk(root).filter((f) => f.endsWith(".sd")).map((f) => [f, readFileSync(f, "utf8")]));
    const ok = await runCli(["resolve", file, "--root", root, ...tree.flags, "--mode", "reread-from-start"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("next collect reads it again from byte 0");
    expect(await conflicts(root, tree.flags)).toEqual([]);
    const after = await runCli(["collect", "--root", root, ...tree.flags, "--json"]);
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout).landed_files).toBe(1);
    // Everything landed before is still there, unchanged; verify passes; usage counts the re-read once.
    for (const [f, t] of before) expect(readFileSync(f, "utf8"), f).toBe(t);
    const v = await runCli(["verify", "--root", root, "--json"]);
    expect(v.code, v.stdout).toBe(0);
    expect(JSON.parse(v.stdout).relanded).toBe(10);
    expect(await usageOf(root, join(dir, "shrunk-fleet"))).toEqual(cleanUsage);
  });

  it("a same-size rewrite: tail digest conflict; continue-from-offset lands only what came after", async () => {
    const tree = vendorTree(join(dir, "rewrite"));
    const root = join(dir, "rewrite-root");
    expect((await runCli(["collect", "--root", root, ...tree.flags])).code).toBe(0);
    const file = join(tree.claude, TOOL_HEAVY);
    const buf = readFileSync(file);
    // Change one letter inside the last line, keeping the size and the JSON valid.
    const at = buf.lastIndexOf(Buffer.from('"type"'));
    expect(at).toBeGreaterThan(0);
    buf[at + 1] = "T".charCodeAt(0);
    writeFileSync(file, buf);
    const appended = JSON.stringify({ parentUuid: null, isSidechain: false, type: "user", uuid: "5e1f7c2a-0000-4000-8000-00000000abcd", sessionId: "x", timestamp: "2026-02-12T12:00:00.000Z", message: { role: "user", content: "after the rewrite" } });
    appendFileSync(file, appended + "\n");
    const c = await runCli(["collect", "--root", root, ...tree.flags, "--json"]);
    expect(c.code).toBe(3);
    const listed = await conflicts(root, tree.flags);
    expect(listed.map((x) => x.path)).toEqual([file]);
    expect(listed[0]!.reason).toMatch(/bytes before offset \d+ changed \(tail_sha256 mismatch\)/);
    const r = await runCli(["resolve", `claude-code:${TOOL_HEAVY}`, "--root", root, ...tree.flags, "--mode", "continue-from-offset", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ path: file, mode: "continue-from-offset", state: "active", offset: buf.length });
    const next = await runCli(["collect", "--root", root, ...tree.flags, "--json"]);
    expect(next.code, next.stderr).toBe(0);
    const s = JSON.parse(next.stdout) as { landed_files: number; records: number; bytes_read: number };
    expect(s).toMatchObject({ landed_files: 1, records: 1, bytes_read: Buffer.byteLength(appended) + 1 });
    expect((await runCli(["verify", "--root", root])).code).toBe(0);
  });
});

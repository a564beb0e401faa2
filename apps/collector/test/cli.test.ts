// verify, repack, status and parse against a real collected root, through the built bin.
import { appendFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { runCli, vendorTree, walk } from "./helpers.js";

afterAll(cleanupTempDirs);

let dir: string;
let tree: ReturnType<typeof vendorTree>;
let root: string;
let collected: { sessions: number; sources: number; landed_files: number; records: number; rounds: number };
const env = () => ({ HOME: join(dir, "home") });

beforeAll(async () => {
  dir = tempDir("cli");
  tree = vendorTree(join(dir, "vendor"));
  root = join(dir, "root");
  const c = await runCli(["collect", "--root", root, ...tree.flags, "--max-delta-bytes", "262144", "--json"], env());
  expect(c.code, c.stderr).toBe(0);
  collected = JSON.parse(c.stdout);
  expect(collected.landed_files).toBeGreaterThan(collected.sessions);
});

/** A copy of the collected root to damage. */
function copyRoot(label: string): string {
  const dest = join(dir, label);
  cpSync(root, dest, { recursive: true });
  return dest;
}

describe("verify", { timeout: 120_000 }, () => {
  it("a clean root: exit 0, every landed file and chain counted", async () => {
    const v = await runCli(["verify", "--root", root, "--json"], env());
    expect(v.code, v.stdout).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ ok: true, sessions: collected.sessions, files: collected.landed_files, records: collected.records, relanded: 0, chains: collected.sessions, problems: [] });
    const text = await runCli(["verify", "--root", root], env());
    expect(text.stdout.trim()).toMatch(new RegExp(`: ${collected.sessions} sessions, ${collected.landed_files} files, ${collected.records} records \\(0 re-landed\\), ${collected.sessions} chains: ok$`));
  });

  it("a deleted landed file: exit 3 and a line naming it", async () => {
    const damaged = copyRoot("deleted");
    const landed = walk(damaged).filter((f) => f.endsWith(".sd")).sort();
    // A file in the middle of a stream with several files: a middle gap.
    const victim = landed[Math.floor(landed.length / 2)]!;
    rmSync(victim);
    const v = await runCli(["verify", "--root", damaged], env());
    expect(v.code).toBe(3);
    const lines = v.stdout.trim().split("\n");
    const name = relative(damaged, victim).split("/").pop()!;
    expect(lines.some((l) => l.includes(name)), v.stdout).toBe(true);
    expect(lines[lines.length - 1]).toMatch(/: \d+ problems?$/);
    const j = JSON.parse((await runCli(["verify", "--root", damaged, "--json"], env())).stdout) as { ok: boolean; problems: string[] };
    expect(j.ok).toBe(false);
    expect(j.problems.some((p) => p.includes(name))).toBe(true);
  });

  it("a landed file with a flipped byte: exit 3 naming it", async () => {
    const damaged = copyRoot("flipped");
    const victim = walk(damaged).filter((f) => f.endsWith(".sd")).sort()[0]!;
    const bytes = readFileSync(victim);
    const at = bytes.length - 5;
    bytes.writeUInt8(bytes.readUInt8(at) ^ 0x01, at);
    rmSync(victim);
    writeFileSync(victim, bytes);
    const v = await runCli(["verify", "--root", damaged], env());
    expect(v.code).toBe(3);
    expect(v.stdout).toContain(relative(damaged, victim).split("/").pop()!);
  });
});

describe("repack", { timeout: 120_000 }, () => {
  it("repack DEST: DEST verifies clean with the same records; the source root is unchanged", async () => {
    const before = walk(root).filter((f) => !f.endsWith(".lock")).map((f) => [relative(root, f), readFileSync(f).toString("base64")]);
    const dest = join(dir, "repacked");
    const r = await runCli(["repack", dest, "--root", root, "--max-delta-bytes", "65536", "--json"], env());
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { sessions: number; files_in: number; files_out: number; records: number; rounds: number };
    expect(out).toMatchObject({ sessions: collected.sessions, files_in: collected.landed_files, records: collected.records, rounds: collected.sessions });
    // A smaller budget cuts more files.
    expect(out.files_out).toBeGreaterThan(out.files_in);
    const v = await runCli(["verify", "--root", dest, "--json"], env());
    expect(v.code, v.stdout).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ ok: true, sessions: collected.sessions, files: out.files_out, records: collected.records });
    const after = walk(root).filter((f) => !f.endsWith(".lock")).map((f) => [relative(root, f), readFileSync(f).toString("base64")]);
    expect(after).toEqual(before);
    // Collecting into the repacked root finds nothing new: the cursors came along.
    const c = await runCli(["collect", "--root", dest, ...tree.flags, "--json"], env());
    expect(c.code, c.stderr).toBe(0);
    expect(JSON.parse(c.stdout)).toMatchObject({ landed_files: 0, records: 0 });
  });

  it("refuses a DEST that is not empty (usage error), and a missing DEST argument", async () => {
    const dest = join(dir, "full");
    mkdirSync(dest);
    writeFileSync(join(dest, "keep"), "x");
    const r = await runCli(["repack", dest, "--root", root], env());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^lake-collector repack: .*full.*not empty/);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(readFileSync(join(dest, "keep"), "utf8")).toBe("x");
    const none = await runCli(["repack", "--root", root], env());
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^lake-collector repack: expected DEST\n$/);
  });
});

describe("status and parse", { timeout: 120_000 }, () => {
  it("status --json: sessions, streams, landed files, cursors by state, and the last pass", async () => {
    const s = await runCli(["status", "--root", root, "--json"], env());
    expect(s.code, s.stderr).toBe(0);
    const j = JSON.parse(s.stdout) as {
      root: string; sessions: number; streams: number; landed_files: number; cursors: { active: number; conflict: number; source_gone: number }; pending: number; conflicts: number; locked: number;
      last_pass: { landed_files: number; records: number; sessions: number; pending: number; conflicts: number; failed: boolean; finished_at: string } | null;
    };
    expect(j).toMatchObject({ root, sessions: collected.sessions, landed_files: collected.landed_files, conflicts: 0, locked: 0 });
    expect(j.streams).toBeGreaterThanOrEqual(collected.sessions);
    expect(j.cursors).toMatchObject({ active: collected.sources, conflict: 0, source_gone: 0 });
    // The last pass: the collect of beforeAll.
    expect(j.last_pass).toMatchObject({ sessions: collected.sessions, conflicts: 0, failed: false });
    expect(Date.parse(j.last_pass!.finished_at)).not.toBeNaN();
    const text = await runCli(["status", "--root", root], env());
    expect(text.stdout).toContain(`sessions ${collected.sessions}, streams ${j.streams}, landed files ${collected.landed_files}`);
    expect(text.stdout).toContain(`cursors: ${collected.sources} active, 0 conflict, 0 source_gone`);
  });

  it("status after a source is deleted and collected again: its cursor is source_gone", async () => {
    const d = tempDir("cli-gone");
    const t = vendorTree(join(d, "vendor"));
    const r = join(d, "root");
    expect((await runCli(["collect", "--root", r, ...t.flags], env())).code).toBe(0);
    rmSync(join(t.claude, "-home-marco-projects-spotter", "tool_heavy.jsonl"));
    const c = await runCli(["collect", "--root", r, ...t.flags, "--json"], env());
    expect(c.code, c.stderr).toBe(0);
    expect(JSON.parse(c.stdout).gone).toBe(1);
    const j = JSON.parse((await runCli(["status", "--root", r, "--json"], env())).stdout) as { cursors: { active: number; source_gone: number }; last_pass: { landed_files: number } };
    expect(j.cursors.source_gone).toBe(1);
    expect(j.last_pass.landed_files).toBe(0);
  });

  it("status counts a source that grew past its cursor as pending (with the same --source flags as collect)", async () => {
    const d = tempDir("cli-pending");
    const t = vendorTree(join(d, "vendor"));
    const r = join(d, "root");
    expect((await runCli(["collect", "--root", r, ...t.flags], env())).code).toBe(0);
    const before = JSON.parse((await runCli(["status", "--root", r, ...t.flags, "--json"], env())).stdout) as { pending: number };
    expect(before.pending).toBe(0);
    appendFileSync(join(t.claude, "-home-marco-projects-spotter", "tool_heavy.jsonl"), JSON.stringify({ type: "user", uuid: "00000000-0000-4000-8000-0000000000aa", message: { role: "user", content: "more" } }) + "\n");
    const after = JSON.parse((await runCli(["status", "--root", r, ...t.flags, "--json"], env())).stdout) as { pending: number };
    expect(after.pending).toBe(1);
  });

  it("parse publishes a round for every session collected with --no-parse, then nothing", async () => {
    const d = tempDir("cli-parse");
    const t = vendorTree(join(d, "vendor"));
    const r = join(d, "root");
    const c = await runCli(["collect", "--root", r, ...t.flags, "--no-parse", "--json"], env());
    expect(c.code, c.stderr).toBe(0);
    const summary = JSON.parse(c.stdout) as { sessions: number; rounds: number };
    expect(summary.rounds).toBe(0);
    const p = await runCli(["parse", "--root", r, "--json"], env());
    expect(p.code, p.stderr).toBe(0);
    expect(JSON.parse(p.stdout)).toEqual({ sessions: summary.sessions, published: summary.sessions, locked: [] });
    expect((await runCli(["verify", "--root", r], env())).code).toBe(0);
    const again = await runCli(["parse", "--root", r, "--json"], env());
    expect(JSON.parse(again.stdout)).toEqual({ sessions: summary.sessions, published: 0, locked: [] });
  });

  it("a --source with an unknown runtime is a usage error naming it", async () => {
    const r = await runCli(["collect", "--root", root, "--sources-only", "--source", "bogus=/tmp"], env());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^lake-collector collect: --source "bogus=\/tmp": runtime "bogus": expected one of claude-code, codex, gemini, broca, hook\n$/);
  });

  it("an unknown option is a usage error: exit 2, one line", async () => {
    const r = await runCli(["status", "--root", root, "--bogus"], env());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^lake-collector status: unknown option --bogus \(lake-collector status --help lists the options\)$/m);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  });
});

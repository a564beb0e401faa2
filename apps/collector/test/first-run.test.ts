// What a newcomer meets in the first hour, through the built bin on the sample corpus: option values
// starting with "-", files that are not transcripts, torn lines, status's pending sources, and the
// default fleet store (and moving one from its old place).
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createTestBucket, s3Env } from "@lake/tooling/s3";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { readIndex, readLanded } from "@lake/store";
import { fleetRecords, runCli, SAMPLES, vendorTree, walk } from "./helpers.js";

afterAll(cleanupTempDirs);

const SPOTTER = "-home-marco-projects-spotter";
/** An environment with nothing set that would move the defaults away from $HOME. */
const homeEnv = (home: string) => ({ HOME: home, LAKE_ROOT: "", LAKE_STORE: "", XDG_DATA_HOME: "" });

describe("collect on a first run", { timeout: 180_000 }, () => {
  it("--exclude takes a glob starting with '-' (every Claude Code project folder does)", async () => {
    const dir = tempDir("exclude");
    const tree = vendorTree(join(dir, "vendor"));
    const root = join(dir, "root");
    const c = await runCli(["collect", "--root", root, ...tree.flags, "--exclude", `${SPOTTER}/**`, "--json"], { HOME: join(dir, "home") });
    expect(c.code, c.stderr).toBe(0);
    const s = JSON.parse(c.stdout) as { sessions: number };
    const ids = readdirSync(root).filter((n) => !n.startsWith("_") && !n.includes("."));
    expect(s.sessions).toBe(2); // the Codex and the Gemini sample; no Claude Code session
    expect(ids.some((n) => n.startsWith("258c7280"))).toBe(false);
    // A forgotten value is still an error, not a glob.
    const bad = await runCli(["collect", "--root", root, ...tree.flags, "--exclude", "--json"], { HOME: join(dir, "home") });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--exclude/);
  });

  it("on a machine with no transcripts yet, collect makes the default root and records its pass (no agent has written anything)", async () => {
    const dir = tempDir("nothing-yet");
    const home = join(dir, "home");
    mkdirSync(home);
    const root = join(home, ".local", "share", "lake");
    const c = await runCli(["collect", "--json"], homeEnv(home));
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toBe("");
    expect(JSON.parse(c.stdout)).toMatchObject({ root, sessions: 0, sources: 0, landed_files: 0, failed: false });
    expect(JSON.parse(readFileSync(join(root, "collector.state"), "utf8"))).toMatchObject({ sessions: 0, landed_files: 0, failed: false });
    const status = await runCli(["status", "--json"], homeEnv(home));
    expect(status.code, status.stderr).toBe(0);
    expect((JSON.parse(status.stdout) as { last_pass: unknown }).last_pass).toMatchObject({ sessions: 0, failed: false });
  });

  it("a file with no JSON record is named and never becomes a session; status names pending sources and why", async () => {
    const dir = tempDir("garbage");
    const projects = join(dir, "projects");
    mkdirSync(join(projects, "-tmp-p"), { recursive: true });
    const garbage = join(projects, "-tmp-p", "aaaa1111-0000-4000-8000-000000000000.jsonl");
    writeFileSync(garbage, "not json\nstill not json\n");
    const empty = join(projects, "-tmp-p", "bbbb2222-0000-4000-8000-000000000000.jsonl");
    writeFileSync(empty, "");
    cpSync(join(SAMPLES, "claude/projects", SPOTTER, "tool_heavy.jsonl"), join(projects, "-tmp-p", "tool_heavy.jsonl"));
    const root = join(dir, "root");
    const flags = ["--root", root, "--sources-only", "--source", `claude-code=${projects}`];
    const env = { HOME: join(dir, "home") };
    const c = await runCli(["collect", ...flags, "--json"], env);
    expect(c.code, c.stderr).toBe(3); // completed with a problem: the file that is not a transcript
    const s = JSON.parse(c.stdout) as { sessions: number; problems: { path: string; reason: string }[] };
    expect(s.sessions).toBe(1);
    expect(s.problems).toEqual([{ path: garbage, reason: "not a claude-code transcript (no claude-code record in its first 2 lines)" }]);
    expect(existsSync(join(root, "aaaa1111-0000-4000-8000-000000000000"))).toBe(false);
    expect(existsSync(join(root, "bbbb2222-0000-4000-8000-000000000000"))).toBe(false);
    const text = await runCli(["collect", ...flags], env);
    expect(text.stderr).toContain(`lake-collector: ${garbage}: not a claude-code transcript`);

    // Status: the one session, and each pending source with its reason.
    const tool = join(projects, "-tmp-p", "tool_heavy.jsonl");
    const partial = '{"type":"user","uuid":"torn';
    appendFileSync(tool, partial);
    const st = await runCli(["status", ...flags], env);
    expect(st.code).toBe(0);
    expect(st.stdout).toMatch(/sessions 1,/);
    expect(st.stdout).toContain(`pending ${tool}: a last line of ${partial.length} bytes without its newline`);
    const j = JSON.parse((await runCli(["status", ...flags, "--json"], env)).stdout) as { pending_sources: unknown[] };
    expect(j.pending_sources).toEqual([expect.objectContaining({ path: tool, bytes: partial.length, reason: "partial-line" })]);
  });

  it("a torn last line followed by an append: the fragment lands as unknown bytes, the next line as its record", async () => {
    const dir = tempDir("torn");
    const projects = join(dir, "projects");
    mkdirSync(join(projects, "-tmp-p"), { recursive: true });
    const lines = readFileSync(join(SAMPLES, "claude/projects", SPOTTER, "tool_heavy.jsonl"), "utf8").trimEnd().split("\n");
    const file = join(projects, "-tmp-p", "tool_heavy.jsonl");
    const cut = 10;
    const torn = lines[cut]!.slice(0, Math.floor(lines[cut]!.length / 2));
    writeFileSync(file, lines.slice(0, cut).join("\n") + "\n" + torn);
    const root = join(dir, "root");
    const flags = ["--root", root, "--sources-only", "--source", `claude-code=${projects}`];
    const env = { HOME: join(dir, "home") };
    expect((await runCli(["collect", ...flags], env)).code).toBe(0);
    // The writer of line `cut` died; the next writer appends whole lines after the fragment.
    appendFileSync(file, lines.slice(cut + 1).join("\n") + "\n");
    expect((await runCli(["collect", ...flags], env)).code).toBe(0);
    const sid = readdirSync(root).find((n) => !n.startsWith("_") && !n.includes("."))!;
    const entries = readIndex(root, sid).entries.filter((e) => !e.duplicate);
    const next = JSON.parse(lines[cut + 1]!) as { uuid: string };
    expect(entries.some((e) => e.record_id === next.uuid)).toBe(true);
    const f = readLanded(root, sid, 2);
    const first = JSON.parse(f.rows[0]!) as { kind: string; raw: string; source_line: number };
    expect(first).toMatchObject({ kind: "unknown", raw: torn, source_line: cut + 1 });
    expect((await runCli(["verify", ...flags.slice(0, 2)], env)).code).toBe(0);
  });
});

describe("the default fleet store", { timeout: 180_000 }, () => {
  it("is ~/.local/share/lake/fleet; a store at the old place beside the root is moved there, nothing sent twice", async () => {
    const dir = tempDir("default-store");
    const home = join(dir, "home");
    const tree = vendorTree(join(dir, "vendor"));
    const env = homeEnv(home);
    expect((await runCli(["collect", ...tree.flags], env)).code).toBe(0);
    const root = join(home, ".local/share/lake");
    const legacy = join(home, ".local/share/fleet");
    // A push from before the move, to the old default place.
    const first = await runCli(["push", "--store", `file://${legacy}`, "--seal-idle", "3600", "--json"], env);
    expect(first.code, first.stderr).toBe(0);
    const sent = JSON.parse(first.stdout) as { sessions: number; rows: number };
    expect(sent.sessions).toBeGreaterThan(0);
    const p = await runCli(["push", "--seal-idle", "3600", "--json"], env);
    expect(p.code, p.stderr).toBe(0);
    const target = join(root, "fleet");
    expect(p.stderr).toBe(`lake-collector: moved the fleet store from ${legacy} to ${target} (its new default place)\n`);
    expect(JSON.parse(p.stdout)).toMatchObject({ store: `file://${target}`, sessions: 0, rows: 0 });
    expect(existsSync(legacy)).toBe(false);
    expect(Object.keys((JSON.parse(readFileSync(join(root, "push.state"), "utf8")) as { receivers: object }).receivers)).toEqual([`file://${target}`]);
    expect((await fleetRecords(target)).length).toBe(sent.rows);
    // The store inside the root is not a session: status and verify leave it alone.
    const st = JSON.parse((await runCli(["status", "--json"], env)).stdout) as { sessions: number };
    const collected = readdirSync(root).filter((n) => !n.startsWith("_") && !n.startsWith(".") && !n.includes(".") && n !== "fleet");
    expect(st.sessions).toBe(collected.length);
    expect((await runCli(["verify"], env)).code).toBe(0);
    expect(walk(target).some((f) => f.endsWith("fleet.json"))).toBe(true);
  });

  it("a store the config file names is used as it is: an s3:// one pushes (it is no place on disk to move), a file one at the old default place stays there", async () => {
    const dir = tempDir("config-store");
    const home = join(dir, "home");
    const tree = vendorTree(join(dir, "vendor"));
    const root = join(home, ".local/share/lake");
    const config = (store: string) => {
      mkdirSync(join(home, ".config", "lake"), { recursive: true });
      writeFileSync(join(home, ".config", "lake", "config.json"), JSON.stringify({ root, store }));
    };
    const env = { ...homeEnv(home), ...s3Env() };
    expect((await runCli(["collect", ...tree.flags], env)).code).toBe(0);
    // s3://: it was taken for the default store's file URL, and every push without --store failed (exit 1, internal error).
    const { url } = await createTestBucket("config-store");
    config(url);
    const s3 = await runCli(["push", "--seal-idle", "3600", "--json"], env);
    expect(s3.code, s3.stderr).toBe(0);
    expect(s3.stderr).toBe("");
    expect(JSON.parse(s3.stdout)).toMatchObject({ store: url });
    expect((JSON.parse(s3.stdout) as { sessions: number }).sessions).toBeGreaterThan(0);
    // A file store at the old default place (fleet/ beside the root), named by the file: pushed to in place, no warning, nothing moved.
    const legacy = join(home, ".local/share/fleet");
    config(`file://${legacy}`);
    for (const n of [1, 2]) {
      const p = await runCli(["push", "--seal-idle", "3600", "--json"], env);
      expect(p.code, p.stderr).toBe(0);
      expect(p.stderr).toBe("");
      expect(JSON.parse(p.stdout)).toMatchObject({ store: `file://${legacy}` });
      if (n === 2) expect(JSON.parse(p.stdout)).toMatchObject({ sessions: 0, rows: 0 });
    }
    expect(existsSync(join(legacy, "fleet.json"))).toBe(true);
    expect(existsSync(join(root, "fleet"))).toBe(false);
  });
});

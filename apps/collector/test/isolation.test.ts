// One bad source never stops the others: unreadable files, FIFOs, dangling links, symlink loops,
// files that are not transcripts, a copy of a session in a second folder, a damaged landed file,
// and a root that is read-only or full. Through the built bin, over the bundled real transcripts.
// The unprivileged part runs as `nobody` (setpriv): a mode-000 file is readable by root. Mounting
// a tmpfs needs root too; CI runs as root, and without it these tests fail saying so.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, chmodSync, chownSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usageBySession } from "@lake/events";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { BIN, fleetRecords, runCli, vendorTree, walk, type Run } from "./helpers.js";

afterAll(cleanupTempDirs);

// nobody runs the built collector from this checkout, so every directory above it must be searchable
// by others (a checkout inside a mode-700 `mktemp -d` is not). Search only (o+x, no listing) is added
// where it is missing for the run, and taken back afterwards.
const searchable: { dir: string; mode: number }[] = [];
beforeAll(() => {
  for (let d = dirname(BIN); d !== dirname(d); d = dirname(d)) {
    const mode = statSync(d).mode & 0o7777;
    if ((mode & 0o001) === 0) {
      chmodSync(d, mode | 0o001);
      searchable.push({ dir: d, mode });
    }
  }
});
afterAll(() => {
  for (const { dir, mode } of searchable) chmodSync(dir, mode);
});

const NOBODY = { uid: 65534, gid: 65534 };
const CLAUDE_FILE = "-home-marco-projects-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl";
const TOOL_HEAVY = "-home-marco-projects-spotter/tool_heavy.jsonl";

function needRoot(): void {
  if (process.getuid?.() !== 0) throw new Error("isolation tests need root (CI runs as root): they run collect as nobody via setpriv and mount small tmpfs file systems");
}

/** Run the built collector as nobody (no supplementary groups). */
function runAsNobody(args: readonly string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const p = spawn("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", process.execPath, BIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, HOME: "/nonexistent" } });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    p.on("error", reject);
    p.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

function chownTree(dir: string): void {
  chownSync(dir, NOBODY.uid, NOBODY.gid);
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    const st = lstatSync(p);
    if (st.isSymbolicLink()) continue;
    chownSync(p, NOBODY.uid, NOBODY.gid);
    if (st.isDirectory()) chownTree(p);
  }
}

/** SHA-256 of every landed file of a root, by path. */
function landedDigests(root: string): Map<string, string> {
  return new Map(walk(root).filter((f) => f.endsWith(".sd")).map((f) => [f, createHash("sha256").update(readFileSync(f)).digest("hex")]));
}

async function pushedUsage(root: string, fleet: string) {
  const p = await runCli(["push", "--root", root, "--store", `file://${fleet}`, "--agent", "t", "--json"]);
  expect(p.code, p.stderr).toBe(0);
  return new Map([...usageBySession(await fleetRecords(fleet))].map(([k, v]) => [k, v.usage]));
}

function mount(dir: string, size: string): void {
  mkdirSync(dir, { recursive: true });
  const r = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`mount -t tmpfs ${dir} failed (these tests need root and mount): ${r.stderr}`);
}

function umount(dir: string): void {
  spawnSync("umount", [dir]);
}

function remount(dir: string, mode: "ro" | "rw"): void {
  const r = spawnSync("mount", ["-o", `remount,${mode}`, dir], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`mount -o remount,${mode} ${dir} failed: ${r.stderr}`);
}

const mounts: string[] = [];
afterAll(() => {
  for (const m of mounts) umount(m);
});

let dir: string;
let clean: ReturnType<typeof vendorTree>;
let cleanRoot: string;
let cleanUsage: Map<string, unknown>;

beforeAll(async () => {
  needRoot();
  dir = tempDir("isolation");
  chmodSync(dir, 0o755);
  clean = vendorTree(join(dir, "clean"));
  cleanRoot = join(dir, "clean-root");
  const c = await runCli(["collect", "--root", cleanRoot, ...clean.flags, "--json"]);
  expect(c.code, c.stderr).toBe(0);
  cleanUsage = await pushedUsage(cleanRoot, join(dir, "clean-fleet"));
  expect(cleanUsage.size).toBeGreaterThan(2);
}, 300_000);

describe("collect as an unprivileged user over bad sources", { timeout: 300_000 }, () => {
  it("finishes with exit 3, names each bad file, lands every good session with a clean run's usage (the copy once), and lands the next append", async () => {
    const work = join(dir, "bad");
    mkdirSync(work);
    const tree = vendorTree(join(work, "vendor"));
    const projects = tree.claude;
    const odd = join(projects, "-home-someone-copied-project");
    mkdirSync(odd);
    // The same session from two files: a copy of a session file in a second project folder.
    copyFileSync(join(projects, TOOL_HEAVY), join(odd, "tool_heavy.jsonl"));
    // The same Codex session from two rollouts (one session_meta.id).
    const codexFile = walk(join(tree.codex, "sessions")).find((f) => f.endsWith(".jsonl"))!;
    mkdirSync(join(tree.codex, "archived_sessions"), { recursive: true });
    copyFileSync(codexFile, join(tree.codex, "archived_sessions", codexFile.split("/").pop()!));
    const unreadable = join(odd, "0b7d8c3e-1111-4222-8333-944455556666.jsonl");
    copyFileSync(join(projects, CLAUDE_FILE), unreadable);
    const fifo = join(odd, "fifo.jsonl");
    spawnSync("mkfifo", [fifo]);
    const dangling = join(odd, "dangling.jsonl");
    symlinkSync(join(odd, "no-such-target.jsonl"), dangling);
    const loop = join(odd, "loop-a.jsonl");
    symlinkSync(join(odd, "loop-b.jsonl"), loop);
    symlinkSync(loop, join(odd, "loop-b.jsonl"));
    const random = join(odd, "random.jsonl");
    writeFileSync(random, randomBytes(256 * 1024));
    const root = join(work, "root");
    mkdirSync(root);
    chownTree(work);
    chmodSync(unreadable, 0o000);

    const first = await runAsNobody(["collect", "--root", root, ...tree.flags, "--json"]);
    expect(first.code, first.stderr).toBe(3);
    const s1 = JSON.parse(first.stdout) as { problems: { path: string; reason: string }[]; landed_files: number; failed: boolean };
    const reason = (p: string) => s1.problems.find((x) => x.path === p)?.reason;
    expect(reason(unreadable)).toMatch(/permission denied \(EACCES\)/);
    expect(reason(fifo)).toMatch(/not a regular file \(a FIFO\)/);
    expect(reason(dangling)).toMatch(/dangling symbolic link/);
    expect(reason(loop)).toMatch(/symbolic link loop \(ELOOP\)/);
    expect(reason(random)).toMatch(/^not a claude-code transcript/);
    // One line on stderr per bad file, naming it and the reason.
    const lines = first.stderr.trim().split("\n");
    for (const p of [unreadable, fifo, dangling, loop, random]) expect(lines.filter((l) => l.startsWith(`lake-collector: ${p}: `)), first.stderr).toHaveLength(1);
    expect(first.stderr).not.toMatch(/internal error|share one cursor/);
    // Nothing of the random file: no session directory for it.
    expect(existsSync(join(root, "random"))).toBe(false);

    // Every good session with the same usage as a clean run: the copies counted once.
    const usage = await pushedUsage(root, join(work, "fleet"));
    expect(usage).toEqual(cleanUsage);
    // Both copies were read: each has its own cursor in the one stream.
    const th = readdirSync(root).find((id) => existsSync(join(root, id, "streams", "main", "transcript_2.cursor")));
    expect(th, "a session read from two files has a second cursor").toBeDefined();

    // The next pass lands an append to a good file.
    const uuid = "7f0c2d7e-aaaa-4bbb-8ccc-0123456789ab";
    appendFileSync(join(projects, CLAUDE_FILE), JSON.stringify({ parentUuid: null, isSidechain: false, type: "user", uuid, sessionId: "258c7280-ae70-4798-800f-63464d01a85d", timestamp: "2026-02-12T12:00:00.000Z", message: { role: "user", content: "one more line" } }) + "\n");
    const before = landedDigests(root);
    const second = await runAsNobody(["collect", "--root", root, ...tree.flags, "--json"]);
    expect(second.code, second.stderr).toBe(3);
    const s2 = JSON.parse(second.stdout) as { landed_files: number; records: number };
    expect(s2.landed_files).toBe(1);
    const added = [...landedDigests(root).keys()].filter((f) => !before.has(f));
    expect(added).toHaveLength(1);
    expect(readFileSync(added[0]!, "utf8")).toContain(uuid);
    for (const [f, d] of before) expect(landedDigests(root).get(f), f).toBe(d);
    const v = await runCli(["verify", "--root", root]);
    expect(v.code, v.stdout).toBe(0);
  });

  it("a file that is not a transcript is looked at again when it changes, and lands once it is one", async () => {
    const work = join(dir, "notjson");
    const tree = vendorTree(join(work, "vendor"));
    const x = join(tree.claude, "-home-marco-projects-spotter", "x.jsonl");
    writeFileSync(x, randomBytes(1024 * 1024));
    const root = join(work, "root");
    const a = await runCli(["collect", "--root", root, ...tree.flags, "--json"]);
    expect(a.code).toBe(3);
    expect(a.stderr).toContain(`lake-collector: ${x}: not a claude-code transcript`);
    expect(existsSync(join(root, "x"))).toBe(false);
    // Unchanged: still refused, still nothing landed for it.
    const b = await runCli(["collect", "--root", root, ...tree.flags, "--json"]);
    expect(b.code).toBe(3);
    expect(JSON.parse(b.stdout).landed_files).toBe(0);
    // Rewritten as a real transcript: it lands.
    copyFileSync(join(tree.claude, TOOL_HEAVY), x);
    const c = await runCli(["collect", "--root", root, ...tree.flags, "--json"]);
    expect(c.code, c.stderr).toBe(0);
    expect(JSON.parse(c.stdout).landed_files).toBe(1);
  });

  it("a damaged landed file stops only its own session; the others land their appends", async () => {
    const work = join(dir, "damaged");
    const tree = vendorTree(join(work, "vendor"));
    const root = join(work, "root");
    expect((await runCli(["collect", "--root", root, ...tree.flags])).code).toBe(0);
    // Damage a file of the Claude session and drop its index, so the next pass must read it back.
    const sid = "258c7280-ae70-4798-800f-63464d01a85d";
    const victim = walk(join(root, sid, "streams", "main")).find((f) => f.endsWith(".sd"))!;
    chmodSync(victim, 0o644);
    const buf = readFileSync(victim);
    buf[buf.length - 10] = buf[buf.length - 10]! ^ 0x01;
    writeFileSync(victim, buf);
    spawnSync("rm", ["-rf", join(root, sid, "index")]);
    const before = landedDigests(root);
    appendFileSync(join(tree.claude, TOOL_HEAVY), readFileSync(join(tree.claude, TOOL_HEAVY), "utf8").split("\n")[0] + "\n");
    const r = await runCli(["collect", "--root", root, ...tree.flags, "--json"]);
    expect(r.code, r.stderr).toBe(3);
    const s = JSON.parse(r.stdout) as { problems: { path: string; reason: string }[]; landed_files: number };
    expect(s.problems.some((p) => p.path === victim), JSON.stringify(s.problems)).toBe(true);
    expect(r.stderr).toContain(`lake-collector: ${victim}: `);
    expect(s.landed_files).toBeGreaterThanOrEqual(1);
    for (const [f, d] of before) expect(landedDigests(root).get(f), f).toBe(d);
  });

  it("verify of a root that does not exist is an error (exit 7), not a clean root", async () => {
    const v = await runCli(["verify", "--root", join(dir, "no-such-root")]);
    expect(v.code).toBe(7);
    expect(v.stderr.trim()).toBe(`lake-collector verify: ${join(dir, "no-such-root")}: no such storage root (ENOENT)`);
  });

  it("push from a root that does not exist: one line naming it, exit 7, nothing created", async () => {
    const missing = join(dir, "no-such-root-push");
    const p = await runCli(["push", "--root", missing, "--store", `file://${join(dir, "no-such-fleet")}`]);
    expect(p.code).toBe(7);
    expect(p.stderr).toBe(`lake-collector push: ${missing}: no such storage root (ENOENT)\n`);
    expect(existsSync(missing)).toBe(false);
    expect(existsSync(join(dir, "no-such-fleet"))).toBe(false);
  });
});

describe("a root the disk refuses: exit 7 naming the path and the errno, nothing landed changed", { timeout: 300_000 }, () => {
  it("EROFS: collect and push on a read-only root", async () => {
    const work = join(dir, "erofs");
    const tree = vendorTree(join(work, "vendor"));
    const mnt = join(work, "mnt");
    mount(mnt, "16m");
    mounts.push(mnt);
    const root = join(mnt, "root");
    expect((await runCli(["collect", "--root", root, ...tree.flags])).code).toBe(0);
    const before = landedDigests(root);
    appendFileSync(join(tree.claude, TOOL_HEAVY), readFileSync(join(tree.claude, TOOL_HEAVY), "utf8").split("\n")[1] + "\n");
    remount(mnt, "ro");
    const c = await runCli(["collect", "--root", root, ...tree.flags]);
    expect(c.code, c.stderr).toBe(7);
    expect(c.stderr.trim()).toMatch(new RegExp(`^lake-collector collect: ${root}/\\S+: .*EROFS \\(read-only file system\\)$`));
    const p = await runCli(["push", "--root", root, "--store", `file://${join(work, "fleet")}`]);
    expect(p.code, p.stderr).toBe(7);
    expect(p.stderr.trim()).toBe(`lake-collector push: ${root}/_export: mkdir failed: EROFS (read-only file system)`);
    const v = await runCli(["verify", "--root", root]);
    expect(v.code, v.stdout).toBe(0);
    expect(landedDigests(root)).toEqual(before);
    remount(mnt, "rw");
    // Writable again: the append lands.
    const again = await runCli(["collect", "--root", root, ...tree.flags, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).landed_files).toBe(1);
  });

  it("EROFS: push to a fleet store directory on a read-only file system", async () => {
    const work = join(dir, "erofs-store");
    const tree = vendorTree(join(work, "vendor"));
    const mnt = join(work, "mnt");
    mount(mnt, "4m");
    mounts.push(mnt);
    mkdirSync(join(mnt, "fleet"));
    remount(mnt, "ro");
    const root = join(work, "root");
    expect((await runCli(["collect", "--root", root, ...tree.flags])).code).toBe(0);
    const before = landedDigests(root);
    const p = await runCli(["push", "--root", root, "--store", `file://${join(mnt, "fleet")}`]);
    expect(p.code, p.stderr).toBe(7);
    expect(p.stderr.trim()).toBe(`lake-collector push: ${join(mnt, "fleet")}/.lake-store: mkdir failed: EROFS (read-only file system)`);
    expect(landedDigests(root)).toEqual(before);
    expect((await runCli(["verify", "--root", root])).code).toBe(0);
  });

  it("EACCES: a root the user cannot write", async () => {
    const work = join(dir, "eacces");
    const tree = vendorTree(join(work, "vendor"));
    const root = join(work, "root");
    expect((await runCli(["collect", "--root", root, ...tree.flags])).code).toBe(0);
    const before = landedDigests(root);
    appendFileSync(join(tree.claude, TOOL_HEAVY), readFileSync(join(tree.claude, TOOL_HEAVY), "utf8").split("\n")[2] + "\n");
    chmodSync(work, 0o755);
    chownTree(join(work, "vendor"));
    // The root stays root's: readable by nobody, not writable (the key stays private, as it must).
    spawnSync("chmod", ["-R", "go+rX", root]);
    chmodSync(join(root, "redact.key"), 0o600);
    const c = await runAsNobody(["collect", "--root", root, ...tree.flags]);
    expect(c.code, c.stderr).toBe(7);
    expect(c.stderr.trim()).toMatch(new RegExp(`^lake-collector collect: ${root}/\\S+: .*EACCES.*permission denied`));
    expect((await runCli(["verify", "--root", root])).code).toBe(0);
    expect(landedDigests(root)).toEqual(before);
  });

  it("ENOSPC: a full tmpfs stops the pass; what landed before is unchanged and verifies", async () => {
    const work = join(dir, "enospc");
    const tree = vendorTree(join(work, "vendor"));
    const mnt = join(work, "mnt");
    mount(mnt, "2m");
    mounts.push(mnt);
    const root = join(mnt, "root");
    // First only the small Claude file fits.
    const small = await runCli(["collect", "--root", root, ...tree.flags, "--include", "**/tool_heavy.jsonl"]);
    expect(small.code, small.stderr).toBe(0);
    const before = landedDigests(root);
    expect(before.size).toBe(1);
    const c = await runCli(["collect", "--root", root, ...tree.flags]);
    expect(c.code, c.stderr).toBe(7);
    expect(c.stderr.trim()).toMatch(new RegExp(`^lake-collector collect: ${root}/\\S+: .*ENOSPC \\(no space left on device\\)$`));
    const v = await runCli(["verify", "--root", root]);
    expect(v.code, v.stdout).toBe(0);
    for (const [f, d] of before) expect(landedDigests(root).get(f), f).toBe(d);
  });
});


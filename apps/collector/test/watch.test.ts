// `lake-collector watch`: status file, one writer per root (watch.lock), landing appended lines,
// and a clean stop on SIGTERM — a real process each time.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { BIN, runCli, vendorTree, walk } from "./helpers.js";

afterAll(cleanupTempDirs);

interface Watcher {
  readonly proc: ChildProcess;
  readonly lines: string[];
  stderr: string;
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startWatch(args: readonly string[], env: NodeJS.ProcessEnv): Watcher {
  const proc = spawn(process.execPath, [BIN, "watch", ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const w: Watcher = {
    proc,
    lines: [],
    stderr: "",
    exit: new Promise((res) => proc.on("exit", (code, signal) => res({ code, signal }))),
  };
  let buf = "";
  proc.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      w.lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
  proc.stderr!.on("data", (d: Buffer) => (w.stderr += d.toString()));
  return w;
}

function readStatus(root: string): { state: string; pid: number } | undefined {
  try {
    return JSON.parse(readFileSync(join(root, "watch.status"), "utf8")) as { state: string; pid: number };
  } catch {
    return undefined;
  }
}

async function until<T>(what: string, fn: () => T | undefined | false, timeoutMs = 60_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

describe("watch", { timeout: 240_000 }, () => {
  it("--max-passes: watch.status moves catching-up → running → stopped, and the lock is released", async () => {
    const dir = tempDir("watch1");
    const tree = vendorTree(join(dir, "vendor"));
    const root = join(dir, "root");
    // "running" stands between the two passes for --interval seconds: long enough that a poll every
    // 10 ms sees it on a loaded machine (at 1 s, a busy CI machine once missed it).
    const w = startWatch(["--root", root, ...tree.flags, "--interval", "3", "--max-passes", "2", "--json"], { HOME: join(dir, "home") });
    const seen: string[] = [];
    let done = false;
    void w.exit.then(() => (done = true));
    while (!done) {
      const s = readStatus(root)?.state;
      if (s && seen[seen.length - 1] !== s) seen.push(s);
      await new Promise((r) => setTimeout(r, 10));
    }
    const s = readStatus(root)?.state;
    if (s && seen[seen.length - 1] !== s) seen.push(s);
    const { code } = await w.exit;
    expect(code, w.stderr).toBe(0);
    expect(seen[0]).toBe("catching-up");
    expect(seen).toContain("running");
    expect(seen[seen.length - 1]).toBe("stopped");
    expect(seen.indexOf("running")).toBeGreaterThan(seen.indexOf("catching-up"));
    const passes = w.lines.map((l) => JSON.parse(l) as { kind: string; detail: { sessions?: number; records?: number } }).filter((l) => l.kind === "pass");
    expect(passes).toHaveLength(2);
    expect(passes[0]!.detail.records).toBeGreaterThan(0);
    expect(passes[1]!.detail.records).toBe(0);
    expect(JSON.parse(readFileSync(join(root, "watch.status"), "utf8"))).toMatchObject({ state: "stopped", passes: 2 });
    expect(existsSync(join(root, "watch.lock"))).toBe(false);
    expect(existsSync(join(root, "collector.state"))).toBe(true);
    expect((await runCli(["verify", "--root", root])).code).toBe(0);
  });

  it("one writer per root; an appended line lands within seconds; SIGTERM stops it cleanly", async () => {
    const dir = tempDir("watch2");
    const tree = vendorTree(join(dir, "vendor"));
    const root = join(dir, "root");
    const env = { HOME: join(dir, "home") };
    const w = startWatch(["--root", root, ...tree.flags, "--interval", "600", "--json"], env);
    try {
      await until("running", () => readStatus(root)?.state === "running", 120_000);
      await until("the catch-up pass on stdout", () => w.lines.some((l) => l.includes('"kind":"pass"')));
      const owner = JSON.parse(readFileSync(join(root, "watch.lock", "owner.json"), "utf8")) as { pid: number; host: string; token: string; started_at: number };
      expect(owner).toMatchObject({ pid: w.proc.pid, host: hostname() });
      expect(owner.token).toMatch(/^[0-9a-f]{32}$/);

      // A second watch on the same root is refused, naming the owner.
      const second = await runCli(["watch", "--root", root, ...tree.flags, "--max-passes", "1"], env);
      expect(second.code).toBe(4);
      expect(second.stderr).toMatch(new RegExp(`watch\\.lock: held by pid ${w.proc.pid} on ${hostname().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
      expect(second.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(readStatus(root)).toMatchObject({ state: "running", pid: w.proc.pid });

      // Append to a transcript: the file watch runs a pass (the interval is 10 minutes).
      const passesBefore = w.lines.length;
      const file = join(tree.claude, "-home-marco-projects-spotter", "tool_heavy.jsonl");
      const sid = (JSON.parse(readFileSync(file, "utf8").trimEnd().split("\n").pop()!) as { sessionId: string }).sessionId;
      const t0 = Date.now();
      appendFileSync(file, JSON.stringify({ parentUuid: null, isSidechain: false, type: "user", sessionId: sid, uuid: "00000000-0000-4000-8000-0000000000aa", timestamp: "2026-02-12T11:00:00.000Z", message: { role: "user", content: "appended while watching" } }) + "\n");
      const pass = await until(
        "a pass landing the appended line",
        () => w.lines.slice(passesBefore).map((l) => JSON.parse(l) as { kind: string; detail: { records?: number } }).find((l) => l.kind === "pass" && (l.detail.records ?? 0) > 0),
        60_000,
      );
      const latency = Date.now() - t0;
      console.log(`watch: appended line landed after ${latency} ms`);
      expect(pass.detail.records).toBe(1);
      const landed = walk(join(root, sid)).filter((f) => f.endsWith(".sd")).map((f) => readFileSync(f, "utf8")).join("");
      expect(landed).toContain("appended while watching");
    } finally {
      w.proc.kill("SIGTERM");
    }
    const { code, signal } = await w.exit;
    expect({ code, signal }, w.stderr).toEqual({ code: 0, signal: null });
    expect(readStatus(root)).toMatchObject({ state: "stopped", pid: w.proc.pid });
    expect(existsSync(join(root, "watch.lock"))).toBe(false);
  });

  it("a watch.lock left by a dead process is taken over", async () => {
    const dir = tempDir("watch3");
    const tree = vendorTree(join(dir, "vendor"));
    const root = join(dir, "root");
    // A pid that is gone: a process that has exited.
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    const pid = Number(dead.stdout);
    expect(Number.isInteger(pid) && pid > 0).toBe(true);
    mkdirSync(join(root, "watch.lock"), { recursive: true });
    writeFileSync(join(root, "watch.lock", "owner.json"), JSON.stringify({ host: hostname(), pid, started_at: Date.now() - 60_000, token: "0".repeat(32) }) + "\n");
    // `status` shows a watcher whose lease's owner is gone as stopped.
    writeFileSync(join(root, "watch.status"), JSON.stringify({ state: "running", pid, passes: 3, updated_at: "2026-01-01T00:00:00.000Z" }));
    const st = await runCli(["status", "--root", root, "--json"], { HOME: join(dir, "home") });
    expect(st.code, st.stderr).toBe(0);
    expect((JSON.parse(st.stdout) as { watch: unknown }).watch).toMatchObject({ state: "stopped", reason: `the watcher (pid ${pid}) is gone; it last wrote at 2026-01-01T00:00:00.000Z` });
    const r = await runCli(["watch", "--root", root, ...tree.flags, "--max-passes", "1", "--json"], { HOME: join(dir, "home") });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n").map((l) => (JSON.parse(l) as { kind: string }).kind)).toEqual(["pass"]);
    expect(readStatus(root)).toMatchObject({ state: "stopped" });
    expect(existsSync(join(root, "watch.lock"))).toBe(false);
    // No leftovers of the takeover.
    expect(walk(root).filter((f) => f.includes("watch.lock"))).toEqual([]);

    // A lock held by a live process on another host is never taken over.
    mkdirSync(join(root, "watch.lock"));
    writeFileSync(join(root, "watch.lock", "owner.json"), JSON.stringify({ host: `not-${hostname()}`, pid: 1, started_at: Date.now(), token: "1".repeat(32) }) + "\n");
    const other = await runCli(["watch", "--root", root, ...tree.flags, "--max-passes", "1"], { HOME: join(dir, "home") });
    expect(other.code).toBe(4);
    expect(other.stderr).toContain(`held by pid 1 on not-${hostname()}`);
    expect(existsSync(join(root, "watch.lock", "owner.json"))).toBe(true);
  });
});

// Directories: moveDir (never replacing, a process killed at each step, racing movers) and the
// directory lease (golden owner record, racing claimers, a killed owner, racing and killed breakers),
// and scratch directories a killed owner left (swept by the next).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { acquireDirLease, decodeLeaseOwner, dirLeaseOwner, encodeLeaseOwner, moveDir, removeAbandoned, scratchDir, type LeaseOwner } from "@lake/durable";
import { race, runChild } from "./support.js";

afterAll(cleanupTempDirs);

async function deadPid(): Promise<number> {
  const p = spawn(process.execPath, ["-e", "0"]);
  await new Promise((r) => p.on("close", r));
  return p.pid as number;
}

function dirWith(path: string, file: string, text: string): void {
  mkdirSync(path, { recursive: true });
  writeFileSync(join(path, file), text);
}

describe("moveDir", () => {
  it("moves a directory whole; refuses a taken name (a non-empty directory, a file) and leaves both; replaces an empty directory", () => {
    const dir = tempDir("durable-move");
    dirWith(join(dir, "a"), "x", "1");
    expect(moveDir(join(dir, "a"), join(dir, "b"))).toBe(true);
    expect(readFileSync(join(dir, "b", "x"), "utf8")).toBe("1");
    expect(existsSync(join(dir, "a"))).toBe(false);
    dirWith(join(dir, "c"), "y", "2");
    expect(moveDir(join(dir, "c"), join(dir, "b"))).toBe(false);
    expect([readFileSync(join(dir, "b", "x"), "utf8"), readFileSync(join(dir, "c", "y"), "utf8")]).toEqual(["1", "2"]);
    writeFileSync(join(dir, "f"), "file");
    expect(moveDir(join(dir, "c"), join(dir, "f"))).toBe(false);
    expect(readFileSync(join(dir, "f"), "utf8")).toBe("file");
    mkdirSync(join(dir, "empty"));
    expect(moveDir(join(dir, "c"), join(dir, "empty"))).toBe(true);
    expect(readFileSync(join(dir, "empty", "y"), "utf8")).toBe("2");
    // across directories, into a new name
    mkdirSync(join(dir, "sub"));
    expect(moveDir(join(dir, "b"), join(dir, "sub", "b"))).toBe(true);
    expect(readdirSync(join(dir, "sub"))).toEqual(["b"]);
  });

  it("a missing source, a source that is a file and a missing target parent are errors (Node's)", () => {
    const dir = tempDir("durable-move");
    expect(() => moveDir(join(dir, "nope"), join(dir, "t"))).toThrow(expect.objectContaining({ code: "ENOENT" }));
    writeFileSync(join(dir, "f"), "");
    expect(() => moveDir(join(dir, "f"), join(dir, "t"))).toThrow(expect.objectContaining({ code: "ENOTDIR", path: join(dir, "f") }));
    mkdirSync(join(dir, "d"));
    expect(() => moveDir(join(dir, "d"), join(dir, "no", "t"))).toThrow(expect.objectContaining({ code: "ENOENT" }));
    expect(existsSync(join(dir, "d"))).toBe(true);
  });

  it("a process killed at each step leaves the directory whole at one of the two names", async () => {
    const probe = tempDir("durable-move-steps");
    dirWith(join(probe, "a"), "x", "1");
    const steps = join(probe, "steps");
    expect((await runChild(["move", join(probe, "a"), join(probe, "b")], { LAKE_TEST_STEPS: steps })).code).toBe(0);
    const all = readFileSync(steps, "utf8").trim().split("\n").map((l) => l.split(" ")[1]);
    expect(all).toEqual(["move:rename", "move:fsync-dir"]);
    for (const s of all) {
      const dir = tempDir("durable-move-kill");
      dirWith(join(dir, "from", "a"), "x", "payload");
      mkdirSync(join(dir, "to"));
      const r = await runChild(["move", join(dir, "from", "a"), join(dir, "to", "a")], { LAKE_TEST_KILL_AT: s as string });
      expect(r.signal, r.stderr).toBe("SIGKILL");
      const at = s === "move:rename" ? join(dir, "from", "a") : join(dir, "to", "a");
      expect(readFileSync(join(at, "x"), "utf8")).toBe("payload");
      expect(readdirSync(join(dir, "from")).length + readdirSync(join(dir, "to")).length).toBe(1);
    }
  });

  it("six processes moving six prepared directories to one name: exactly one wins, the others keep theirs", async () => {
    const dir = tempDir("durable-move-race");
    const bar = join(dir, "bar");
    mkdirSync(bar);
    for (let i = 0; i < 6; i++) dirWith(join(dir, `p${i}`), "who", String(i));
    const rs = await race(6, bar, (i) => ["move", join(dir, `p${i}`), join(dir, "target")]);
    const winners = rs.flatMap((r, i) => (r.out?.moved === true ? [i] : []));
    for (const r of rs) expect(r.code, r.stderr).toBe(0);
    expect(winners).toHaveLength(1);
    expect(readFileSync(join(dir, "target", "who"), "utf8")).toBe(String(winners[0]));
    for (let i = 0; i < 6; i++) if (i !== winners[0]) expect(readFileSync(join(dir, `p${i}`, "who"), "utf8")).toBe(String(i));
  });
});

const GOLDEN_OWNER: LeaseOwner = {
  pid: 4242,
  host: "build-1.example",
  startedAt: 1795944600000,
  bootId: "4f3c2a6e-8d1b-4c2e-9a57-1f0e6b3d2c11",
  procStart: "1873345",
  acquiredAt: "2026-12-01T09:30:00.000Z",
  token: "9b2f6c0d4e8a41b7a3c5d7e9f1a2b3c4",
};
const GOLDEN_OWNER_TEXT =
  '{"host":"build-1.example","pid":4242,"started_at":1795944600000,"token":"9b2f6c0d4e8a41b7a3c5d7e9f1a2b3c4","boot_id":"4f3c2a6e-8d1b-4c2e-9a57-1f0e6b3d2c11","proc_start":"1873345","acquired_at":"2026-12-01T09:30:00.000Z"}\n';

describe("the directory lease", () => {
  it("owner.json: the golden vector byte for byte, and the record of earlier builds ({host, pid, started_at, token})", () => {
    expect(encodeLeaseOwner(GOLDEN_OWNER)).toBe(GOLDEN_OWNER_TEXT);
    expect(decodeLeaseOwner(GOLDEN_OWNER_TEXT)).toEqual(GOLDEN_OWNER);
    expect(readFileSync(new URL("../README.md", import.meta.url), "utf8")).toContain(GOLDEN_OWNER_TEXT.trim());
    expect(decodeLeaseOwner('{"host":"h","pid":12,"started_at":5,"token":"t"}\n')).toEqual({ host: "h", pid: 12, startedAt: 5, token: "t", acquiredAt: "" });
    for (const t of ["", '{"host":"h","pid":12', '{"host":"h","token":"t"}', "pid 12\nhost h\ntoken t\n"]) expect(decodeLeaseOwner(t)).toBeUndefined();
  });

  it("a held lease is busy for another; release removes it, leaving nothing beside it", () => {
    const root = tempDir("durable-lease");
    const dir = join(root, "watch.lock");
    const a = acquireDirLease(dir);
    if (!a.held) throw new Error("not held");
    expect(decodeLeaseOwner(readFileSync(join(dir, "owner.json"), "utf8"))).toEqual(a.owner);
    expect(a.owner).toMatchObject({ pid: process.pid, host: hostname() });
    expect(dirLeaseOwner(dir)).toMatchObject({ token: a.owner.token, liveness: "alive" });
    expect(acquireDirLease(dir)).toMatchObject({ held: false, owner: { token: a.owner.token } });
    a.release();
    expect(readdirSync(root)).toEqual([]);
    expect(dirLeaseOwner(dir)).toBeUndefined();
  });

  it("a lease of another host is never broken; one without an owner record only after 5 s; a release that lost its lease leaves the new one", () => {
    const root = tempDir("durable-lease");
    const dir = join(root, "watch.lock");
    dirWith(dir, "owner.json", JSON.stringify({ host: "far.example", pid: 1, started_at: 0, token: "far" }));
    expect(acquireDirLease(dir)).toMatchObject({ held: false, owner: { host: "far.example" } });
    dirWith(dir, "owner.json", "");
    expect(acquireDirLease(dir)).toMatchObject({ held: false, owner: undefined });
    const old = (Date.now() - 6_000) / 1000;
    utimesSync(dir, old, old);
    const h = acquireDirLease(dir);
    expect(h).toMatchObject({ held: true, recovered: true });
    if (!h.held) return;
    // a breaker that judged this owner dead took the lease: this release leaves the new owner's alone
    const theirs = JSON.stringify({ host: hostname(), pid: process.pid, started_at: 0, token: "theirs" });
    writeFileSync(join(dir, "owner.json"), theirs);
    h.release();
    expect(readFileSync(join(dir, "owner.json"), "utf8")).toBe(theirs);
  });

  it("eight processes racing for one lease hold it one at a time", async () => {
    const root = tempDir("durable-lease-race");
    const bar = join(root, "bar");
    mkdirSync(bar);
    const log = join(root, "log");
    writeFileSync(log, "");
    const rs = await race(8, bar, () => ["lease", join(root, "watch.lock"), log, "20", "30000"]);
    for (const r of rs) expect(r.out, r.stderr).toEqual({ held: true, recovered: false });
    const lines = readFileSync(log, "utf8").trim().split("\n");
    expect(lines).toHaveLength(16);
    for (let i = 0; i < lines.length; i += 2) expect(lines[i + 1]).toBe(`-${(lines[i] as string).slice(1)}`);
    expect(readdirSync(root).sort()).toEqual(["bar", "log"]);
  });

  it("an owner killed with SIGKILL leaves a lease the next process proves dead and breaks", async () => {
    const root = tempDir("durable-lease-kill");
    const dir = join(root, "watch.lock");
    const child = spawn(process.execPath, [new URL("./bin/child.mjs", import.meta.url).pathname, "hold-lease", dir], { stdio: ["ignore", "pipe", "inherit"] });
    const line = await new Promise<string>((r) => child.stdout.once("data", (d: Buffer) => r(d.toString())));
    expect(JSON.parse(line)).toMatchObject({ held: true });
    expect(acquireDirLease(dir)).toMatchObject({ held: false, owner: { pid: child.pid } });
    child.kill("SIGKILL");
    await new Promise((r) => child.on("close", r));
    expect(dirLeaseOwner(dir)?.liveness).toBe("dead");
    const h = acquireDirLease(dir);
    expect(h).toMatchObject({ held: true, recovered: true });
    if (h.held) h.release();
    expect(readdirSync(root)).toEqual([]);
  });

  it("six processes racing to break one dead owner's lease (an earlier build's record): one owner at a time, nothing left behind", async () => {
    const root = tempDir("durable-lease-break");
    const bar = join(root, "bar");
    mkdirSync(bar);
    const log = join(root, "log");
    writeFileSync(log, "");
    const dir = join(root, "watch.lock");
    dirWith(dir, "owner.json", JSON.stringify({ host: hostname(), pid: await deadPid(), started_at: Date.now() - 60_000, token: "0".repeat(32) }) + "\n");
    const rs = await race(6, bar, () => ["lease", dir, log, "20", "30000"]);
    for (const r of rs) expect(r.out, r.stderr).toMatchObject({ held: true });
    // At most one is told it recovered the dead owner's lease (none, when a claimer slipped into the name
    // between a breaker's move-aside and its claim: the README's "best effort").
    expect(rs.filter((r) => r.out?.recovered === true).length).toBeLessThanOrEqual(1);
    const lines = readFileSync(log, "utf8").trim().split("\n");
    expect(lines).toHaveLength(12);
    for (let i = 0; i < lines.length; i += 2) expect(lines[i + 1]).toBe(`-${(lines[i] as string).slice(1)}`);
    expect(readdirSync(root).sort()).toEqual(["bar", "log"]);
  });

  it("a claimer or breaker killed at every step leaves what the next claimer takes, and sweeps", async () => {
    const deadLease = async (root: string) => {
      const dir = join(root, "watch.lock");
      dirWith(dir, "owner.json", JSON.stringify({ host: hostname(), pid: await deadPid(), started_at: 0, token: "dead" }));
      return dir;
    };
    const probe = tempDir("durable-lease-steps");
    const stepsFile = join(probe, "steps");
    const p = await runChild(["lease", await deadLease(probe), join(probe, "log"), "0", "0"], { LAKE_TEST_STEPS: stepsFile });
    expect(p.out, p.stderr).toEqual({ held: true, recovered: true });
    const all = readFileSync(stepsFile, "utf8").trim().split("\n").map((l) => l.split(" ")[1]);
    expect(all).toEqual(["lease:prepare", "lease:claim", "lock:create", "lease:break", "lease:move-aside", "lease:claim", "lease:remove", "release:move-aside", "release:remove"]);
    for (const [i, s] of all.entries()) {
      const root = tempDir("durable-lease-kill");
      const dir = await deadLease(root);
      const r = await runChild(["lease", dir, join(root, "log"), "0", "0"], { LAKE_TEST_KILL_AT: String(i + 1) });
      expect(r.signal, `${s}: ${r.stderr}`).toBe("SIGKILL");
      // whatever it left beside the lease is hidden (a storage root never takes it for a session)
      expect(readdirSync(root).filter((n) => n !== "log" && n !== "watch.lock" && !n.startsWith(".watch.lock.")), s).toEqual([]);
      const h = acquireDirLease(dir);
      expect(h, s).toMatchObject({ held: true });
      if (h.held) h.release();
      // what a killed claimer or breaker leaves (a prepared directory, an aside copy, the break guard) is gone
      expect(readdirSync(root).filter((n) => n !== "log"), s).toEqual([]);
    }
  });
});

describe("scratchDir", () => {
  const hold = async (parent: string, prefix: string) => {
    const child = spawn(process.execPath, [new URL("./bin/child.mjs", import.meta.url).pathname, "scratch", parent, prefix], { stdio: ["ignore", "pipe", "inherit"] });
    const line = await new Promise<string>((r) => child.stdout.once("data", (d: Buffer) => r(d.toString())));
    return { child, dir: (JSON.parse(line) as { dir: string }).dir };
  };

  it("is private and removed whole by done(); a killed owner's (and a killed claimer's prepared one) is removed by the next of its prefix, a live owner's, another prefix's and an owner-less one are not", async () => {
    const parent = tempDir("durable-scratch");
    const own = scratchDir("lake-test", { parent });
    expect(own.dir.startsWith(join(parent, "lake-test-"))).toBe(true);
    expect(statSync(own.dir).mode & 0o777).toBe(0o700);
    writeFileSync(join(own.dir, "part.parquet"), "x");
    own.done();
    expect(readdirSync(parent)).toEqual([]);

    const killed = await hold(parent, "lake-test");
    const live = await hold(parent, "lake-test");
    const other = await hold(parent, "lake-other");
    mkdirSync(join(parent, "lake-test-older-build"));
    killed.child.kill("SIGKILL");
    other.child.kill("SIGKILL");
    await Promise.all([killed, other].map((c) => new Promise((r) => c.child.on("close", r))));
    expect(dirLeaseOwner(killed.dir)?.liveness).toBe("dead");
    expect(existsSync(join(killed.dir, "spill.tmp"))).toBe(true);

    // and one killed while taking its lease (a prepared directory beside its name)
    const claimer = await runChild(["scratch", parent, "lake-test"], { LAKE_TEST_KILL_AT: "lease:claim" });
    expect(claimer.signal).toBe("SIGKILL");
    expect(readdirSync(parent).filter((n) => n.startsWith(".lake-test-"))).toHaveLength(1);
    const next = scratchDir("lake-test", { parent });
    expect(existsSync(killed.dir)).toBe(false);
    expect(existsSync(join(live.dir, "spill.tmp"))).toBe(true);
    expect(existsSync(join(other.dir, "spill.tmp"))).toBe(true);
    expect(existsSync(join(parent, "lake-test-older-build"))).toBe(true);
    next.done();
    // nothing of the sweep is left beside them (no prepared, aside or break entries)
    expect(readdirSync(parent).sort()).toEqual([basename(live.dir), basename(other.dir), "lake-test-older-build"].sort());
    expect(removeAbandoned("lake-other", parent)).toBe(1);
    expect(removeAbandoned("lake-test", parent)).toBe(0);
    live.child.kill("SIGKILL");
    await new Promise((r) => live.child.on("close", r));
    expect(removeAbandoned("lake-test", parent)).toBe(1);
    expect(readdirSync(parent)).toEqual(["lake-test-older-build"]);
  });
});

// The one lock file: golden holder format, real racing processes, a killed holder, racing breakers.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { acquireLock, decodeHolder, encodeHolder, holderLiveness, lockHolder, processAlive, tryLock, type LockHolder } from "@lake/durable";
import { race, runChild } from "./support.js";

afterAll(cleanupTempDirs);

/** A pid that was alive and is now gone (a child that exited). */
async function deadPid(): Promise<number> {
  const p = spawn(process.execPath, ["-e", "0"]);
  await new Promise((r) => p.on("close", r));
  return p.pid as number;
}

const GOLDEN_HOLDER: LockHolder = {
  pid: 4242,
  host: "build-1.example",
  bootId: "4f3c2a6e-8d1b-4c2e-9a57-1f0e6b3d2c11",
  procStart: "1873345",
  acquiredAt: "2026-12-01T09:30:00.000Z",
  token: "9b2f6c0d4e8a41b7a3c5d7e9f1a2b3c4",
};
const GOLDEN_TEXT = "pid 4242\nhost build-1.example\nboot_id 4f3c2a6e-8d1b-4c2e-9a57-1f0e6b3d2c11\nproc_start 1873345\nacquired_at 2026-12-01T09:30:00.000Z\ntoken 9b2f6c0d4e8a41b7a3c5d7e9f1a2b3c4\n";
const JSON_TEXT =
  '{"pid":4242,"host":"build-1.example","boot_id":"4f3c2a6e-8d1b-4c2e-9a57-1f0e6b3d2c11","proc_start":"1873345","acquired_at":"2026-12-01T09:30:00.000Z","token":"9b2f6c0d4e8a41b7a3c5d7e9f1a2b3c4"}\n';

describe("the holder format", () => {
  it("encodes the golden vector byte for byte and decodes it back", () => {
    expect(encodeHolder(GOLDEN_HOLDER)).toBe(GOLDEN_TEXT);
    expect(decodeHolder(GOLDEN_TEXT)).toEqual(GOLDEN_HOLDER);
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    expect(readme).toContain(GOLDEN_TEXT.trim());
  });

  it("the lines parse with the readers of older builds: the store's key/value decoder and the chain's line pattern", () => {
    // The chain's reader before @lake/durable: /^(\S+) (.*)$/ per line, pid, host and token required.
    const chain = new Map(GOLDEN_TEXT.split("\n").flatMap((l) => { const m = /^(\S+) (.*)$/.exec(l); return m ? [[m[1]!, m[2]!] as const] : []; }));
    expect([Number(chain.get("pid")), chain.get("host"), chain.get("token")]).toEqual([4242, "build-1.example", GOLDEN_HOLDER.token]);
    // The store's: key up to the first space or tab, then the value; a line without both was Corrupt.
    for (const l of GOLDEN_TEXT.trimEnd().split("\n")) expect(l).toMatch(/^[^ \t]+[ \t]+\S/);
  });

  it("reads the one-line JSON holder of the builds in between", () => {
    expect(decodeHolder(JSON_TEXT)).toEqual(GOLDEN_HOLDER);
  });

  it("reads the key/value locks of the store and the chain written before it", () => {
    expect(decodeHolder("pid           12\nhost          h\nboot_id       b\nproc_start    9\nacquired_at   2026-01-01T00:00:00Z\ntoken         t\n")).toEqual({
      pid: 12,
      host: "h",
      bootId: "b",
      procStart: "9",
      acquiredAt: "2026-01-01T00:00:00Z",
      token: "t",
    });
    expect(decodeHolder("pid 7\nhost h\ntoken abc\n")).toEqual({ pid: 7, host: "h", acquiredAt: "", token: "abc" });
  });

  it("names no holder for empty, torn or incomplete text", () => {
    for (const t of ["", "\n", '{"pid":12,"host":"h"', '{"pid":0,"host":"h","token":"t"}', "[1]", "pid 12\nhost h\n"]) expect(decodeHolder(t)).toBeUndefined();
  });

  it("a taken lock file is the holder lines of this process", async () => {
    const dir = tempDir("durable-lock");
    const h = await acquireLock(join(dir, ".lock"));
    if (!h.held) throw new Error("not held");
    const on = decodeHolder(readFileSync(join(dir, ".lock"), "utf8"));
    expect(on).toMatchObject({ pid: process.pid, host: hostname(), token: h.token });
    expect(readFileSync(join(dir, ".lock"), "utf8")).toBe(encodeHolder(on as LockHolder));
    expect(lockHolder(join(dir, ".lock"))?.liveness).toBe("alive");
    h.release();
    expect(existsSync(join(dir, ".lock"))).toBe(false);
    expect(lockHolder(join(dir, ".lock"))).toBeUndefined();
  });
});

describe("liveness", () => {
  it("proves dead only on this host: gone pid, reused pid, earlier boot", async () => {
    const base = { host: hostname(), acquiredAt: "", token: "t" };
    expect(processAlive(process.pid)).toBe(true);
    const gone = await deadPid();
    expect(processAlive(gone)).toBe(false);
    expect(holderLiveness({ ...base, pid: gone })).toBe("dead");
    expect(holderLiveness({ ...base, pid: process.pid, procStart: "1" })).toBe("dead"); // same pid, other process
    expect(holderLiveness({ ...base, pid: process.pid, bootId: "another-boot" })).toBe("dead");
    expect(holderLiveness({ ...base, pid: process.pid })).toBe("alive");
    expect(holderLiveness({ ...base, host: "elsewhere.example", pid: gone })).toBe("unknown");
  });
});

describe("one process at a time", () => {
  it("a held lock is busy for another; a token release never removes a lock it lost", async () => {
    const dir = tempDir("durable-lock");
    const path = join(dir, ".lock");
    const a = tryLock(path);
    if (!a.held) throw new Error("not held");
    const b = await acquireLock(path, { waitMs: 50 });
    expect(b).toMatchObject({ held: false, holder: { pid: process.pid, token: a.token } });
    // someone replaced the file (a breaker that judged us dead): our release leaves theirs alone
    writeFileSync(path, encodeHolder({ pid: process.pid, host: hostname(), acquiredAt: "", token: "theirs" }));
    a.release();
    expect(decodeHolder(readFileSync(path, "utf8"))?.token).toBe("theirs");
  });

  it("a lock from another host is never broken; an empty one only after 5 s", async () => {
    const dir = tempDir("durable-lock");
    const path = join(dir, ".lock");
    writeFileSync(path, encodeHolder({ pid: 1, host: "far.example", acquiredAt: "", token: "far" }));
    expect(tryLock(path)).toMatchObject({ held: false, holder: { host: "far.example" } });
    writeFileSync(path, "");
    expect(tryLock(path)).toMatchObject({ held: false, holder: undefined });
    const old = (Date.now() - 6_000) / 1000;
    utimesSync(path, old, old);
    const h = tryLock(path);
    expect(h).toMatchObject({ held: true, recovered: true });
    if (h.held) h.release();
  });

  it("a lock of every earlier build's format is judged by its holder: a dead one here is broken at once, another host's never", async () => {
    const dir = tempDir("durable-lock-formats");
    const path = join(dir, ".lock");
    const gone = await deadPid();
    const formats = (pid: number, host: string): string[] => [
      `pid           ${pid}\nhost          ${host}\nacquired_at   2026-01-01T00:00:00Z\ntoken         t\n`, // the store's padded lines
      `pid ${pid}\nhost ${host}\ntoken t\n`, // the chain's lines
      JSON.stringify({ pid, host, acquired_at: "2026-01-01T00:00:00Z", token: "t" }), // the one-line JSON in between
      JSON.stringify({ pid, host, nonce: "t", t: Date.now() }), // the layout's key locks
    ];
    for (const text of formats(gone, hostname())) {
      writeFileSync(path, text);
      expect(lockHolder(path)?.liveness, text).toBe("dead");
      const h = tryLock(path);
      expect(h, text).toMatchObject({ held: true, recovered: true });
      if (h.held) h.release();
    }
    for (const text of formats(gone, "far.example")) {
      writeFileSync(path, text);
      expect(tryLock(path), text).toMatchObject({ held: false, holder: { pid: gone, host: "far.example" } });
    }
    for (const text of formats(process.pid, hostname())) {
      writeFileSync(path, text);
      expect(tryLock(path), text).toMatchObject({ held: false, holder: { pid: process.pid } });
    }
  });

  it("eight processes racing for one lock hold it one at a time", async () => {
    const dir = tempDir("durable-race");
    const bar = join(dir, "bar");
    mkdirSync(bar);
    const log = join(dir, "log");
    writeFileSync(log, "");
    const rs = await race(8, bar, () => ["lock", join(dir, ".lock"), log, "20", "30000"]);
    for (const r of rs) expect(r.out, r.stderr).toEqual({ held: true, recovered: false });
    const lines = readFileSync(log, "utf8").trim().split("\n");
    expect(lines).toHaveLength(16);
    // never two holders: every "+pid" is followed by that pid's "-pid"
    for (let i = 0; i < lines.length; i += 2) expect(lines[i + 1]).toBe(`-${(lines[i] as string).slice(1)}`);
    expect(existsSync(join(dir, ".lock"))).toBe(false);
  });

  it("a holder killed with SIGKILL leaves a lock the next process proves dead and breaks", async () => {
    const dir = tempDir("durable-kill");
    const path = join(dir, ".lock");
    const child = spawn(process.execPath, [new URL("./bin/child.mjs", import.meta.url).pathname, "hold", path], { stdio: ["ignore", "pipe", "inherit"] });
    const line = await new Promise<string>((r) => child.stdout.once("data", (d: Buffer) => r(d.toString())));
    expect(JSON.parse(line)).toMatchObject({ held: true });
    expect(tryLock(path)).toMatchObject({ held: false, holder: { pid: child.pid } });
    child.kill("SIGKILL");
    await new Promise((r) => child.on("close", r));
    expect(lockHolder(path)?.liveness).toBe("dead");
    const h = tryLock(path);
    expect(h).toMatchObject({ held: true, recovered: true });
    if (h.held) h.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("six processes racing to break one dead holder's lock: one holder at a time, nothing left behind", async () => {
    const dir = tempDir("durable-break");
    const bar = join(dir, "bar");
    mkdirSync(bar);
    const log = join(dir, "log");
    writeFileSync(log, "");
    const path = join(dir, ".lock");
    writeFileSync(path, encodeHolder({ pid: await deadPid(), host: hostname(), acquiredAt: "", token: "dead" }));
    const rs = await race(6, bar, () => ["lock", path, log, "20", "30000"]);
    for (const r of rs) expect(r.out, r.stderr).toMatchObject({ held: true });
    expect(rs.some((r) => r.out?.recovered === true)).toBe(true);
    const lines = readFileSync(log, "utf8").trim().split("\n");
    expect(lines).toHaveLength(12);
    for (let i = 0; i < lines.length; i += 2) expect(lines[i + 1]).toBe(`-${(lines[i] as string).slice(1)}`);
    expect(readdirSync(dir).sort()).toEqual(["bar", "log"]);
  });

  it("a breaker killed at the break leaves a lock the next one still takes", async () => {
    const dir = tempDir("durable-break-kill");
    const path = join(dir, ".lock");
    writeFileSync(path, encodeHolder({ pid: await deadPid(), host: hostname(), acquiredAt: "", token: "dead" }));
    const r = await runChild(["lock", path, join(dir, "log"), "0", "0"], { LAKE_TEST_KILL_AT: "lock:break" });
    expect(r.signal, r.stderr).toBe("SIGKILL");
    expect(existsSync(`${path}.break`)).toBe(true); // the killed breaker's guard, itself a dead holder's lock
    const h = await acquireLock(path, { waitMs: 1000 });
    expect(h).toMatchObject({ held: true, recovered: true });
    if (h.held) h.release();
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("key locks held for milliseconds (staleAfterMs)", () => {
  it("a lock older than staleAfterMs is broken whatever its host; a fresh foreign one waits; the layout's old format is read", async () => {
    const dir = tempDir("durable-age");
    const path = join(dir, "k.lock");
    expect(decodeHolder(JSON.stringify({ pid: 9, host: "h", nonce: "n1", t: 0 }))).toEqual({ pid: 9, host: "h", token: "n1", acquiredAt: "" }); // t 0: no time
    expect(decodeHolder(JSON.stringify({ pid: 9, host: "h", nonce: "n1", t: Date.parse("2026-01-01T00:00:00Z") }))).toEqual({
      pid: 9,
      host: "h",
      token: "n1",
      acquiredAt: "2026-01-01T00:00:00.000Z",
    });
    writeFileSync(path, JSON.stringify({ pid: 1, host: "elsewhere.example", nonce: "old", t: Date.now() - 120_000 }));
    expect(tryLock(path)).toMatchObject({ held: false }); // no age rule asked for: another host's lock stands
    const h = tryLock(path, { staleAfterMs: 30_000 });
    expect(h).toMatchObject({ held: true, recovered: true });
    if (h.held) h.release();
    writeFileSync(path, encodeHolder({ pid: 1, host: "elsewhere.example", acquiredAt: new Date().toISOString(), token: "live" }));
    const t0 = Date.now();
    expect(await acquireLock(path, { waitMs: 200, staleAfterMs: 30_000, maxPollMs: 20 })).toMatchObject({ held: false, holder: { token: "live" } });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
  });
});

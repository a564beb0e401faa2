// Atomic replace and install without replace: a process killed at every step, real racing processes,
// and the directory-fsync error policy.
import { chmodSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { DIR_FSYNC_TOLERATED, envStepHook, fsyncDir, fsyncDirAsync, fsyncFile, installFrom, installNoReplace, replaceFrom, writeAtomic, type InstallMode } from "@lake/durable";
import { race, runChild } from "./support.js";

afterAll(cleanupTempDirs);

const OLD = "old content\n";
const NEW = `new content ${"x".repeat(60_000)}\n`;

function steps(label: string, args: string[]): Promise<string[]> {
  return (async () => {
    const dir = tempDir("durable-steps");
    const file = join(dir, "steps");
    const r = await runChild(args, { LAKE_TEST_STEPS: file });
    expect(r.code, r.stderr).toBe(0);
    return readFileSync(file, "utf8").trim().split("\n").map((l) => l.split(" ")[1] as string).filter((s) => s.startsWith(`${label}:`));
  })();
}

describe("writeAtomic", () => {
  it("replaces a file's content, keeps no temporary file, takes the given mode", () => {
    const dir = tempDir("durable-replace");
    const p = join(dir, "state");
    writeAtomic(p, OLD);
    writeAtomic(p, [Buffer.from("a"), Buffer.from("b")], { mode: 0o644 });
    expect(readFileSync(p, "utf8")).toBe("ab");
    expect(statSync(p).mode & 0o777).toBe(0o644);
    expect(readdirSync(dir)).toEqual(["state"]);
  });

  it("a process killed at every step leaves the old content or the new, never a mix", async () => {
    const probe = tempDir("durable-replace");
    const all = await steps("replace", ["replace", join(probe, "f"), NEW]);
    expect(all).toEqual(["replace:write-temp", "replace:fsync-temp", "replace:rename", "replace:fsync-dir"]);
    for (const [i, s] of all.entries()) {
      const dir = tempDir("durable-replace-kill");
      const p = join(dir, "f");
      writeFileSync(p, OLD);
      const r = await runChild(["replace", p, NEW], { LAKE_TEST_KILL_AT: s });
      expect(r.signal, `${s}: ${r.stderr}`).toBe("SIGKILL");
      expect(readFileSync(p, "utf8")).toBe(i >= all.indexOf("replace:fsync-dir") ? NEW : OLD);
      // a kill may leave a temporary file beside it (callers sweep `.tmp-*`), never anything else
      for (const n of readdirSync(dir)) if (n !== "f") expect(n.startsWith(".tmp-f-")).toBe(true);
    }
  });

  it("by step number (LAKE_TEST_KILL_AT=N) the same as by name", async () => {
    const dir = tempDir("durable-replace-kill");
    const p = join(dir, "f");
    writeFileSync(p, OLD);
    const r = await runChild(["replace", p, NEW], { LAKE_TEST_KILL_AT: "3" }); // replace:rename
    expect(r.signal).toBe("SIGKILL");
    expect(readFileSync(p, "utf8")).toBe(OLD);
    expect(envStepHook({})).toBeUndefined();
  });

  it("a failed write removes its temporary file and throws the Node error", () => {
    const dir = tempDir("durable-replace");
    expect(() => writeAtomic(join(dir, "missing", "f"), OLD)).toThrow(expect.objectContaining({ code: "ENOENT" }));
    mkdirSync(join(dir, "target"));
    expect(() => writeAtomic(join(dir, "target"), OLD)).toThrow(expect.objectContaining({ code: "EISDIR" }));
    expect(readdirSync(dir)).toEqual(["target"]);
  });
});

describe("installNoReplace", () => {
  for (const mode of ["link", "reserve"] as const satisfies readonly InstallMode[]) {
    it(`${mode}: installs once, read-only; a second install leaves the first untouched`, () => {
      const dir = tempDir("durable-install");
      const p = join(dir, "land-1.sd");
      expect(installNoReplace(p, NEW, { installMode: mode, readOnly: true })).toEqual({ installed: true, mode });
      expect(statSync(p).mode & 0o777).toBe(0o444);
      expect(installNoReplace(p, OLD, { installMode: mode })).toEqual({ installed: false });
      expect(readFileSync(p, "utf8")).toBe(NEW);
      expect(readdirSync(dir)).toEqual(["land-1.sd"]);
    });

    it(`${mode}: six processes racing for one name: exactly one installs, its bytes are the file`, async () => {
      const dir = tempDir("durable-install-race");
      const bar = join(dir, "bar");
      mkdirSync(bar);
      const p = join(dir, "r1.sf");
      const rs = await race(6, bar, (i) => ["install", p, `racer ${i} ${NEW}`, mode]);
      const winners = rs.map((r, i) => [r, i] as const).filter(([r]) => r.out?.installed === true);
      expect(rs.map((r) => r.stderr).join("")).toBe("");
      expect(winners).toHaveLength(1);
      expect(readFileSync(p, "utf8")).toBe(`racer ${winners[0]?.[1]} ${NEW}`);
      expect(readdirSync(dir).sort()).toEqual(["bar", "r1.sf"]);
    });

    it(`${mode}: a process killed at every step leaves no partial file (at most an empty reservation)`, async () => {
      const probe = tempDir("durable-install");
      const all = await steps("land", ["install", join(probe, "f"), NEW, mode]);
      expect(all).toEqual(
        mode === "link"
          ? ["land:write-temp", "land:fsync-temp", "land:chmod", "land:link", "land:unlink-temp", "land:fsync-dir"]
          : ["land:write-temp", "land:fsync-temp", "land:chmod", "land:reserve", "land:rename", "land:fsync-dir"],
      );
      for (const s of all) {
        const dir = tempDir("durable-install-kill");
        const p = join(dir, "f");
        const r = await runChild(["install", p, NEW, mode], { LAKE_TEST_KILL_AT: s });
        expect(r.signal, `${s}: ${r.stderr}`).toBe("SIGKILL");
        const past = all.indexOf(s) > all.indexOf(mode === "link" ? "land:link" : "land:rename");
        if (past) expect(readFileSync(p, "utf8")).toBe(NEW);
        else if (s === "land:rename") expect(statSync(p).size).toBe(0); // the reservation
        else expect(existsSync(p)).toBe(false);
        // the next install of the name: refused when it is there, else it succeeds whole
        const again = installNoReplace(p, NEW, { installMode: mode });
        expect(again.installed).toBe(!past && s !== "land:rename");
      }
    });
  }

  it("the link mode falls back to a reservation where the file system has no hard links", async () => {
    // /proc has neither links nor writes; a real no-link file system (exFAT, some FUSE) is not mountable here,
    // so the fallback is proven through the error link(2) gives on one: EXDEV across file systems.
    const { linkUnsupported } = await import("@lake/durable");
    for (const code of ["ENOTSUP", "EOPNOTSUPP", "EPERM", "ENOSYS", "EXDEV"]) expect(linkUnsupported(Object.assign(new Error(code), { code }))).toBe(true);
    expect(linkUnsupported(Object.assign(new Error("x"), { code: "EEXIST" }))).toBe(false);
  });

  it("without reserveFallback a link the file system refuses is an error, and nothing is left under the name", () => {
    // A real refusal: link(2) across two file systems gives EXDEV (the temporary file on /dev/shm).
    const dir = tempDir("durable-nolink");
    const shm = mkdtempSync(join("/dev/shm", "durable-"));
    try {
      const tmp = join(shm, "t");
      writeFileSync(tmp, NEW);
      expect(() => installFrom(tmp, join(dir, "obj"))).toThrow(/EXDEV/);
      expect(existsSync(join(dir, "obj"))).toBe(false);
      expect(existsSync(tmp)).toBe(false);
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });

  it("an EEXIST for a link that was made (NFS retransmission: the temporary file has two names) is an install", () => {
    const dir = tempDir("durable-nfs");
    const tmp = join(dir, "t");
    writeFileSync(tmp, NEW);
    linkSync(tmp, join(dir, "obj")); // the first LINK reached the server; its reply was lost
    expect(installFrom(tmp, join(dir, "obj"))).toEqual({ installed: true, mode: "link" });
    expect(readFileSync(join(dir, "obj"), "utf8")).toBe(NEW);
    expect(existsSync(tmp)).toBe(false);
    // Someone else's file under the name is still a taken name.
    writeFileSync(join(dir, "t2"), NEW);
    expect(installFrom(join(dir, "t2"), join(dir, "obj"))).toEqual({ installed: false });
  });
});

describe("replaceFrom and installFrom (a temporary file the caller wrote)", () => {
  it("replaceFrom renames over the target, syncing the temporary first when asked; a missing directory keeps it on request", () => {
    const dir = tempDir("durable-from");
    const steps: string[] = [];
    writeFileSync(join(dir, "t1"), NEW);
    writeFileSync(join(dir, "out"), OLD);
    replaceFrom(join(dir, "t1"), join(dir, "out"), { syncTemp: true, label: "x", step: (s) => void steps.push(s) });
    expect(steps).toEqual(["x:fsync-temp", "x:rename", "x:fsync-dir"]);
    expect(readFileSync(join(dir, "out"), "utf8")).toBe(NEW);
    writeFileSync(join(dir, "t2"), OLD);
    expect(() => replaceFrom(join(dir, "t2"), join(dir, "no", "out"), { keepTempOnMissingDir: true })).toThrow(expect.objectContaining({ code: "ENOENT" }));
    expect(existsSync(join(dir, "t2"))).toBe(true);
    expect(() => replaceFrom(join(dir, "t2"), join(dir, "no", "out"))).toThrow(expect.objectContaining({ code: "ENOENT" }));
    expect(readdirSync(dir)).toEqual(["out"]);
  });

  it("installFrom never replaces and always consumes the temporary file", () => {
    const dir = tempDir("durable-from");
    writeFileSync(join(dir, "t1"), NEW);
    expect(installFrom(join(dir, "t1"), join(dir, "obj"))).toEqual({ installed: true, mode: "link" });
    writeFileSync(join(dir, "t2"), OLD);
    expect(installFrom(join(dir, "t2"), join(dir, "obj"), { installMode: "reserve" })).toEqual({ installed: false });
    expect(readFileSync(join(dir, "obj"), "utf8")).toBe(NEW);
    expect(readdirSync(dir)).toEqual(["obj"]);
  });
});

describe("fsync", () => {
  it("syncs a file by descriptor or path and a directory; a missing one throws ENOENT", () => {
    const dir = tempDir("durable-fsync");
    writeFileSync(join(dir, "f"), "x");
    fsyncFile(join(dir, "f"));
    fsyncDir(dir);
    expect(() => fsyncDir(join(dir, "gone"))).toThrow(expect.objectContaining({ code: "ENOENT" }));
    expect(() => fsyncFile(join(dir, "gone"))).toThrow(expect.objectContaining({ code: "ENOENT" }));
  });

  it("fsyncDirAsync keeps fsyncDir's policy: a directory syncs, a missing one rejects ENOENT, a file is refused as a directory", async () => {
    const dir = tempDir("durable-fsync");
    writeFileSync(join(dir, "f"), "x");
    await expect(fsyncDirAsync(dir)).resolves.toBeUndefined();
    await expect(fsyncDirAsync(join(dir, "gone"))).rejects.toMatchObject({ code: "ENOENT" });
    // Opening a plain file "r" and fsyncing it works on Linux: what is tolerated is only what fsyncDir tolerates.
    await expect(fsyncDirAsync(join(dir, "f"))).resolves.toBeUndefined();
  });

  it("callerSyncsDir leaves the directory fsync to the caller: no fsync-dir step, the name is in place", () => {
    const dir = tempDir("durable-fsync");
    const steps: string[] = [];
    writeFileSync(join(dir, "t1"), "one");
    replaceFrom(join(dir, "t1"), join(dir, "out"), { label: "x", callerSyncsDir: true, step: (s) => void steps.push(s) });
    writeFileSync(join(dir, "t2"), "two");
    const r = installFrom(join(dir, "t2"), join(dir, "new"), { label: "y", callerSyncsDir: true, step: (s) => void steps.push(s) });
    expect(r.installed).toBe(true);
    expect(steps).toEqual(["x:rename", "y:link", "y:unlink-temp"]);
    expect(readFileSync(join(dir, "out"), "utf8")).toBe("one");
    expect(readFileSync(join(dir, "new"), "utf8")).toBe("two");
    expect(readdirSync(dir).sort()).toEqual(["new", "out"]);
  });

  it("a directory it may not open is an error, not one of the tolerated refusals", () => {
    if (process.getuid?.() === 0) return expect(DIR_FSYNC_TOLERATED).toContain("EINVAL");
    const dir = tempDir("durable-fsync");
    mkdirSync(join(dir, "closed"));
    chmodSync(join(dir, "closed"), 0o000);
    try {
      expect(() => fsyncDir(join(dir, "closed"))).toThrow(expect.objectContaining({ code: "EACCES" }));
    } finally {
      chmodSync(join(dir, "closed"), 0o755);
    }
    expect(DIR_FSYNC_TOLERATED).toEqual(["EINVAL", "EISDIR", "EPERM", "ENOTSUP", "EOPNOTSUPP"]);
  });
});

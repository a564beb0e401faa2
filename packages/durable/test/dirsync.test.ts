// DirSync: several entries of a directory made durable by one directory fsync. Counted by the step
// hook (one `fsync-dir` step per directory fsync), killed at every step of a batch of replaces, an
// install's barrier covering what was pending in its directory, and the fsync error policy.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { DirSync, installNoReplace, writeAtomic } from "@lake/durable";
import { runChild } from "./support.js";

afterAll(cleanupTempDirs);

const OLD = "old\n";
const NEW = `new ${"y".repeat(10_000)}\n`;

describe("DirSync", () => {
  it("n replaces in one directory: n file fsyncs, one directory fsync at flush", () => {
    const dir = tempDir("dirsync");
    const steps: string[] = [];
    const step = (s: string) => void steps.push(s);
    const batch = new DirSync({ step });
    for (let i = 0; i < 5; i++) writeAtomic(join(dir, `f${i}`), `v${i}\n`, { label: "w", dirSync: batch, step });
    expect(steps.filter((s) => s.endsWith("fsync-dir"))).toEqual([]);
    expect(batch.pending()).toEqual([dir]);
    batch.flush();
    expect(steps.filter((s) => s.endsWith(":fsync-temp"))).toHaveLength(5);
    expect(steps.filter((s) => s.endsWith(":fsync-dir"))).toEqual(["dirs:fsync-dir"]);
    expect(batch).toMatchObject({ synced: 1, saved: 4 });
    expect(batch.pending()).toEqual([]);
    for (let i = 0; i < 5; i++) expect(readFileSync(join(dir, `f${i}`), "utf8")).toBe(`v${i}\n`);
    // Flushed: a second flush syncs nothing.
    batch.flush();
    expect(steps.filter((s) => s.endsWith(":fsync-dir"))).toHaveLength(1);
  });

  it("an install fsyncs its directory at once and covers the replaces pending there; other directories stay pending", () => {
    const root = tempDir("dirsync-install");
    const a = join(root, "a");
    const b = join(root, "b");
    mkdirSync(a);
    mkdirSync(b);
    const steps: string[] = [];
    const step = (s: string) => void steps.push(s);
    const batch = new DirSync({ step });
    writeAtomic(join(a, "cursor"), "1\n", { dirSync: batch, step });
    writeAtomic(join(b, "cursor"), "1\n", { dirSync: batch, step });
    expect(batch.pending()).toEqual([a, b]);
    expect(installNoReplace(join(a, "landed-2"), "data\n", { dirSync: batch, step })).toMatchObject({ installed: true });
    expect(steps.filter((s) => s.endsWith(":fsync-dir"))).toEqual(["land:fsync-dir"]);
    expect(batch.pending()).toEqual([b]);
    batch.flush();
    expect(steps.filter((s) => s.endsWith(":fsync-dir"))).toEqual(["land:fsync-dir", "dirs:fsync-dir"]);
    expect(batch).toMatchObject({ synced: 1, saved: 1 });
  });

  it("a process killed at every step of a batch leaves each file old or new, never a mix, and nothing but temporary files", async () => {
    const probe = tempDir("dirsync-steps");
    const stepsFile = join(probe, "steps");
    const r0 = await runChild(["batch", probe, NEW, "3"], { LAKE_TEST_STEPS: stepsFile });
    expect(r0.code, r0.stderr).toBe(0);
    expect(r0.out).toEqual({ synced: 1, saved: 2 });
    const all = readFileSync(stepsFile, "utf8").trim().split("\n").map((l) => l.split(" ")[1]);
    expect(all).toEqual([
      "batch:write-temp", "batch:fsync-temp", "batch:rename",
      "batch:write-temp", "batch:fsync-temp", "batch:rename",
      "batch:write-temp", "batch:fsync-temp", "batch:rename",
      "dirs:fsync-dir",
    ]);
    for (let n = 1; n <= all.length; n++) {
      const dir = tempDir("dirsync-kill");
      for (let i = 1; i <= 3; i++) writeFileSync(join(dir, `f${i}`), OLD);
      const r = await runChild(["batch", dir, NEW, "3"], { LAKE_TEST_KILL_AT: String(n) });
      expect(r.signal, `step ${n}: ${r.stderr}`).toBe("SIGKILL");
      // File i is renamed at step 3i: killed before it, the old content; at or after the step after it, the new.
      for (let i = 1; i <= 3; i++) expect(readFileSync(join(dir, `f${i}`), "utf8"), `step ${n}, f${i}`).toBe(n > 3 * i ? NEW : OLD);
      for (const f of readdirSync(dir)) if (!/^f\d$/.test(f)) expect(f).toMatch(/^\.tmp-f\d-[0-9a-f]{12}$/);
    }
  });

  it("a directory that cannot be synced throws at flush and stays pending (with the ones after it)", () => {
    const root = tempDir("dirsync-error");
    const gone = join(root, "gone");
    const kept = join(root, "kept");
    mkdirSync(gone);
    mkdirSync(kept);
    const batch = new DirSync();
    writeAtomic(join(gone, "x"), "1\n", { dirSync: batch });
    writeAtomic(join(kept, "y"), "1\n", { dirSync: batch });
    rmSync(gone, { recursive: true });
    expect(() => batch.flush()).toThrow(expect.objectContaining({ code: "ENOENT" }));
    expect(batch.pending()).toEqual([gone, kept]);
  });
});

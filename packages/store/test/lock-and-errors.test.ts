import { afterAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { acquireLock, defaultRoot, isStoreError, lockHolder, openSession, StoreError } from "../src/index.js";

afterAll(cleanupTempDirs);

// The lock's mechanics (holder format, proven-dead and foreign holders, empty and torn lock files,
// racing and killed breakers) are @lake/durable's, tested once in packages/durable/test/lock.test.ts;
// here: what the store makes of it (Locked with the holder, the wait, release on close). A session
// whose holder was killed opening again is crash.test.ts's (every kill leaves a lock).
describe("session lock", () => {
  it("a second opener gets Locked with the holder; after close it can open", async () => {
    const root = tempDir("store-lock");
    const a = await openSession(root, "s");
    let err: unknown;
    try {
      await openSession(root, "s");
    } catch (e) {
      err = e;
    }
    expect(isStoreError(err) && err.code).toBe("Locked");
    expect((err as StoreError).data).toMatchObject({ pid: process.pid, host: hostname() });
    expect((err as Error).message).toContain(join(root, "s", ".lock"));
    expect(lockHolder(join(root, "s"))).toMatchObject({ pid: process.pid, host: hostname(), liveness: "alive" });
    a.close();
    expect(existsSync(join(root, "s", ".lock"))).toBe(false);
    const b = await openSession(root, "s");
    b.close();
  });

  it("waits for a lock until it is released", async () => {
    const root = tempDir("store-lock");
    mkdirSync(join(root, "s"));
    const h = await acquireLock(join(root, "s"));
    setTimeout(() => h.release(), 200);
    const s = await openSession(root, "s", { waitMs: 10_000 });
    s.close();
  });
});

describe("errors and defaults", () => {
  it("a StoreError has its code, typed data and cause; isStoreError refuses any other error", () => {
    const e = new StoreError("Corrupt", "x: bad", { data: { file: "x" }, cause: new Error("inner") });
    expect(isStoreError(e)).toBe(true);
    expect(isStoreError(e, "Corrupt")).toBe(true);
    expect(isStoreError(e, "Io")).toBe(false);
    expect(e.name).toBe("StoreError");
    expect(e.data.file).toBe("x");
    expect(e.cause).toBeInstanceOf(Error);
    // Across two real builds of the package: apps/reader/test/error-brands.test.ts.
    expect(isStoreError(Object.assign(new Error("y"), { code: "Corrupt", name: "StoreError" }))).toBe(false);
    expect(isStoreError(new Error("z"))).toBe(false);
    expect(isStoreError(null)).toBe(false);
  });

  it("bad session ids, kinds and budgets are refused with InvalidArgument", async () => {
    const root = tempDir("store-args");
    await expect(openSession(root, "../x")).rejects.toMatchObject({ code: "InvalidArgument" });
    await expect(openSession(root, "_conversations")).rejects.toMatchObject({ code: "InvalidArgument" });
    await expect(openSession(root, "ok", { maxDeltaBytes: 0 })).rejects.toMatchObject({ code: "InvalidArgument" });
    const s = await openSession(root, "ok");
    const p = s.beginPass();
    await expect(p.collectAppend({ path: "/nonexistent", source: "x", stream: "main", kind: "Bad-Kind", runtime: "t", adapter: "a", adapterVersion: "1" }, () => [])).rejects.toMatchObject({ code: "InvalidArgument" });
    s.close();
    await expect(p.collectAppend({ path: "/nonexistent", source: "x", stream: "main", kind: "ok", runtime: "t", adapter: "a", adapterVersion: "1" }, () => [])).rejects.toMatchObject({ code: "Closed" });
  });

  it("the root default is $LAKE_ROOT, else $XDG_DATA_HOME/lake, else ~/.local/share/lake", () => {
    expect(defaultRoot({ LAKE_ROOT: "/r", XDG_DATA_HOME: "/x", HOME: "/h" })).toBe("/r");
    expect(defaultRoot({ XDG_DATA_HOME: "/x", HOME: "/h" })).toBe("/x/lake");
    expect(defaultRoot({ HOME: "/h" })).toBe("/h/.local/share/lake");
  });
});

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LayoutError } from "@lake/layout";
import { readConfig } from "@lake/layout/defaults";
import { SegmentError } from "@lake/segments";
import { StoreError } from "@lake/store";
import { WalError } from "@lake/wal";
import { describe, expect, it } from "vitest";
import { brandGuard, defineError, type ErrorDataMap } from "@lake/errors";
import { describeError, describeErrorWith, EXIT, EXIT_CODES, formatExitCodes, usage } from "../src/index.js";

describe("the exit-code table", () => {
  it("has one row per code of EXIT, in code order, and the help prints every row", () => {
    expect(EXIT_CODES.map((r) => r.code)).toEqual(Object.values(EXIT).sort((a, b) => a - b));
    const help = formatExitCodes();
    for (const r of EXIT_CODES) expect(help).toContain(`${String(r.code).padStart(3)}  ${r.meaning}`);
  });
});

describe("describeError", () => {
  it("a usage error: 2, its message", () => {
    expect(describeError(usage("--since: expected a date"))).toEqual({ message: "--since: expected a date", code: EXIT.usage });
  });

  it("a bad config file (a real @lake/layout read): 2, naming the file and the key", () => {
    const dir = mkdtempSync(join(tmpdir(), "cli-describe-"));
    try {
      const file = join(dir, "lake", "config.json");
      mkdirSync(join(dir, "lake"));
      writeFileSync(file, JSON.stringify({ root: "relative/dir" }));
      let err: unknown;
      try {
        readConfig({ XDG_CONFIG_HOME: dir, HOME: dir });
      } catch (e) {
        err = e;
      }
      expect(describeError(err)).toEqual({ message: `${file}: root: expected an absolute path or ~/…`, code: EXIT.usage });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("lake packages' errors by code: the same code in every app", () => {
    const cases: [unknown, number][] = [
      [new StoreError("Locked", "/r/.lock: held by pid 7"), EXIT.locked],
      [new StoreError("Corrupt", "/r/x.sd: bad frame"), EXIT.corrupt],
      [new StoreError("NotFound", "/r/x: no such session"), EXIT.notFound],
      [new WalError("NewerWriter", "/w/x.wal: written by a newer writer"), EXIT.refused],
      [new SegmentError("ReadFailed", "s.parquet: cut footer"), EXIT.corrupt],
      [new LayoutError("HashMismatch", "k: sha256 differs"), EXIT.corrupt],
      [new LayoutError("PreconditionFailed", "k: changed"), EXIT.refused],
      // The fleet store's own I/O is a store error, not the local disk's.
      [new LayoutError("Io", "s3://b/k: connection refused"), EXIT.store],
      [new LayoutError("Unknown", "s3://b/k: 500"), EXIT.store],
      // A code with no user meaning is a bug: exit 1, the message kept.
      [new StoreError("Closed", "store closed"), EXIT.internal],
    ];
    for (const [e, code] of cases) expect(describeError(e), (e as Error).message).toEqual({ message: (e as Error).message, code });
  });

  it("a local disk refusal anywhere in the cause chain: 7, naming the path and the errno", () => {
    const fsErr = Object.assign(new Error("EROFS: read-only file system, open '/r/x'"), { code: "EROFS", syscall: "open", path: "/r/x" });
    expect(describeError(fsErr)).toEqual({ message: "/r/x: open failed: EROFS (read-only file system)", code: EXIT.io });
    expect(describeError(new StoreError("Io", "/r/x: cannot write", { cause: fsErr }))).toEqual({ message: "/r/x: cannot write (read-only file system)", code: EXIT.io });
  });

  it("anything else is internal, said so", () => {
    expect(describeError(new TypeError("x is not a function"))).toEqual({ message: "internal error: x is not a function", code: EXIT.internal });
    expect(describeError("boom")).toEqual({ message: "internal error: boom", code: EXIT.internal });
  });
});

describe("describeErrorWith", () => {
  type AppCode = "Held" | "Gone";
  class AppError<C extends AppCode = AppCode> extends defineError<AppCode, ErrorDataMap<AppCode>>("@example/app/AppError")<C> {}
  const isAppError = brandGuard<AppError, ErrorDataMap<AppCode>>(AppError.brand);
  const describeApp = describeErrorWith(isAppError, { Held: EXIT.locked, Gone: EXIT.notFound });

  it("the app's own error by its code's row, every other error as describeError says", () => {
    expect(describeApp(new AppError("Held", "lease x held by host-b"))).toEqual({ message: "lease x held by host-b", code: EXIT.locked });
    expect(describeApp(new AppError("Gone", "s1: no such session"))).toEqual({ message: "s1: no such session", code: EXIT.notFound });
    // Its own code wins over an errno in its cause; another class's error falls through.
    const fsErr = Object.assign(new Error("EROFS"), { code: "EROFS", path: "/r/x" });
    expect(describeApp(new AppError("Held", "lease x held", { cause: fsErr })).code).toBe(EXIT.locked);
    for (const e of [usage("--since: expected a date"), new StoreError("Locked", "/r/.lock: held"), fsErr, new Error("boom")]) expect(describeApp(e)).toEqual(describeError(e));
  });
});

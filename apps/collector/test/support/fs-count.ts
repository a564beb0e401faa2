// Counts what this process does through node:fs under a directory: files opened (open, or read or
// written whole), directory entries listed, bytes read. Patched on the CommonJS fs object and
// synced to the ESM named exports, so `import { readFileSync } from "node:fs"` in the code under
// test sees it. `countFs(dir)` installs the counters; `stop()` removes them and returns the counts.
import * as fsNs from "node:fs";
import * as fspNs from "node:fs/promises";
import { createRequire, syncBuiltinESMExports } from "node:module";

// The CommonJS objects: patching them and syncing reaches every ESM importer.
const require = createRequire(import.meta.url);
const fs = require("node:fs") as typeof fsNs;
const fsp = require("node:fs/promises") as typeof fspNs;

export interface FsCounts {
  /** Files opened (open, readFile, writeFile …), by path. */
  opens: string[];
  /** Directory entries returned by readdir, in total. */
  listed: number;
  /** Bytes read, by path. */
  bytes: Map<string, number>;
}

const pathOf = (p: unknown): string | undefined => (typeof p === "string" ? p : p instanceof URL ? p.pathname : Buffer.isBuffer(p) ? p.toString() : undefined);
const lenOf = (v: unknown): number => (typeof v === "string" ? Buffer.byteLength(v) : v instanceof Uint8Array ? v.length : 0);

export function countFs(under: string): { stop(): FsCounts } {
  const counts: FsCounts = { opens: [], listed: 0, bytes: new Map() };
  const fds = new Map<number, string>();
  const mine = (p: string | undefined): p is string => p !== undefined && (p === under || p.startsWith(under + "/"));
  const read = (p: string, n: number) => counts.bytes.set(p, (counts.bytes.get(p) ?? 0) + n);
  const undo: Array<() => void> = [];
  const patch = <T extends object>(obj: T, name: string, wrap: (orig: (...a: unknown[]) => unknown) => (...a: unknown[]) => unknown) => {
    const o = obj as Record<string, (...a: unknown[]) => unknown>;
    const orig = o[name]!;
    o[name] = wrap(orig);
    undo.push(() => (o[name] = orig));
  };
  patch(fs, "openSync", (orig) => function (this: unknown, ...a) {
    const fd = orig.apply(this, a) as number;
    const p = pathOf(a[0]);
    if (mine(p)) {
      counts.opens.push(p);
      fds.set(fd, p);
    }
    return fd;
  });
  patch(fs, "readSync", (orig) => function (this: unknown, ...a) {
    const n = orig.apply(this, a) as number;
    const p = fds.get(a[0] as number);
    if (p !== undefined) read(p, n);
    return n;
  });
  patch(fs, "closeSync", (orig) => function (this: unknown, ...a) {
    fds.delete(a[0] as number);
    return orig.apply(this, a);
  });
  for (const name of ["readFileSync", "writeFileSync", "appendFileSync"]) {
    patch(fs, name, (orig) => function (this: unknown, ...a) {
      const r = orig.apply(this, a);
      const p = pathOf(a[0]);
      if (mine(p)) {
        counts.opens.push(p);
        if (name === "readFileSync") read(p, lenOf(r));
      }
      return r;
    });
  }
  patch(fs, "readdirSync", (orig) => function (this: unknown, ...a) {
    const r = orig.apply(this, a) as unknown[];
    if (mine(pathOf(a[0]))) counts.listed += r.length;
    return r;
  });
  for (const name of ["readFile", "writeFile", "open"]) {
    patch(fsp, name, (orig) => async function (this: unknown, ...a) {
      const r = await orig.apply(this, a);
      const p = pathOf(a[0]);
      if (mine(p)) {
        counts.opens.push(p);
        if (name === "readFile") read(p, lenOf(r));
      }
      return r;
    });
  }
  patch(fsp, "readdir", (orig) => async function (this: unknown, ...a) {
    const r = (await orig.apply(this, a)) as unknown[];
    if (mine(pathOf(a[0]))) counts.listed += r.length;
    return r;
  });
  syncBuiltinESMExports();
  return {
    stop() {
      for (const u of undo.reverse()) u();
      syncBuiltinESMExports();
      return counts;
    },
  };
}

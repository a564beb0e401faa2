// randomBytes / randomHex: the kernel's random bytes (/dev/urandom, read 4 KiB at a time), so that
// a process taking a lock or naming a temporary file need not load node:crypto.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { randomBytes, randomHex } from "@lake/durable";

afterAll(cleanupTempDirs);

describe("randomBytes", () => {
  it("gives n bytes, never the same token twice, across many refills of its pool", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const t = randomHex(16);
      expect(t).toMatch(/^[0-9a-f]{32}$/);
      seen.add(t);
    }
    expect(seen.size).toBe(20_000);
    // Sizes that straddle the pool's end; each a new buffer of its own, none handed out zeroed.
    for (const n of [1, 6, 8, 100, 4095, 4096, 3000, 3000, 4097, 10_000]) {
      const b = randomBytes(n);
      expect(b.length).toBe(n);
      if (n >= 8) expect(b.every((x) => x === 0)).toBe(false);
    }
  });

  it("is spread over every byte value (a chi-square test over 1 MiB, far from its bound)", () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 256; i++) for (const x of randomBytes(4096)) counts[x]!++;
    const expected = (256 * 4096) / 256;
    const chi = counts.reduce((s, c) => s + (c - expected) ** 2 / expected, 0);
    // 255 degrees of freedom: the 99.999th percentile is about 370; a constant or biased source is far past it.
    expect(chi).toBeLessThan(370);
  });

  it("a process that takes a lock (its token random) and writes a file atomically (its temporary name random) loads no node:crypto", () => {
    const src = fileURLToPath(new URL("../dist/index.js", import.meta.url));
    const dir = tempDir("durable-random");
    const code = `const { tryLock, writeAtomic } = await import(${JSON.stringify(src)});
      const h = tryLock(${JSON.stringify(join(dir, "a.lock"))});
      if (!h.held) throw new Error("not held");
      writeAtomic(${JSON.stringify(join(dir, "f"))}, "x");
      h.release();
      console.log(JSON.stringify(process.moduleLoadList.filter((m) => /crypto/.test(m))));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    expect(existsSync(join(dir, "f"))).toBe(true);
  });
});

// Random bytes for names and tokens (a lock's token, a temporary file's name, a WAL's lineage id),
// read from the kernel's /dev/urandom, where every lake platform has one, 4 KiB at a time; node:crypto's
// where there is none. Not node:crypto's everywhere: loading it (and the streams it loads) is some
// 5 ms of a process's start, a sixth of `lake-collector hook`'s, which needs no other part of it.
import { closeSync, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";

const POOL = 4096;
let pool: Buffer | undefined;
let used = POOL;
let fromKernel = true;

/** Refill the pool from /dev/urandom; false where it cannot be read. */
function refill(): boolean {
  try {
    const fd = openSync("/dev/urandom", "r");
    try {
      const p = (pool ??= Buffer.allocUnsafe(POOL));
      for (let done = 0; done < POOL; ) {
        const r = readSync(fd, p, done, POOL - done, null);
        if (r <= 0) return false;
        done += r;
      }
      used = 0;
      return true;
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** `n` cryptographically random bytes (a new Buffer): /dev/urandom's, else node:crypto's `randomBytes`. */
export function randomBytes(n: number): Buffer {
  if (fromKernel && n <= POOL) {
    if (used + n > POOL) fromKernel = refill();
    if (fromKernel) {
      const out = Buffer.from(pool!.subarray(used, used + n));
      // Each byte is handed out once.
      pool!.fill(0, used, used + n);
      used += n;
      return out;
    }
  }
  return (createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto")).randomBytes(n);
}

/** `n` random bytes as lowercase hex (2n characters). */
export function randomHex(n: number): string {
  return randomBytes(n).toString("hex");
}

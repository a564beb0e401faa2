// The frame digest: encodeFrame digests a payload up to JS_DIGEST_MAX in JavaScript (sha256.ts)
// while this module has not loaded node:crypto, which a program that appends one small record does
// not load at all (lake-collector's hook). Either way the digest is SHA-256 over ver ‖ seq ‖ fence ‖
// payload, the spec's; here every size around SHA-256's block and the bound is checked against
// node:crypto's, in this order: encoded first (before anything here loads node:crypto for the
// module), then again once it has.
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { decodeWal, encodeFrame, frameDigest } from "../src/index.js";
import { JS_DIGEST_MAX } from "../src/internal/frame.js";
import { sha256 } from "../src/internal/sha256.js";

const SIZES = [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 1000, 4096, 16 * 1024, 16 * 1024 + 1, JS_DIGEST_MAX - 1, JS_DIGEST_MAX, JS_DIGEST_MAX + 1, 200_000];

function payloadOf(size: number): Buffer {
  const b = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) b[i] = (i * 131 + (size % 251)) & 0xff;
  return b;
}

/** SHA-256 over ver ‖ seq (u64 LE) ‖ fence (u64 LE) ‖ payload, node:crypto's. */
function expected(ver: number, seq: bigint, fence: bigint, payload: Buffer): Buffer {
  const h = Buffer.alloc(17);
  h.writeUInt8(ver, 0);
  h.writeBigUInt64LE(seq, 1);
  h.writeBigUInt64LE(fence, 9);
  return createHash("sha256").update(h).update(payload).digest();
}

describe("frame digest", () => {
  it("is node:crypto's SHA-256 for every size, whether digested in JavaScript (before node:crypto is loaded) or by node:crypto (after)", () => {
    const encode = () =>
      SIZES.map((size) => {
        const payload = payloadOf(size);
        const seq = BigInt(size) * 7n + 1n;
        const fence = 0xfedcba9876543210n;
        return { size, frame: encodeFrame({ ver: 1, seq, fence, payload }), want: expected(1, seq, fence, payload) };
      });
    // Before: nothing in this file has decoded or called frameDigest, so the module has not loaded node:crypto.
    const before = encode();
    for (const { size, frame, want } of before) expect(frame.subarray(21, 53).toString("hex"), `size ${size}`).toBe(want.toString("hex"));
    // frameDigest loads node:crypto for the module: from here every digest is node:crypto's.
    expect(frameDigest(1, 1n, 0n, payloadOf(10)).toString("hex")).toBe(expected(1, 1n, 0n, payloadOf(10)).toString("hex"));
    const after = encode();
    for (const [i, { size, frame }] of after.entries()) expect(frame.equals(before[i]!.frame), `size ${size}`).toBe(true);
  });

  it("sha256.ts is SHA-256: every length from 0 to 300 bytes, and lengths around each block boundary to 70,000, split at any point", () => {
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) >>> 0);
    const lengths = [...Array.from({ length: 301 }, (_, i) => i), ...[512, 1024, 4096, 4113, 8192, 65_536, 70_000].flatMap((n) => [n - 9, n - 8, n - 1, n, n + 1])];
    for (const n of lengths) {
      const bytes = Buffer.alloc(n);
      for (let i = 0; i < n; i++) bytes[i] = next() & 0xff;
      const cut = n === 0 ? 0 : next() % (n + 1);
      expect(sha256(bytes.subarray(0, cut), bytes.subarray(cut)).toString("hex"), `length ${n}`).toBe(createHash("sha256").update(bytes).digest("hex"));
    }
    // FIPS 180-2's examples.
    expect(sha256(Buffer.from("ab"), Buffer.from("c")).toString("hex")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256(Buffer.alloc(0), Buffer.from("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toString("hex")).toBe("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  });

  it("a process that writes small records with @lake/wal/writer does not load node:crypto", () => {
    const writer = fileURLToPath(new URL("../dist/writer.js", import.meta.url));
    const dir = mkdtempSync(join(tmpdir(), "wal-frame-"));
    try {
      // Created (a lineage id: random bytes), appended to, closed; reopened from its tail cache, appended to again.
      // (Imported as ES modules, node:fs loads Node's streams and fs/promises with it; lake-collector's
      // bundle requires it, and loads neither: apps/collector/test/hook.test.ts.)
      const code = `const { WalWriter } = await import(${JSON.stringify(writer)});
        const path = ${JSON.stringify(join(dir, "s", "a.wal"))};
        for (const n of [1, 2]) {
          const w = await WalWriter.open(path, { fsync: "always", featureFloorPath: path + ".floor", tailCache: path + ".tail" });
          await w.append({ type: "test_event", n, text: "x".repeat(2000) });
          await w.close();
        }
        console.log(JSON.stringify(process.moduleLoadList.filter((m) => /crypto/.test(m))));`;
      const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual([]);
      // What it wrote decodes, with both records.
      const records = decodeWal(readFileSync(join(dir, "s", "a.wal"))).skipped;
      expect(records.map((e) => e.seq)).toEqual([1, 2]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

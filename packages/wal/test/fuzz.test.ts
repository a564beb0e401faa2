import { describe, expect, it } from "vitest";
import { decodeWal, encodeFrame, isWalError } from "../src/index.js";
import { buildWal } from "./gen.js";
import { manifest, readHex, runStarted } from "./helpers.js";

// In-memory fuzz: FUZZ_FILES mutated WAL files (seeded, deterministic), each decoded and
// classified. Any exception that is not a WalError fails the run. Default 100,000 files, a few
// seconds; LAKE_WAL_FUZZ=N changes the count.
const FUZZ_FILES = Number(process.env.LAKE_WAL_FUZZ ?? 100_000);

function xorshift(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x100000000;
  };
}

function seeds(): Buffer[] {
  const out = manifest.wal.map((v) => readHex(v.file));
  out.push(
    buildWal(
      [
        { ...runStarted, scope: { owner: { kind: "reserved", module_id: "m" }, ref: "r", scope_epoch: 1 } },
        { type: "step_started", step_id: 1 },
        { type: "model_step_finished", step_id: 1, assistant_message: { text: "ok" }, usage: { output_tokens: 3 } },
        { type: "steered", input: [] },
        { type: "x_unknown", a: 1 },
        { type: "run_finished", reason: "completed", usage: {} },
      ],
      5n,
      new Uint8Array(16).fill(1),
    ).bytes,
  );
  return out;
}

function mutate(src: Buffer, rnd: () => number, pool: Buffer[]): Buffer {
  const int = (n: number) => Math.floor(rnd() * n);
  let b = Buffer.from(src);
  const ops = 1 + int(3);
  for (let k = 0; k < ops; k++) {
    switch (int(9)) {
      case 0: // bit flip
        if (b.length) {
          const at = int(b.length);
          b[at] = b[at]! ^ (1 << int(8));
        }
        break;
      case 1: // random byte
        if (b.length) b[int(b.length)] = int(256);
        break;
      case 2: // truncate
        b = b.subarray(0, int(b.length + 1));
        break;
      case 3: // insert random bytes
        {
          const at = int(b.length + 1);
          const ins = Buffer.from(Array.from({ length: 1 + int(60) }, () => int(256)));
          b = Buffer.concat([b.subarray(0, at), ins, b.subarray(at)]);
        }
        break;
      case 4: // delete a range
        {
          const at = int(b.length + 1);
          b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + int(80))]);
        }
        break;
      case 5: // duplicate a range (replays frames)
        {
          const at = int(b.length + 1);
          const len = int(200);
          b = Buffer.concat([b.subarray(0, at + len), b.subarray(at, at + len), b.subarray(at + len)]);
        }
        break;
      case 6: // splice with another file
        {
          const o = pool[int(pool.length)]!;
          b = Buffer.concat([b.subarray(0, int(b.length + 1)), o.subarray(int(o.length + 1))]);
        }
        break;
      case 7: // rewrite a len field at a random offset
        if (b.length >= 4) {
          const at = int(b.length - 3);
          b.writeUInt32LE(rnd() < 0.5 ? int(300) : Math.floor(rnd() * 0xffffffff), at);
        }
        break;
      default: // append a valid frame with random fields (valid digest, arbitrary content)
        {
          const payload = Buffer.from(
            rnd() < 0.5 ? JSON.stringify({ type: rnd() < 0.5 ? "step_started" : "queued", step_id: int(3) }) : Array.from({ length: int(40) }, () => int(256)),
          );
          b = Buffer.concat([b, encodeFrame({ ver: int(5), seq: BigInt(int(6)), fence: BigInt(int(3)), payload })]);
        }
    }
  }
  return b;
}

describe("fuzz", () => {
  it(`${FUZZ_FILES} mutated files: zero uncaught exceptions, each classified`, () => {
    const pool = seeds();
    const rnd = xorshift(0x5eed);
    const counts: Record<string, number> = {};
    const t0 = performance.now();
    for (let i = 0; i < FUZZ_FILES; i++) {
      const input = mutate(pool[i % pool.length]!, rnd, pool);
      let cls: string;
      try {
        const r = decodeWal(input, { file: `fuzz-${i}` });
        cls = r.tornTail === null ? "ok" : "ok+torn";
      } catch (e) {
        if (!isWalError(e)) throw new Error(`fuzz input ${i} (${input.toString("hex").slice(0, 200)}…) threw a non-WalError`, { cause: e });
        expect(e.message).not.toContain("\n");
        cls = e.code;
      }
      counts[cls] = (counts[cls] ?? 0) + 1;
    }
    const ms = performance.now() - t0;
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    expect(total).toBe(FUZZ_FILES);
    expect(Object.keys(counts).every((k) => ["ok", "ok+torn", "Corrupt", "Spliced", "SequenceError", "NewerWriter"].includes(k))).toBe(true);
    // Every class is reached, so the mutations exercise every path.
    for (const k of ["ok", "ok+torn", "Corrupt", "Spliced", "SequenceError", "NewerWriter"]) expect(counts[k] ?? 0).toBeGreaterThan(0);
    console.log(`fuzz: ${FUZZ_FILES} files in ${(ms / 1000).toFixed(1)} s: ${JSON.stringify(counts)}`);
  }, 120_000);
});

// Decode throughput on a 256 MiB WAL of large frames and one of small frames, each against raw
// SHA-256 of the same bytes in the same run. LAKE_BENCH_SCALE=0.1 shrinks the files.
import { createHash } from "node:crypto";
import { open, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { line, measure, report, scale } from "@lake/tooling/bench";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { decodeWal, encodeFrame, encodeLineageFrame, readWalFile, VER_RECORD } from "../src/index.js";

const TOTAL = Math.round(256 * 1024 * 1024 * scale());

function words(n: number, seed: number): string {
  const vocab = ["const", "return", "function", "\"quoted\"", "path/to/file.ts", "error:", "{", "}", "=>", "await", "0x1f", "lorem", "ipsum"];
  let s = seed;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    out.push(vocab[s % vocab.length]!);
    if (s % 11 === 0) out.push("\n");
  }
  return out.join(" ");
}

/** A WAL as the writer lays it out: lineage, then record + lineage per append, up to `total` bytes. */
function buildWal(total: number, payloadFor: (seq: number) => string): Buffer {
  const lin = encodeLineageFrame(new Uint8Array(16).fill(0x42));
  const parts: Buffer[] = [lin];
  let size = lin.length;
  for (let seq = 1; size < total; seq++) {
    const f = encodeFrame({ ver: VER_RECORD, seq: BigInt(seq), fence: 1n, payload: Buffer.from(payloadFor(seq)) });
    parts.push(f, lin);
    size += f.length + lin.length;
  }
  return Buffer.concat(parts);
}

const bigText = words(180_000, 7); // ~1 MiB of tool output with newlines and quotes to escape
const large = buildWal(TOTAL, (seq) =>
  JSON.stringify({ type: "tool_result", batch_id: `b${seq}`, outcome: "completed", result: { tool_call_id: `t${seq}`, is_error: false, text: bigText } }),
);
const small = buildWal(TOTAL, (seq) =>
  seq % 3 === 0
    ? JSON.stringify({ type: "step_started", step_id: seq })
    : seq % 3 === 1
      ? JSON.stringify({ type: "model_step_finished", step_id: seq, assistant_message: { content: [{ type: "text", text: "ok, done." }] }, usage: { input_tokens: 12, output_tokens: 40 }, retries_used: 0 })
      : JSON.stringify({ type: "tool_dispatch_intent", batch_id: `b${seq}`, tool_call_id: `t${seq}`, tool_name: "read", args: { path: "/src/index.ts" } }),
);

const dir = tempDir("wal-bench");
async function sha256File(path: string): Promise<void> {
  const fh = await open(path, "r");
  const buf = Buffer.allocUnsafe(4 * 1024 * 1024);
  const h = createHash("sha256");
  let pos = 0;
  for (;;) {
    const r = await fh.read(buf, 0, buf.length, pos);
    if (r.bytesRead === 0) break;
    h.update(buf.subarray(0, r.bytesRead));
    pos += r.bytesRead;
  }
  h.digest();
  await fh.close();
}

for (const [name, bytes] of [
  ["large frames (~1 MiB payloads)", large],
  ["small frames (~100 B payloads)", small],
] as const) {
  const path = join(dir, `${name.split(" ")[0]}.wal`);
  await writeFile(path, bytes);
  const frames = decodeWal(bytes, { framesOnly: true }).lastSeq;
  const opts = { runs: 5, warmup: 1, bytes: bytes.length };
  const base = await measure("raw SHA-256, in memory", () => createHash("sha256").update(bytes).digest(), opts);
  const subjects = [
    await measure("raw SHA-256, file read in 4 MiB chunks", () => sha256File(path), opts),
    await measure("readWalFile framesOnly (verify)", () => readWalFile(path, { framesOnly: true, collect: false }), opts),
    await measure("decodeWal framesOnly, in memory", () => decodeWal(bytes, { framesOnly: true }), opts),
    await measure("readWalFile (full: JSON + zod)", () => readWalFile(path, { collect: false }), opts),
    await measure("decodeWal (full), in memory", () => decodeWal(bytes, { collect: false }), opts),
  ];
  report(`decode, ${name}: ${(bytes.length / 1048576).toFixed(0)} MiB, ${frames} records`, base, subjects, [
    "ratio = baseline time / subject time (1.00 = as fast as hashing the bytes once).",
    "framesOnly = lengths, digests, kinds, lineage and sequence; full = also UTF-8 + JSON.parse + schema.",
  ]);
  line("goal", "frame verification ≥ 0.80 of raw SHA-256 on large frames");
}
cleanupTempDirs();

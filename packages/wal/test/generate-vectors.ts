// Regenerates the golden vectors in @lake/testdata wal/: `npx tsx test/generate-vectors.ts` from
// packages/wal (then update the byte counts in wal/SOURCES.md). Frames are built here with
// node:crypto directly, not with the library's encoder, so the vectors are an independent statement
// of the format; test/vectors.test.ts checks the library decodes each one as `expect` says and that
// its encoder reproduces the valid ones.
import { createHash } from "node:crypto";
import { writeFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fixture } from "@lake/testdata";

const here = fixture("wal");

const LINEAGE_A = Buffer.from("0f1e2d3c4b5a49688796a5b4c3d2e1f0", "hex");
const LINEAGE_B = Buffer.from("aaaaaaaaaaaa4aaa8aaaaaaaaaaaaaaa", "hex");
const FENCE = 7n;

function frame(ver: number, seq: bigint, fence: bigint, payload: Buffer, lenOverride?: number): Buffer {
  const h = Buffer.alloc(53);
  h.writeUInt32LE(lenOverride ?? payload.length, 0);
  h.writeUInt8(ver, 4);
  h.writeBigUInt64LE(seq, 5);
  h.writeBigUInt64LE(fence, 13);
  createHash("sha256").update(h.subarray(4, 21)).update(payload).digest().copy(h, 21);
  return Buffer.concat([h, payload]);
}
const lineage = (id = LINEAGE_A) => frame(2, 0n, 0n, id);
const rec = (seq: number, r: object) => frame(1, BigInt(seq), FENCE, Buffer.from(JSON.stringify(r)));
const gated = (seq: number, requires: string[], r: object) =>
  frame(3, BigInt(seq), FENCE, Buffer.from(JSON.stringify({ requires, record: r })));

const runStarted = {
  type: "run_started",
  run_id: "run-1",
  session: { project_root: "/tmp/p", harness: "runner", session: "s1" },
  config: {
    model: { provider_module_id: "anthropic", model_id: "claude" },
    tools: [],
    tool_choice: "auto",
    generation: {},
    response_format: "text",
    context_epoch: 0,
    renderer_version: 1,
  },
  input: [{ role: "user", content: "hi" }],
  origin: { kind: "fresh" },
};
const scoped = { ...runStarted, scope: { owner: { kind: "reserved", module_id: "basal" }, ref: "r1", scope_epoch: 3 } };
const stepStarted = { type: "step_started", step_id: 1 };
const stepFinished = {
  type: "model_step_finished",
  step_id: 1,
  assistant_message: { content: [{ type: "text", text: "hello" }] },
  usage: { input_tokens: 10, output_tokens: 5 },
  retries_used: 0,
};
const steered = { type: "steered", input: [{ role: "user", content: "also this" }] };

type Expect = {
  status: "ok" | "corrupt" | "spliced" | "sequence_error" | "newer_writer";
  error_code: string | null;
  error_offset: number | null;
  lineage_id: string | null;
  torn_tail: boolean;
  records: { seq: number; type: string; gated: boolean }[];
  skipped: { seq: number; type: string }[];
};
type Vector = { name: string; description: string; frames: Buffer[]; expect: Expect; reencode?: boolean };

const UUID_A = "0f1e2d3c-4b5a-4968-8796-a5b4c3d2e1f0";
const ok = (records: Expect["records"], extra: Partial<Expect> = {}): Expect => ({
  status: "ok",
  error_code: null,
  error_offset: null,
  lineage_id: UUID_A,
  torn_tail: false,
  records,
  skipped: [],
  ...extra,
});
const refused = (status: Expect["status"], code: string, frames: Buffer[], bad: number, extra: Partial<Expect> = {}): Expect => ({
  status,
  error_code: code,
  error_offset: frames.slice(0, bad).reduce((n, f) => n + f.length, 0),
  lineage_id: UUID_A,
  torn_tail: false,
  records: [],
  skipped: [],
  ...extra,
});

const vectors: Vector[] = [];
const add = (v: Vector) => vectors.push(v);

add({ name: "empty", description: "zero-byte WAL: a session with no records", frames: [], expect: ok([], { lineage_id: null }) });
add({ name: "lineage-only", description: "a new file: one lineage frame", frames: [lineage()], expect: ok([]), reencode: true });
add({
  name: "record-v1",
  description: "lineage, then two appends (record + lineage copy each)",
  frames: [lineage(), rec(1, stepStarted), lineage(), rec(2, stepFinished), lineage()],
  expect: ok([{ seq: 1, type: "step_started", gated: false }, { seq: 2, type: "model_step_finished", gated: false }]),
  reencode: true,
});
add({
  name: "gated-steer",
  description: "ver 3 steered record requiring steer-queue/v1",
  frames: [lineage(), gated(1, ["steer-queue/v1"], steered), lineage()],
  expect: ok([{ seq: 1, type: "steered", gated: true }]),
  reencode: true,
});
add({
  name: "gated-scope",
  description: "ver 3 run_started with a scope, requiring scope/v1",
  frames: [lineage(), gated(1, ["scope/v1"], scoped), lineage()],
  expect: ok([{ seq: 1, type: "run_started", gated: true }]),
  reencode: true,
});
add({
  name: "unknown-type",
  description: "a record of a type this build does not know is skipped, not an error",
  frames: [lineage(), rec(1, { type: "from_the_future", n: 1 }), lineage(), rec(2, stepStarted), lineage()],
  expect: ok([{ seq: 2, type: "step_started", gated: false }], { skipped: [{ seq: 1, type: "from_the_future" }] }),
  reencode: true,
});
add({
  name: "upgraded-mid-lineage",
  description: "a pre-lineage file upgraded: first lineage frame in the middle",
  frames: [rec(1, stepStarted), lineage(), rec(2, stepFinished), lineage()],
  expect: ok([{ seq: 1, type: "step_started", gated: false }, { seq: 2, type: "model_step_finished", gated: false }]),
});
{
  const f = [lineage(), rec(1, stepStarted), lineage()];
  const torn = rec(2, stepFinished);
  add({
    name: "torn-header",
    description: "fewer than 53 bytes after the last complete frame: torn tail",
    frames: [...f, torn.subarray(0, 20)],
    expect: ok([{ seq: 1, type: "step_started", gated: false }], { torn_tail: true }),
  });
  add({
    name: "torn-payload",
    description: "a complete header whose payload runs past end of file: torn tail",
    frames: [...f, torn.subarray(0, torn.length - 5)],
    expect: ok([{ seq: 1, type: "step_started", gated: false }], { torn_tail: true }),
  });
}
{
  const bad = Buffer.from(rec(1, stepStarted));
  bad[bad.length - 2] = bad[bad.length - 2]! ^ 0x01;
  const f = [lineage(), bad, lineage()];
  add({ name: "corrupt-digest", description: "payload bit flipped: digest does not verify", frames: f, expect: refused("corrupt", "Corrupt", f, 1) });
}
{
  const f = [lineage(), frame(4, 1n, FENCE, Buffer.from(JSON.stringify(stepStarted))), lineage()];
  add({ name: "corrupt-ver", description: "unknown frame version 4", frames: f, expect: refused("corrupt", "Corrupt", f, 1) });
}
{
  const f = [lineage(), frame(2, 0n, 0n, LINEAGE_A.subarray(0, 15))];
  add({ name: "corrupt-lineage-len", description: "lineage frame with len 15", frames: f, expect: refused("corrupt", "Corrupt", f, 1) });
}
{
  const f = [lineage(), frame(2, 1n, 0n, LINEAGE_A)];
  add({ name: "corrupt-lineage-seq", description: "lineage frame with seq 1", frames: f, expect: refused("corrupt", "Corrupt", f, 1) });
}
{
  const f = [lineage(), frame(2, 0n, 5n, LINEAGE_A)];
  add({ name: "corrupt-lineage-fence", description: "lineage frame with fence 5", frames: f, expect: refused("corrupt", "Corrupt", f, 1) });
}
{
  const f = [lineage(), frame(1, 1n, FENCE, Buffer.from('{"type":"step_started",'))];
  add({ name: "corrupt-json", description: "record payload is not JSON", frames: f, expect: refused("corrupt", "Corrupt", f, 1) });
}
{
  const f = [lineage(), frame(1, 1n, FENCE, Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]))];
  add({ name: "corrupt-utf8", description: "record payload is not UTF-8", frames: f, expect: refused("corrupt", "Corrupt", f, 1) });
}
{
  const f = [lineage(), rec(1, { type: "step_started" })];
  add({ name: "corrupt-record", description: "known type missing a required member (step_id)", frames: f, expect: refused("corrupt", "Corrupt", f, 1) });
}
{
  const f = [lineage(), rec(1, { step_id: 1 })];
  add({ name: "corrupt-no-type", description: "record object without a type tag", frames: f, expect: refused("corrupt", "Corrupt", f, 1) });
}
{
  const f = [lineage(), frame(3, 1n, FENCE, Buffer.from(JSON.stringify({ record: steered })))];
  add({ name: "corrupt-gated-shape", description: "ver 3 payload without a requires list", frames: f, expect: refused("corrupt", "Corrupt", f, 1) });
}
{
  const big = frame(1, 1n, FENCE, Buffer.from("{}"), 64 * 1024 * 1024 + 1);
  const f = [lineage(), big];
  add({ name: "corrupt-len", description: "header len over 64 MiB", frames: f, expect: refused("corrupt", "Corrupt", f, 1) });
}
{
  const f = [lineage(), rec(1, stepStarted), lineage(LINEAGE_B)];
  add({
    name: "spliced",
    description: "two different lineage ids in one file",
    frames: f,
    expect: refused("spliced", "Spliced", f, 2, { records: [{ seq: 1, type: "step_started", gated: false }] }),
  });
}
{
  const f = [lineage(), rec(2, stepStarted), lineage()];
  add({ name: "seq-start", description: "first record seq 2, not 1", frames: f, expect: refused("sequence_error", "SequenceError", f, 1) });
}
{
  const f = [lineage(), rec(1, stepStarted), lineage(), rec(3, stepFinished), lineage()];
  add({
    name: "seq-gap",
    description: "seq 3 after seq 1",
    frames: f,
    expect: refused("sequence_error", "SequenceError", f, 3, { records: [{ seq: 1, type: "step_started", gated: false }] }),
  });
}
{
  const f = [lineage(), rec(1, stepStarted), lineage(), rec(1, stepFinished), lineage()];
  add({
    name: "seq-backwards",
    description: "seq 1 again after seq 1",
    frames: f,
    expect: refused("sequence_error", "SequenceError", f, 3, { records: [{ seq: 1, type: "step_started", gated: false }] }),
  });
}
{
  const f = [lineage(), rec(1, stepStarted), lineage(), gated(2, ["hook-output/v1"], stepFinished), lineage()];
  add({
    name: "newer-writer",
    description: "ver 3 frame requiring a feature this build does not know",
    frames: f,
    expect: refused("newer_writer", "NewerWriter", f, 3, { records: [{ seq: 1, type: "step_started", gated: false }] }),
  });
}

// Archive containers (spec 3.2), built by hand.
function member(addr: string, payload: Buffer): Buffer {
  const h = Buffer.alloc(64);
  h.write("WALM", 0, "latin1");
  h.writeUInt16LE(1, 4);
  h.write(addr, 8, "latin1");
  h.writeBigUInt64LE(BigInt(payload.length), 24);
  createHash("sha256").update(payload).digest().copy(h, 32);
  return Buffer.concat([h, payload]);
}
function container(members: [string, Buffer][]): Buffer[] {
  const parts: Buffer[] = [];
  const index = Buffer.alloc(4 + 32 * members.length);
  index.writeUInt32LE(members.length, 0);
  let off = 0;
  members.forEach(([addr, p], i) => {
    const m = member(addr, p);
    parts.push(m);
    index.write(addr, 4 + 32 * i, "latin1");
    index.writeBigUInt64LE(BigInt(off), 4 + 32 * i + 16);
    index.writeBigUInt64LE(BigInt(p.length), 4 + 32 * i + 24);
    off += m.length;
  });
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(index.length, 0);
  trailer.write("WALK", 4, "latin1");
  return [...parts, index, trailer];
}
const walA = Buffer.concat([lineage(), rec(1, stepStarted), lineage()]);
const walB = Buffer.alloc(0);
const A = "31a7840439280f40";
const B = "00000000000000ff";
type ArchiveVector = {
  name: string;
  description: string;
  parts: Buffer[];
  expect: { sealed: boolean; members: { addr: string; payload_len: number; sha256_ok: boolean }[]; index_damaged: boolean | null };
};
const archives: ArchiveVector[] = [];
const sealedMembers = [
  { addr: A, payload_len: walA.length, sha256_ok: true },
  { addr: B, payload_len: 0, sha256_ok: true },
];
archives.push({ name: "archive-sealed", description: "two members, valid index", parts: container([[A, walA], [B, walB]]), expect: { sealed: true, members: sealedMembers, index_damaged: false } });
{
  const parts = container([[A, walA], [B, walB]]);
  archives.push({ name: "archive-unsealed", description: "trailer missing: an interrupted fold, never read", parts: parts.slice(0, -2), expect: { sealed: false, members: [], index_damaged: null } });
}
{
  const parts = container([[A, walA], [B, walB]]);
  const idx = Buffer.from(parts[2]!);
  idx.writeUInt32LE(7, 0); // count disagrees with index_len
  archives.push({ name: "archive-index-damaged", description: "index count damaged: members found by walking headers", parts: [parts[0]!, parts[1]!, idx, parts[3]!], expect: { sealed: true, members: sealedMembers, index_damaged: true } });
}
{
  const parts = container([[A, walA], [B, walB]]);
  const m = Buffer.from(parts[0]!);
  m[m.length - 1] = m[m.length - 1]! ^ 0x80;
  archives.push({ name: "archive-bad-sha", description: "member payload altered: sha256 does not verify", parts: [m, ...parts.slice(1)], expect: { sealed: true, members: [{ ...sealedMembers[0]!, sha256_ok: false }, sealedMembers[1]!], index_damaged: false } });
}

for (const f of readdirSync(here)) if (f.endsWith(".hex")) rmSync(join(here, f));
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const hexLines = (parts: Buffer[]) => parts.map((p) => p.toString("hex")).join("\n") + "\n";
const manifest = {
  about: "Golden vectors for @lake/wal. Each .hex file is lowercase hex, one frame (or container part) per line; whitespace is not data. sha256 is over the decoded bytes.",
  addresses: [
    { project_root: "/tmp/p", harness: "runner", session: "s1", addr: "31a7840439280f40" },
    { project_root: "", harness: "", session: "", addr: "" },
  ],
  wal: vectors.map((v) => {
    writeFileSync(join(here, `${v.name}.hex`), hexLines(v.frames));
    const bytes = Buffer.concat(v.frames);
    return {
      name: v.name,
      file: `${v.name}.hex`,
      description: v.description,
      bytes: bytes.length,
      sha256: sha(bytes),
      frame_digests: v.frames.map((f) => (f.length >= 53 ? f.subarray(21, 53).toString("hex") : null)),
      reencode: v.reencode ?? false,
      expect: v.expect,
    };
  }),
  archive: archives.map((a) => {
    writeFileSync(join(here, `${a.name}.hex`), hexLines(a.parts));
    const bytes = Buffer.concat(a.parts);
    return { name: a.name, file: `${a.name}.hex`, description: a.description, bytes: bytes.length, sha256: sha(bytes), expect: a.expect };
  }),
};
// The empty triple's address is the FNV-1a of two separators, computed independently here.
{
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from("\u001f\u001f")) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  manifest.addresses[1]!.addr = h.toString(16).padStart(16, "0");
}
writeFileSync(join(here, "vectors.json"), JSON.stringify(manifest, null, 2) + "\n");
console.log(`wrote ${vectors.length} WAL vectors and ${archives.length} archive vectors`);

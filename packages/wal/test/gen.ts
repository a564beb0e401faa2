// fast-check arbitraries for records and whole WALs, built with the library's encoder.
import fc from "fast-check";
import { encodeLineageFrame, encodeRecordFrame, type Json } from "../src/index.js";
import { TRIPLE, runStarted } from "./helpers.js";

const id = fc.string({ minLength: 1, maxLength: 12 });
const text = fc.string({ unit: "binary", maxLength: 40 });
// JSON cannot carry -0: normalise through a JSON round trip.
const json = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as Json);
const uint = fc.nat({ max: 2 ** 40 });
const usage = fc.record(
  {
    input_tokens: uint,
    cached_input_tokens: uint,
    cache_write_tokens: uint,
    output_tokens: uint,
    reasoning_tokens: uint,
  },
  { requiredKeys: [] },
);

/** Records with every defaulted member present, so decode(encode(x)) must equal x exactly. */
export const recordArb: fc.Arbitrary<{ type: string } & Record<string, unknown>> = fc.oneof(
  fc.record({ type: fc.constant("step_started"), step_id: uint }),
  fc.record({ type: fc.constant("turn_finished"), step_id: uint }),
  fc.record({ type: fc.constant("tool_batch_started"), batch_id: id, step_id: uint, planned_calls: fc.array(id, { maxLength: 4 }) }),
  fc.record(
    { type: fc.constant("tool_result"), batch_id: id, result: json, outcome: fc.constantFrom("completed", "unknown", "some_new_outcome"), reason: text },
    { requiredKeys: ["type", "batch_id", "result", "outcome"] },
  ),
  fc.record(
    {
      type: fc.constant("model_step_finished"),
      step_id: uint,
      assistant_message: json,
      usage,
      finish_reason: fc.constantFrom("stop", "tool_calls", "brand_new"),
      retries_used: uint,
    },
    { requiredKeys: ["type", "step_id", "assistant_message", "usage", "retries_used"] },
  ),
  fc.record(
    { type: fc.constant("queued"), submission_id: id, request: json, title: text, delivery: fc.constant("interrupt") },
    { requiredKeys: ["type", "submission_id", "request"] },
  ),
  fc.record({ type: fc.constant("steered"), input: json }),
  fc.record(
    {
      type: fc.constant("tool_dispatch_intent"),
      batch_id: id,
      tool_call_id: id,
      args: json,
      module_id: id,
    },
    { requiredKeys: ["type", "batch_id", "tool_call_id", "args"] },
  ),
  fc
    .record(
      { scope: fc.record({ owner: fc.record({ kind: fc.constant("reserved"), module_id: id }), ref: id, scope_epoch: uint }), ts_ms: uint },
      { requiredKeys: [] },
    )
    .map((extra) => ({ ...runStarted, origin: { kind: "fresh" }, session: { ...TRIPLE }, ...extra }) as { type: string } & Record<string, unknown>),
  fc.record({ type: fc.constantFrom("x_future_record", "zz_new"), payload: json }),
);

/** One WAL as built by the writer: lineage first, then record + lineage per append. */
export interface BuiltWal {
  readonly bytes: Buffer;
  readonly records: ({ type: string } & Record<string, unknown>)[];
  /** Byte offsets of every frame start, plus the end. */
  readonly boundaries: number[];
  /** For each boundary index, how many records are complete up to it. */
  readonly recordsBefore: number[];
  readonly fence: bigint;
}

export function buildWal(records: ({ type: string } & Record<string, unknown>)[], fence: bigint, lineageId: Uint8Array): BuiltWal {
  const lin = encodeLineageFrame(lineageId);
  const frames: Buffer[] = [lin];
  const isRecord: boolean[] = [false];
  records.forEach((r, i) => {
    frames.push(encodeRecordFrame(r, { seq: i + 1, fence }), lin);
    isRecord.push(true, false);
  });
  const boundaries = [0];
  const recordsBefore = [0];
  let pos = 0;
  let n = 0;
  frames.forEach((f, i) => {
    pos += f.length;
    if (isRecord[i]) n++;
    boundaries.push(pos);
    recordsBefore.push(n);
  });
  return { bytes: Buffer.concat(frames), records, boundaries, recordsBefore, fence };
}

export const walArb = fc
  .record({
    records: fc.array(recordArb, { maxLength: 8 }),
    fence: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
    lineage: fc.uint8Array({ minLength: 16, maxLength: 16 }),
  })
  .map(({ records, fence, lineage }) => buildWal(records, fence, lineage));

// `conversation.fold`: the lean fold a parse left a chain as, on disk, so that the next parse in
// another process (a one-shot collect) reads no round again while the chain is unchanged. A cache,
// outside every digest: it is used only while `rounds/` holds exactly the rounds it folded and
// `conversation.state` is the text it names, and only when its own digest checks; otherwise every
// round is read, as without it. One encoder and one decoder, here (README "conversation.fold").
import { createHash } from "node:crypto";
import { basename, join } from "node:path";
import { ChainState, LeanCalls, toRef, toTuple, type RecordRef } from "./conversation.js";
import type { RefTuple } from "./types.js";
import { ChainError } from "./errors.js";

/** Value of the first member, `format`. */
export const FOLD_FORMAT = "lake.fold";
/** Version of the layout below. */
export const FOLD_SCHEMA = 1;
/** The file's name in the chain's directory. */
export const FOLD_FILE = "conversation.fold";

type Ref = RefTuple | null;

const ref = (r: RecordRef | null): Ref => (r ? toTuple(r) : null);
const unref = (r: Ref): RecordRef | null => (r ? toRef(r) : null);

/**
 * The file's bytes for the lean fold `st` whose chain's `conversation.state` is `stateText`: one line
 * of JSON (members in this order; rows as arrays, the calls as columns), then a line with the
 * SHA-256 hex of that line's bytes. Round files are named without their directory; everything keeps
 * the fold's own order (the calls' order decides which calls a turn leaves open).
 */
export function encodeFold(st: ChainState, stateText: string): Buffer {
  if (!(st.calls instanceof LeanCalls)) throw new ChainError("InvalidInput", `conversation ${st.id}: only a lean fold is written to ${FOLD_FILE}`);
  const c = st.calls.columns();
  const cited: number[] = [];
  for (const [seq, n] of st.cited) cited.push(seq, n);
  const json = Buffer.from(
    JSON.stringify({
      format: FOLD_FORMAT,
      schema: FOLD_SCHEMA,
      conversation: st.id,
      state: stateText,
      rounds: st.rounds.map((r) => [r.round, r.commit, basename(r.file), r.range.from, r.range.to, r.parser.name, r.parser.version, r.policy.id, r.policy.version]),
      through_seq: st.throughSeq,
      files: [...st.files.values()].map((f) => [f.seq, f.stream, f.kind, f.sha256, f.records, f.round, f.gone]),
      cited,
      tombstones: [...st.tombstones.values()].map((t) => [t.seq, t.rows, t.round]),
      streams: [...st.streams].map(([name, s]) => [name, s.count, ref(s.lastCompaction)]),
      calls: { streams: c.streams, ids: c.ids, stream: Array.from(c.stream), turn: Array.from(c.turn), refs: Array.from(c.refs) },
      launches: [...st.launches.values()].map((l) => [l.child, l.callId, ref(l.at), l.anchor]),
    }),
    "utf8",
  );
  return Buffer.concat([json, Buffer.from(`\n${digest(json)}\n`, "latin1")]);
}

/** What a decoded fold must match: its conversation, its chain's `conversation.state` text and round files. */
export interface FoldCheck {
  readonly conversation: string;
  readonly stateText: string;
  /** The names in `rounds/` that are rounds (not temporaries), in any order. */
  readonly roundFiles: readonly string[];
  /** The chain's `rounds/` directory (the folded rounds' paths are made under it). */
  readonly roundsDir: string;
}

/**
 * The lean fold a `conversation.fold` holds, or null when it does not stand for the chain as it
 * is: damaged or foreign bytes (its digest, format, schema or shape), another conversation, another
 * `conversation.state`, or rounds other than exactly the ones listed.
 */
export function decodeFold(bytes: Buffer, check: FoldCheck): ChainState | null {
  const nl = bytes.indexOf(0x0a);
  if (nl < 0 || bytes.length !== nl + 66 || bytes.toString("latin1", nl + 1) !== `${digest(bytes.subarray(0, nl))}\n`) return null;
  // Whatever does not have this layout (a foreign or damaged file that still checks) is no fold.
  try {
    return foldOf(JSON.parse(bytes.toString("utf8", 0, nl)) as FoldJson, check);
  } catch {
    return null;
  }
}

function foldOf(v: FoldJson, check: FoldCheck): ChainState | null {
  if (v?.format !== FOLD_FORMAT || v.schema !== FOLD_SCHEMA || v.conversation !== check.conversation || v.state !== check.stateText) return null;
  if (v.rounds.length !== check.roundFiles.length) return null;
  const listed = new Set(check.roundFiles);
  for (const r of v.rounds) if (!listed.has(r[2])) return null;
  const c = v.calls;
  const n = c.ids.length;
  if (c.stream.length !== n || c.turn.length !== n || c.refs.length !== n * 4 || v.cited.length % 2 !== 0) return null;
  const st = new ChainState(check.conversation, true);
  for (const [round, commit, file, from, to, parser, parserVersion, policy, policyVersion] of v.rounds) {
    st.rounds.push({ round, commit, file: join(check.roundsDir, file), range: { from, to }, parser: { name: parser, version: parserVersion }, policy: { id: policy, version: policyVersion } });
  }
  st.throughSeq = v.through_seq;
  for (const [seq, stream, kind, sha256, records, round, gone] of v.files) st.files.set(seq, { seq, stream, kind, sha256, records, round, gone });
  for (let i = 0; i < v.cited.length; i += 2) st.cited.set(v.cited[i]!, v.cited[i + 1]!);
  for (const [seq, rows, round] of v.tombstones) st.tombstones.set(seq, { seq, rows, round });
  for (const [name, count, last] of v.streams) st.streams.set(name, { count, turns: [], lastCompaction: unref(last) });
  (st.calls as LeanCalls).load(c);
  for (const [child, callId, at, anchor] of v.launches) st.launches.set(child, { child, callId, at: unref(at)!, anchor });
  return st;
}

interface FoldJson {
  format: string;
  schema: number;
  conversation: string;
  state: string;
  rounds: Array<[number, string, string, number, number, string, number, string, number]>;
  through_seq: number;
  files: Array<[number, string, string, string, number, number, boolean]>;
  cited: number[];
  tombstones: Array<[number, number, number]>;
  streams: Array<[string, number, Ref]>;
  calls: { streams: string[]; ids: string[]; stream: number[]; turn: number[]; refs: number[] };
  launches: Array<[string, string | null, Ref, boolean]>;
}

function digest(b: Uint8Array): string {
  return createHash("sha256").update(b).digest("hex");
}

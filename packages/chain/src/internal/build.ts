// The round builder: what the index says beyond the chain's reach, as the next round. Pure: no filesystem.
import { MAIN_STREAM } from "./policy.js";
import { ChainError } from "./errors.js";
import { ChainState, compareRef, launchRank, toTuple, type CallState, type RecordRef } from "./conversation.js";
import { DEFAULT_POLICY, PARSER_NAME, PARSER_VERSION, matchVendorType, type ChainPolicy } from "./policy.js";
import type { IndexEntry, IndexFile, RoundBody, RoundCall, RoundCompaction, RoundLaunch, RoundMessage, RoundTombstone, RoundTurn, SessionIndex } from "./types.js";

function invalid(message: string): never {
  throw new ChainError("InvalidInput", message);
}

/**
 * Build the round that follows `state` from `index`, or null when the index holds nothing the chain has not said
 * (no landed file past the chain's reach and no file gone). Reads only what `index` says, never a payload, and never
 * past `index.indexedSeq`.
 */
export function buildRoundBody(state: ChainState, index: SessionIndex, policy: ChainPolicy = DEFAULT_POLICY): RoundBody | null {
  const indexedSeq = index.indexedSeq;
  if (!Number.isSafeInteger(indexedSeq) || indexedSeq < 0) invalid(`index: indexedSeq ${String(indexedSeq)} is not a sequence`);
  const files = new Map<number, IndexFile>();
  for (const f of index.files) {
    if (f.seq > indexedSeq) continue;
    if (!Number.isSafeInteger(f.seq) || f.seq < 1) invalid(`index: file ${f.name} has seq ${String(f.seq)}`);
    if (!/^[0-9a-f]{64}$/.test(f.sha256)) invalid(`index: file ${f.name} has no SHA-256 digest`);
    if (files.has(f.seq)) invalid(`index: seq ${f.seq} is listed twice`);
    files.set(f.seq, f);
  }
  // Tombstones: files an earlier round cites that the index no longer holds.
  const tombstones: RoundTombstone[] = [];
  for (const [seq, rows] of [...state.cited].sort((a, b) => a[0] - b[0])) {
    if (!files.has(seq) && !state.tombstones.has(seq)) tombstones.push({ seq, rows });
  }
  for (const b of [...state.files.values()].sort((a, b) => a.seq - b.seq)) {
    if (!files.has(b.seq) && !state.tombstones.has(b.seq) && !state.cited.has(b.seq)) tombstones.push({ seq: b.seq, rows: 0 });
  }
  tombstones.sort((a, b) => a.seq - b.seq);
  const from = state.throughSeq + 1;
  const newFiles = [...files.values()].filter((f) => f.seq >= from).sort((a, b) => a.seq - b.seq);
  if (newFiles.length === 0 && tombstones.length === 0) return null;
  const to = newFiles.length > 0 ? Math.max(indexedSeq, state.throughSeq) : state.throughSeq;

  // A read by range holds the entries from `index.from` on; it must reach back to the chain's reach.
  const ranged = index.from !== undefined;
  if (ranged) {
    const known = index.from as number;
    if (!Number.isSafeInteger(known) || known < 0 || known > from) invalid(`index: entries from seq ${String(known)}, past the chain's reach (seq ${from})`);
    if (!index.lookup) invalid(`index: entries from seq ${known} with no lookup of the index`);
  }
  const all = [...index.entries].filter((e) => e.seq <= indexedSeq).sort((a, b) => a.seq - b.seq || a.row - b.row);
  for (const e of all) {
    const f = files.get(e.seq);
    if (!f) invalid(`index: entry at seq ${e.seq} row ${e.row} names no listed file`);
    if (!Number.isSafeInteger(e.row) || e.row < 0 || e.row >= f.records) invalid(`index: entry row ${e.row} is outside file ${f.name} (${f.records} records)`);
  }
  const fresh = all.filter((e) => e.seq >= from && !e.duplicate);

  // Working copies of what the round can change.
  const turnCount = new Map<string, number>();
  const open = new Map<string, Set<string>>();
  const streamState = (name: string): { turns: number; open: Set<string> } => {
    if (!turnCount.has(name)) {
      turnCount.set(name, state.streams.get(name)?.count ?? 0);
      open.set(name, state.openCalls(name));
    }
    return { turns: turnCount.get(name) as number, open: open.get(name) as Set<string> };
  };
  const calls = new Map<string, CallState>();
  const callOrder: string[] = [];
  const newFragments = new Map<string, RecordRef[]>();
  const touch = (id: string): CallState | undefined => {
    let c = calls.get(id);
    if (!c) {
      const prior = state.calls.get(id);
      if (!prior) return undefined;
      c = { ...prior, fragments: [] };
      calls.set(id, c);
      callOrder.push(id);
    }
    return c;
  };
  const create = (c: CallState): CallState => {
    calls.set(c.id, c);
    callOrder.push(c.id);
    return c;
  };
  const launched = new Map<string, number>();
  for (const [child, l] of state.launches) launched.set(child, launchRank(l));
  const turns: RoundTurn[] = [];
  const turnIndex = new Map<string, RoundTurn>();
  const launches: RoundLaunch[] = [];
  const messages: RoundMessage[] = [];
  const compactions: RoundCompaction[] = [];

  for (const e of fresh) {
    const ref: RecordRef = { seq: e.seq, row: e.row };
    const s = streamState(e.stream);
    const compaction = matchVendorType(e.vendor_type, policy.compaction).matched;
    const queued = matchVendorType(e.vendor_type, policy.queued);
    let steering = false;
    if (s.turns === 0) {
      turnCount.set(e.stream, 1);
    } else if (policy.turnStart.includes(e.kind) && !queued.matched && !compaction) {
      if (s.open.size > 0) steering = true;
      else turnCount.set(e.stream, s.turns + 1);
    }
    const turn = (turnCount.get(e.stream) as number) - 1;
    const key = `${e.stream}\u0000${turn}`;
    let rt = turnIndex.get(key);
    if (!rt) {
      rt = { stream: e.stream, turn, records: [] };
      turnIndex.set(key, rt);
      turns.push(rt);
    }
    rt.records.push(toTuple(ref));
    if (steering) messages.push({ type: "steering", op: null, stream: e.stream, turn, at: toTuple(ref) });
    if (queued.matched) messages.push({ type: "queued", op: queued.suffix, stream: e.stream, turn, at: toTuple(ref) });
    if (compaction) {
      compactions.push({ stream: e.stream, turn, at: toTuple(ref) });
      s.open.clear();
    }
    const id = e.tool_call_id;
    if (id !== undefined && id !== "") {
      const c = touch(id);
      if (e.kind === "tool_call") {
        if (!c) {
          create({ id, stream: e.stream, turn, call: ref, result: null, fragments: [] });
          s.open.add(id);
        } else if (c.call === null) {
          c.call = ref;
          c.stream = e.stream;
          c.turn = turn;
          if (c.result === null) s.open.add(id);
        } else addFragment(newFragments, id, ref);
      } else if (e.kind === "tool_result") {
        if (!c) create({ id, stream: e.stream, turn, call: null, result: ref, fragments: [] });
        else if (c.result === null) {
          c.result = ref;
          streamState(c.stream).open.delete(id);
        } else addFragment(newFragments, id, ref);
      } else if (!c) {
        create({ id, stream: e.stream, turn, call: null, result: null, fragments: [] });
        addFragment(newFragments, id, ref);
      } else addFragment(newFragments, id, ref);
    }
    const child = e.child_stream;
    if (child !== undefined && child !== "" && child !== e.stream && child !== MAIN_STREAM) {
      const callId = id !== undefined && id !== "" ? id : null;
      const rank = launchRank({ call: callId, anchor: false });
      const cur = launched.get(child);
      if (cur === undefined || rank > cur) {
        launched.set(child, rank);
        launches.push({ child, call: callId, at: toTuple(ref), anchor: false });
      }
    }
  }

  // Anchors: a child stream nothing launched branches from the record its first parent link points at (once that
  // record is indexed, in whichever round that happens).
  const waiting = (child: string): boolean => child !== MAIN_STREAM && !launched.has(child) && (state.streams.has(child) || turnCount.has(child));
  const firstLink = new Map<string, string>();
  const byRecordId = new Map<string, IndexEntry>();
  if (ranged && index.lookup) {
    // A read by range holds the entries past the head only (and need not hold their ids): the index answers, over
    // every entry, for each waiting child's first link and for the record that link points at.
    const children = [...new Set([...state.streams.keys(), ...turnCount.keys()])].filter(waiting);
    if (children.length > 0) {
      for (const [child, parentId] of index.lookup.firstParents(children)) firstLink.set(child, parentId);
      if (firstLink.size > 0) for (const [id, e] of index.lookup.firstEntries(new Set(firstLink.values()))) byRecordId.set(id, e);
    }
  } else {
    for (const e of all) if (!e.duplicate && e.parent_id !== undefined && !firstLink.has(e.stream)) firstLink.set(e.stream, e.parent_id);
    // The records those links point at: the first copy of each id, only for waiting children.
    const pointed = new Set<string>();
    for (const [child, parentId] of firstLink) if (waiting(child)) pointed.add(parentId);
    if (pointed.size > 0) for (const e of all) if (!e.duplicate && e.record_id !== undefined && pointed.has(e.record_id) && !byRecordId.has(e.record_id)) byRecordId.set(e.record_id, e);
  }
  for (const [child, parentId] of [...firstLink].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    if (!waiting(child)) continue;
    const p = byRecordId.get(parentId);
    if (p && p.stream !== child && p.seq <= to) {
      launched.set(child, 0);
      launches.push({ child, call: null, at: [p.seq, p.row], anchor: true });
    }
  }

  const roundCalls: RoundCall[] = callOrder.map((id) => {
    const c = calls.get(id) as CallState;
    const frags = (newFragments.get(id) ?? []).sort(compareRef).map(toTuple);
    return { id, stream: c.stream, turn: c.turn, call: c.call && toTuple(c.call), result: c.result && toTuple(c.result), fragments: frags };
  });

  return {
    format: "lake-round",
    version: 1,
    conversation: state.id,
    round: state.rounds.length + 1,
    prev: state.head?.commit ?? null,
    parser: { name: PARSER_NAME, version: PARSER_VERSION },
    policy: { id: policy.id, version: policy.version },
    range: { from, to },
    files: newFiles.map((f) => ({ seq: f.seq, stream: f.stream, kind: f.kind, sha256: f.sha256, records: f.records })),
    turns,
    calls: roundCalls,
    launches,
    messages,
    compactions,
    tombstones,
  };
}

function addFragment(m: Map<string, RecordRef[]>, id: string, ref: RecordRef): void {
  const list = m.get(id);
  if (list) list.push(ref);
  else m.set(id, [ref]);
}

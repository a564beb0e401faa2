// The fold: every round, in order, into one typed conversation. Pure: no filesystem.
import { MAIN_STREAM } from "./policy.js";
import { ChainError } from "./errors.js";
import type { RefTuple, Round } from "./types.js";

/** A record address: landed file sequence and 0-based row. */
export interface RecordRef {
  seq: number;
  row: number;
}

/** A landed file the chain is bound to, with the round that bound it and whether a later round tombstoned it. */
export interface FileBinding {
  seq: number;
  stream: string;
  kind: string;
  sha256: string;
  records: number;
  round: number;
  gone: boolean;
}

/** A round as the fold saw it. */
export interface RoundSummary {
  round: number;
  commit: string;
  /** The round's file name under `rounds/`. */
  file: string;
  range: { from: number; to: number };
  parser: { name: string; version: number };
  policy: { id: string; version: number };
}

/**
 * A child agent launch: the call that launched the child (`callId`), or a record that names the child without a call,
 * or an anchor (the record the child's first parent link points at, when no record names the launch).
 */
export interface Launch {
  child: string;
  callId: string | null;
  at: RecordRef;
  anchor: boolean;
}

/** @internal Launch precedence: a call beats a record naming the child, which beats an anchor. */
export function launchRank(l: { call?: string | null; callId?: string | null; anchor: boolean }): number {
  if ((l.call ?? l.callId ?? null) !== null) return 2;
  return l.anchor ? 0 : 1;
}

/** A tool call with its result and the child streams it launched. */
export interface ToolCall {
  id: string;
  stream: string;
  turn: number;
  /** The call record, or null when only its result or fragments are known. */
  call: RecordRef | null;
  /** The result record, or null while the call is open. */
  result: RecordRef | null;
  /** Other records carrying this call id (progress, extra copies). */
  fragments: RecordRef[];
  /** Child streams this call launched, each with its own turns. */
  children: StreamNode[];
}

/** A steering or queued message. */
export interface Message {
  type: "steering" | "queued";
  op: string | null;
  stream: string;
  turn: number;
  at: RecordRef;
}

/** A compaction boundary, closing part of `turn` of `stream`. */
export interface Compaction {
  stream: string;
  turn: number;
  at: RecordRef;
}

/** A landed file that is gone, named by the round that said so. */
export interface Tombstone {
  seq: number;
  rows: number;
  round: number;
}

/** One turn of a stream: its records in order and what happened in it. */
export interface Turn {
  stream: string;
  index: number;
  records: RecordRef[];
  calls: ToolCall[];
  messages: Message[];
  compactions: Compaction[];
}

/** A stream (main, or a child agent) with its turns and how it was launched. */
export interface StreamNode {
  name: string;
  launch: Launch | null;
  turns: Turn[];
}

/** The conversation: the fold of every round of a chain, nothing else. */
export interface Conversation {
  id: string;
  /** The last round, or null for a chain with no rounds. */
  head: RoundSummary | null;
  rounds: RoundSummary[];
  /** The landed sequence the chain reaches (0 with no rounds). */
  throughSeq: number;
  files: FileBinding[];
  /** The main stream; child streams hang under the calls that launched them. */
  main: StreamNode;
  /** Child streams no call of the tree launched (anchors only, or no launch at all), with their own children. */
  detached: StreamNode[];
  /** Every stream by name (the same objects as in the tree). */
  streams: Record<string, StreamNode>;
  /** Every tool call, in order of first appearance. */
  calls: ToolCall[];
  messages: Message[];
  compactions: Compaction[];
  tombstones: Tombstone[];
}

// ---- the mutable fold state (shared with the round builder) ------------------------------------------------------

/** @internal Accumulated state of a call: a {@link ToolCall} before its children are hung under it. */
export type CallState = Omit<ToolCall, "children">;

/** @internal */
export interface StreamState {
  /** Turns so far. */
  count: number;
  /** Each turn's records (none kept by a lean fold). */
  turns: RecordRef[][];
  lastCompaction: RecordRef | null;
}

/** @internal The calls of a fold, by id. */
export interface CallTable {
  readonly size: number;
  /** The call's state (the lean table gives a copy, with no fragments). */
  get(id: string): CallState | undefined;
  /** Put the call's state (its id's) in the table. */
  set(c: CallState): void;
  /** Ids of the calls of `stream`'s turn `turn` with a call record and no result, the record not before `since`. */
  open(stream: string, turn: number, since: RecordRef | null): Set<string>;
  values(): IterableIterator<CallState>;
}

/** Every call as an object, fragments and all: what the full fold renders. */
class FullCalls implements CallTable {
  private readonly m = new Map<string, CallState>();
  get size(): number {
    return this.m.size;
  }
  get(id: string): CallState | undefined {
    return this.m.get(id);
  }
  set(c: CallState): void {
    this.m.set(c.id, c);
  }
  open(stream: string, turn: number, since: RecordRef | null): Set<string> {
    const open = new Set<string>();
    for (const c of this.m.values()) {
      if (c.stream !== stream || c.turn !== turn || c.call === null || c.result !== null) continue;
      if (since && compareRef(c.call, since) < 0) continue;
      open.add(c.id);
    }
    return open;
  }
  values(): IterableIterator<CallState> {
    return this.m.values();
  }
}

/**
 * A lean fold's calls: each id's row of typed columns (stream, turn, call and result addresses; no
 * fragments), off the heap but for the id itself. A session of 110,000 calls holds some 9 MB here,
 * against 25 MB as objects.
 */
export class LeanCalls implements CallTable {
  private readonly rows = new Map<string, number>();
  private readonly streamNames: string[] = [];
  private readonly streamNo = new Map<string, number>();
  private stream = new Int32Array(1024);
  private turn = new Int32Array(1024);
  /** call seq, call row, result seq, result row per row; seq 0 for no record (seqs start at 1). */
  private refs = new Float64Array(4096);

  get size(): number {
    return this.rows.size;
  }

  get(id: string): CallState | undefined {
    const i = this.rows.get(id);
    if (i === undefined) return undefined;
    const r = this.refs;
    return {
      id, stream: this.streamNames[this.stream[i]!]!, turn: this.turn[i]!,
      call: r[i * 4] === 0 ? null : { seq: r[i * 4]!, row: r[i * 4 + 1]! },
      result: r[i * 4 + 2] === 0 ? null : { seq: r[i * 4 + 2]!, row: r[i * 4 + 3]! },
      fragments: [],
    };
  }

  set(c: CallState): void {
    let i = this.rows.get(c.id);
    if (i === undefined) {
      i = this.rows.size;
      if (i === this.turn.length) {
        const grow = <T extends Int32Array | Float64Array>(a: T, make: (n: number) => T): T => {
          const b = make(a.length * 2);
          b.set(a);
          return b;
        };
        this.stream = grow(this.stream, (n) => new Int32Array(n));
        this.turn = grow(this.turn, (n) => new Int32Array(n));
        this.refs = grow(this.refs, (n) => new Float64Array(n));
      }
      this.rows.set(c.id, i);
    }
    let s = this.streamNo.get(c.stream);
    if (s === undefined) {
      s = this.streamNames.length;
      this.streamNames.push(c.stream);
      this.streamNo.set(c.stream, s);
    }
    this.stream[i] = s;
    this.turn[i] = c.turn;
    this.refs[i * 4] = c.call?.seq ?? 0;
    this.refs[i * 4 + 1] = c.call?.row ?? 0;
    this.refs[i * 4 + 2] = c.result?.seq ?? 0;
    this.refs[i * 4 + 3] = c.result?.row ?? 0;
  }

  open(stream: string, turn: number, since: RecordRef | null): Set<string> {
    const open = new Set<string>();
    const s = this.streamNo.get(stream);
    if (s === undefined) return open;
    const r = this.refs;
    for (const [id, i] of this.rows) {
      if (this.stream[i] !== s || this.turn[i] !== turn || r[i * 4] === 0 || r[i * 4 + 2] !== 0) continue;
      if (since && compareRef({ seq: r[i * 4]!, row: r[i * 4 + 1]! }, since) < 0) continue;
      open.add(id);
    }
    return open;
  }

  *values(): IterableIterator<CallState> {
    for (const id of this.rows.keys()) yield this.get(id)!;
  }

  /** @internal The table as it is held: its rows in order (an id's row is its place in `ids`), for conversation.fold. */
  columns(): LeanColumns {
    const n = this.rows.size;
    return { streams: [...this.streamNames], ids: [...this.rows.keys()], stream: this.stream.subarray(0, n), turn: this.turn.subarray(0, n), refs: this.refs.subarray(0, n * 4) };
  }

  /** @internal Fill an empty table with {@link columns} of another (conversation.fold). */
  load(c: LeanColumns): void {
    if (this.rows.size > 0) throw new ChainError("InvalidInput", "a lean call table is loaded only when empty");
    const n = c.ids.length;
    const cap = Math.max(1024, n);
    this.stream = new Int32Array(cap);
    this.stream.set(c.stream);
    this.turn = new Int32Array(cap);
    this.turn.set(c.turn);
    this.refs = new Float64Array(cap * 4);
    this.refs.set(c.refs);
    c.streams.forEach((name, i) => {
      this.streamNames.push(name);
      this.streamNo.set(name, i);
    });
    c.ids.forEach((id, i) => this.rows.set(id, i));
  }
}

/** @internal A lean call table's columns: stream names, then per row its id, stream number, turn and four refs (seq 0: none). */
export interface LeanColumns {
  readonly streams: readonly string[];
  readonly ids: readonly string[];
  readonly stream: ArrayLike<number>;
  readonly turn: ArrayLike<number>;
  readonly refs: ArrayLike<number>;
}

/**
 * @internal Fold accumulator. A lean one (`lean`) keeps what the next round is built from and
 * nothing that only renders the conversation: per stream its turn count and last compaction, per
 * call its stream, turn, call and result — not the records of each turn, the calls' fragments, the
 * messages or the compactions, which grow with every record of the session. It checks each round
 * exactly as the full fold does; only the full fold renders a {@link Conversation}.
 */
export class ChainState {
  readonly rounds: RoundSummary[] = [];
  throughSeq = 0;
  readonly files = new Map<number, FileBinding>();
  /** Rows cited per landed seq. */
  readonly cited = new Map<number, number>();
  readonly tombstones = new Map<number, Tombstone>();
  readonly streams = new Map<string, StreamState>();
  readonly calls: CallTable;
  readonly launches = new Map<string, Launch>();
  readonly messages: Message[] = [];
  readonly compactions: Compaction[] = [];

  constructor(
    readonly id: string,
    readonly lean = false,
  ) {
    this.calls = lean ? new LeanCalls() : new FullCalls();
  }

  get head(): RoundSummary | null {
    return this.rounds[this.rounds.length - 1] ?? null;
  }

  stream(name: string): StreamState {
    let s = this.streams.get(name);
    if (!s) {
      s = { count: 0, turns: [], lastCompaction: null };
      this.streams.set(name, s);
    }
    return s;
  }

  /** Calls of `stream` open in its current turn: a call record, no result, after the last compaction. */
  openCalls(stream: string): Set<string> {
    const s = this.streams.get(stream);
    if (!s || s.count === 0) return new Set<string>();
    return this.calls.open(stream, s.count - 1, s.lastCompaction);
  }

  /** Fold one round in (rounds must come in order; `file` names it in errors). */
  apply(r: Round, file: string): void {
    const expectRound = this.rounds.length + 1;
    const bad = (why: string): never => {
      throw new ChainError("Corrupt", `${file}: ${why}`, { data: { file, round: r.round } });
    };
    if (r.round !== expectRound) bad(`round ${r.round} where round ${expectRound} was expected`);
    if (r.conversation !== this.id) bad(`belongs to conversation ${JSON.stringify(r.conversation)}, not ${JSON.stringify(this.id)}`);
    const prev = this.head?.commit ?? null;
    if (r.prev !== prev) bad(`prev ${r.prev?.slice(0, 12) ?? "null"} does not match the previous round's commit ${prev?.slice(0, 12) ?? "null"}`);
    if (r.range.from !== this.throughSeq + 1) bad(`range starts at ${r.range.from}, the chain reaches ${this.throughSeq}`);
    for (const f of r.files) {
      this.files.set(f.seq, { seq: f.seq, stream: f.stream, kind: f.kind, sha256: f.sha256, records: f.records, round: r.round, gone: false });
    }
    for (const t of r.tombstones) {
      if (!this.files.has(t.seq) && !this.cited.has(t.seq)) bad(`tombstone for seq ${t.seq}, which no earlier round cites`);
      this.tombstones.set(t.seq, { seq: t.seq, rows: t.rows, round: r.round });
      const f = this.files.get(t.seq);
      if (f) f.gone = true;
    }
    for (const t of r.turns) {
      const s = this.stream(t.stream);
      if (t.turn === s.count) {
        s.count++;
        if (!this.lean) s.turns.push([]);
      } else if (t.turn !== s.count - 1) bad(`turn ${t.turn} of stream ${t.stream} skips ahead (the stream has ${s.count})`);
      const records = this.lean ? undefined : (s.turns[t.turn] as RecordRef[]);
      for (const ref of t.records) {
        records?.push(toRef(ref));
        this.cited.set(ref[0], (this.cited.get(ref[0]) ?? 0) + 1);
      }
    }
    for (const c of r.calls) {
      const cur = this.calls.get(c.id);
      if (!cur) {
        this.calls.set({ id: c.id, stream: c.stream, turn: c.turn, call: c.call && toRef(c.call), result: c.result && toRef(c.result), fragments: this.lean ? [] : c.fragments.map(toRef) });
      } else {
        cur.stream = c.stream;
        cur.turn = c.turn;
        if (cur.call === null && c.call) cur.call = toRef(c.call);
        if (cur.result === null && c.result) cur.result = toRef(c.result);
        if (!this.lean) for (const f of c.fragments) cur.fragments.push(toRef(f));
        this.calls.set(cur);
      }
    }
    for (const l of r.launches) {
      const cur = this.launches.get(l.child);
      if (!cur || launchRank(l) > launchRank(cur)) this.launches.set(l.child, { child: l.child, callId: l.call, at: toRef(l.at), anchor: l.anchor });
    }
    if (!this.lean) for (const m of r.messages) this.messages.push({ type: m.type, op: m.op, stream: m.stream, turn: m.turn, at: toRef(m.at) });
    for (const c of r.compactions) {
      if (!this.lean) this.compactions.push({ stream: c.stream, turn: c.turn, at: toRef(c.at) });
      this.stream(c.stream).lastCompaction = toRef(c.at);
    }
    this.throughSeq = r.range.to;
    this.rounds.push({ round: r.round, commit: r.commit, file, range: { ...r.range }, parser: { ...r.parser }, policy: { ...r.policy } });
  }

  /** Render the typed conversation tree (a full fold only). */
  toConversation(): Conversation {
    if (this.lean) throw new ChainError("InvalidInput", `conversation ${this.id}: a lean fold keeps no records to render`);
    const nodes = new Map<string, StreamNode>();
    const turnsOf = new Map<string, Turn[]>();
    const names = new Set<string>([MAIN_STREAM, ...this.streams.keys(), ...this.launches.keys()]);
    for (const name of [...names].sort()) {
      const s = this.streams.get(name);
      const turns: Turn[] = (s?.turns ?? []).map((records, index) => ({ stream: name, index, records: records.map((r) => ({ ...r })), calls: [], messages: [], compactions: [] }));
      turnsOf.set(name, turns);
      nodes.set(name, { name, launch: this.launches.get(name) ?? null, turns });
    }
    const turnFor = (stream: string, turn: number): Turn | undefined => turnsOf.get(stream)?.[turn];
    const calls: ToolCall[] = [];
    const callById = new Map<string, ToolCall>();
    for (const c of this.calls.values()) {
      const tc: ToolCall = { id: c.id, stream: c.stream, turn: c.turn, call: c.call, result: c.result, fragments: [...c.fragments], children: [] };
      calls.push(tc);
      callById.set(c.id, tc);
      turnFor(c.stream, c.turn)?.calls.push(tc);
    }
    for (const m of this.messages) turnFor(m.stream, m.turn)?.messages.push(m);
    for (const c of this.compactions) turnFor(c.stream, c.turn)?.compactions.push(c);
    // Nest each child under its launching call; anything not reachable from main is detached.
    const attached = new Set<string>([MAIN_STREAM]);
    const parentOf = new Map<string, ToolCall>();
    for (const [child, l] of this.launches) {
      if (child === MAIN_STREAM || l.callId === null) continue;
      const tc = callById.get(l.callId);
      if (tc && tc.stream !== child) parentOf.set(child, tc);
    }
    const reach = (stream: string, seen: Set<string>): void => {
      for (const [child, tc] of parentOf) {
        if (tc.stream !== stream || seen.has(child)) continue;
        seen.add(child);
        tc.children.push(nodes.get(child) as StreamNode);
        reach(child, seen);
      }
    };
    reach(MAIN_STREAM, attached);
    const detached: StreamNode[] = [];
    for (const name of [...nodes.keys()].sort()) {
      if (attached.has(name)) continue;
      attached.add(name);
      detached.push(nodes.get(name) as StreamNode);
      reach(name, attached);
    }
    for (const tc of calls) tc.children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const streams: Record<string, StreamNode> = {};
    for (const [name, node] of nodes) streams[name] = node;
    return {
      id: this.id,
      head: this.head,
      rounds: [...this.rounds],
      throughSeq: this.throughSeq,
      files: [...this.files.values()].sort((a, b) => a.seq - b.seq).map((f) => ({ ...f })),
      main: nodes.get(MAIN_STREAM) as StreamNode,
      detached,
      streams,
      calls,
      messages: [...this.messages],
      compactions: [...this.compactions],
      tombstones: [...this.tombstones.values()].sort((a, b) => a.seq - b.seq),
    };
  }
}

/** @internal */
export function toRef(t: RefTuple): RecordRef {
  return { seq: t[0], row: t[1] };
}

/** @internal */
export function toTuple(r: RecordRef): RefTuple {
  return [r.seq, r.row];
}

/** Order two record addresses by (seq, row). */
export function compareRef(a: RecordRef, b: RecordRef): number {
  return a.seq - b.seq || a.row - b.row;
}

/**
 * Fold decoded rounds (in round order; `files[i]` names round i in errors) into a conversation. Throws ChainError
 * `Corrupt` when a round does not follow the one before it.
 */
export function foldRounds(conversationId: string, rounds: readonly Round[], files?: readonly string[]): Conversation {
  return foldState(conversationId, rounds, files).toConversation();
}

/** @internal */
export function foldState(conversationId: string, rounds: readonly Round[], files?: readonly string[]): ChainState {
  const st = new ChainState(conversationId);
  rounds.forEach((r, i) => st.apply(r, files?.[i] ?? `round ${r.round}`));
  return st;
}

// Input (the derived index of a session) and on-disk round types.

/** A landed file as the session index lists it (structurally what @lake/store's `readIndex` returns). */
export interface IndexFile {
  /** The landed file's sequence number, per session, monotonic across streams. */
  seq: number;
  /** The landed file's name (`<kind>-<collected-at>-<seq>.sd`). Never copied into a round: it holds a time. */
  name: string;
  /** The stream the file belongs to: `main` or a child agent's id. */
  stream: string;
  /** The source kind (`transcript`, `meta`, `journal` …). */
  kind: string;
  /** SHA-256 hex of the landed file's bytes. */
  sha256: string;
  /** How many records the file holds. */
  records: number;
}

/** One record of a landed file as the index describes it: identifiers and roles, never text. */
export interface IndexEntry {
  /** The landed file's sequence. */
  seq: number;
  /** The 0-based record row in that file. */
  row: number;
  stream: string;
  /** Canonical record kind (user, assistant, tool_call, tool_result, system, summary, usage, meta, unknown). */
  kind: string;
  record_id?: string | undefined;
  parent_id?: string | undefined;
  tool_call_id?: string | undefined;
  /** Set on a record that launched (or reports the launch of) a child agent: the child's stream. */
  child_stream?: string | undefined;
  /** The vendor's type/subtype (`system/compact_boundary`, `queue-operation` …). */
  vendor_type?: string | undefined;
  /** A re-landed copy of a record already indexed: assembly skips it. */
  duplicate: boolean;
}

/**
 * Questions about every entry of an index read by range (those it left out and those it holds), answered on demand.
 * Re-landed copies (`duplicate`) are never an answer.
 */
export interface IndexLookup {
  /** Of each stream named, the `parent_id` of its first entry that has one. */
  firstParents(streams: Iterable<string>): Map<string, string>;
  /** Of each record id named, its first entry (in any stream). */
  firstEntries(recordIds: Iterable<string>): Map<string, IndexEntry>;
}

/** The derived index of one session, as far as `indexedSeq` reaches. */
export interface SessionIndex {
  /** The landed sequence the index covers; parse never reads past it. */
  indexedSeq: number;
  /** Every indexed file. */
  files: readonly IndexFile[];
  /** Every entry, or with `from` the entries of the files from that seq on. */
  entries: readonly IndexEntry[];
  /** A read by range: `entries` start at this landed seq (they need not hold ids or links), and `lookup` answers for every entry. */
  from?: number | undefined;
  lookup?: IndexLookup | undefined;
}

/** A record address in a round: `[landed seq, row]`. */
export type RefTuple = [number, number];

/** A landed file a round binds itself to. */
export interface RoundFile {
  seq: number;
  stream: string;
  kind: string;
  sha256: string;
  records: number;
}

/** A turn's records added by this round (a turn can continue across rounds). */
export interface RoundTurn {
  stream: string;
  /** 0-based turn number within its stream. */
  turn: number;
  records: RefTuple[];
}

/** A tool call as of this round: a new call, a result for an earlier call, or both. */
export interface RoundCall {
  /** The tool call id. */
  id: string;
  stream: string;
  /** The turn the call belongs to. */
  turn: number;
  /** The call record, or null when no call record with this id is known. */
  call: RefTuple | null;
  /** The result record, or null while the call is open. */
  result: RefTuple | null;
  /** Other records that carry this call id (progress, extra results), added by this round. */
  fragments: RefTuple[];
}

/** A child agent launch: the child stream, the call that launched it (or null), and the record that says so. */
export interface RoundLaunch {
  child: string;
  /** Tool call id of the launching call, or null when no call launched it (an anchor only). */
  call: string | null;
  /** The record that carries the launch (or, for an anchor, the parent record the child branches from). */
  at: RefTuple;
  /** True for an anchor: no record names the launch; the child's first parent link points at `at`. */
  anchor: boolean;
}

/** A steering or queued message. */
export interface RoundMessage {
  /** `steering`: input that arrived while a tool call of its turn was open; `queued`: a queue operation. */
  type: "steering" | "queued";
  /** For queued messages, the operation named by the vendor type suffix (`enqueue`, `remove` …), else null. */
  op: string | null;
  stream: string;
  turn: number;
  at: RefTuple;
}

/** A compaction boundary. */
export interface RoundCompaction {
  stream: string;
  /** The turn the boundary closes. */
  turn: number;
  at: RefTuple;
}

/** A landed file an earlier round cited and that is gone from the index. */
export interface RoundTombstone {
  seq: number;
  /** How many rows of it the chain had cited. */
  rows: number;
}

/** Versions a round was built with. */
export interface RoundVersions {
  parser: { name: string; version: number };
  policy: { id: string; version: number };
}

/** A round, as decoded from its `.sf` file. */
export interface Round extends RoundVersions {
  format: "lake-round";
  version: 1;
  conversation: string;
  /** 1-based round number. */
  round: number;
  /** Commit digest of the previous round, null for round 1. */
  prev: string | null;
  /** The landed sequences this round covers: `(previous to, to]`; `from` is the previous `to` + 1. */
  range: { from: number; to: number };
  files: RoundFile[];
  turns: RoundTurn[];
  calls: RoundCall[];
  launches: RoundLaunch[];
  messages: RoundMessage[];
  compactions: RoundCompaction[];
  tombstones: RoundTombstone[];
  /** SHA-256 hex over the canonical JSON of every other field. */
  commit: string;
}

/** A round before its commit digest is computed. */
export type RoundBody = Omit<Round, "commit">;

// push: send every session's new landed records to the fleet store as Parquet segments.
//
// For each session of the local root, the landed files push.state does not list (for this
// receiver, with the digest they have now) are read, their records become one segment per runtime
// under the next seg-NNNNNN of the session's fleet directory, created with putIfAbsent (a segment
// is never rewritten), and only then push.state records the files. A crash between the upload and
// the state save is resolved on the next push: the segment already under that key is read back
// and the landed files it holds are recorded as sent, so nothing is sent twice.
//
// What to look at is decided from push.state alone, before anything else is loaded or asked: a
// session whose index watermark (index.state's indexed_seq) is the one push.state recorded when it
// last read that index has nothing new, and needs no look unless its seal may be due. Only when some
// session needs one does push load the sender (push-send.ts: @lake/layout, the records, DuckDB) and
// talk to the store, so a push with nothing to do reads push.state and stats one small file per
// session (index.state, whose stamp push.state keeps beside the watermark).
import { readFileSync } from "node:fs";
import { randomHex, removeAbandoned, writeAtomic } from "@lake/durable";
import { join } from "node:path";
import type { ObjectStore } from "@lake/layout/store";
import { CollectorError } from "./errors.js";
import type { LocalRoot } from "./local-root.js";

/** push.state: what has been sent to each receiver. */
export interface PushState {
  schema: 1;
  receivers: Record<string, ReceiverState>;
  /** What each OTLP receiver (an endpoint URL) answered for each spool file (`push --otlp-endpoint`). */
  otlp_receivers?: Record<string, OtlpReceiverState>;
}
/** What one OTLP receiver answered, by spool file name (`_metrics/metrics-…pb`). */
export interface OtlpReceiverState {
  /** Spool file name → data points the receiver accepted (a 200; its `partial_success` subtracted). */
  accepted: Record<string, number>;
  /** Spool file name → why the receiver refused it (a 4xx other than 408 and 429, or a 200 rejecting points: never sent again). */
  rejected: Record<string, { status: number; points: number; message: string }>;
}
/** What one receiver (a fleet store URL) has been sent. */
export interface ReceiverState {
  fleet_id: string;
  sessions: Record<string, SessionPushState>;
}
/** One session's push state at one receiver. */
export interface SessionPushState {
  /** The session directory's partition label (`<session id>`, then `<id>.2` … after a seal). */
  part: number;
  /** dt of the current part. */
  dt: string;
  /** Next segment number per runtime in the current part. */
  next_seg: Record<string, number>;
  /** Segments and rows written in the current part, per runtime. */
  segments: Record<string, number>;
  rows: Record<string, number>;
  /** Landed files sent: path relative to the session directory → SHA-256 of the file. */
  files: Record<string, string>;
  /** The current part is sealed (per runtime sealed markers written). */
  sealed: boolean;
  /**
   * The session index's watermark (index.state's indexed_seq, read before the index) when push last
   * read that index and sent every landed file it listed; absent until then. While index.state still
   * says so, nothing new was indexed and the index is not read again.
   */
  indexed_seq?: number;
  /**
   * index.state's stamp (`<ino>:<size>:<mtime ns>:<ctime ns>`) taken before `indexed_seq` was read:
   * while a stat still shows it, index.state is the file that watermark came from and is not read.
   */
  index_stamp?: string;
  /** The newest pass stamp (ms since the epoch) of the files sent: when `--seal-idle` makes the seal due. */
  newest_ms?: number;
}

/** Options of one push. */
export interface PushOptions {
  readonly agent: string;
  /** Seal a session whose newest landed file is older than this (seconds); 0 seals right after sending. */
  readonly sealIdleSeconds: number;
  /** Fleet id for a store without fleet.json (created with create-if-absent). */
  readonly fleetId?: string;
  readonly now?: () => number;
  /** Called after each session (progress). */
  readonly onSession?: (sessionId: string, sent: number) => void;
  /** Asked before each session: true stops the push there (push.state is saved before it returns). */
  readonly shouldStop?: () => boolean;
  /** Landed bytes of a session sent at a time, one segment per runtime each (default 16 MiB). */
  readonly batchBytes?: number;
}

/** What one push did. */
export interface PushSummary {
  store: string;
  fleet_id: string;
  sessions: number;
  segments: number;
  rows: number;
  bytes: number;
  quarantined: number;
  sealed: number;
  /** Sessions whose current part another writer had sealed (learned from its `_SEALED`): continued in the next part. */
  learned: number;
  recovered: number;
  /** Sessions the store has a tombstone for (`lake-maint forget`): never sent. */
  refused: string[];
  /** The push stopped between sessions when asked to (`shouldStop`); `sessions` counts those sent. */
  interrupted: boolean;
  /**
   * Sessions not sent because their local data is damaged (a landed file or the index that does not
   * read or check): each with the one-line reason naming the file. The other sessions were pushed.
   */
  problems: { session: string; reason: string }[];
}

const STATE_FILE = "push.state";

/** Where push keeps its usage carries, under the root (a cache: see push-send.ts putSegmentRollup). */
export const CARRY_DIR = join("_export", "usage");

/** A carry's file name: `<session>-<32 hex of the store and directory>-<segment seq>.carry`. */
export function carryName(session: string, hash: string, seq: number): string {
  return `${session}-${hash}-${seq}.carry`;
}

/** The session a carry's file name names, or undefined for any other name. */
export function carrySession(name: string): string | undefined {
  return /^(.+)-[0-9a-f]{32}-\d+\.carry$/.exec(name)?.[1];
}

/** Read push.state (an absent file is an empty state; a damaged one is refused, never reset). */
export function readPushState(root: string): PushState {
  const file = join(root, STATE_FILE);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { schema: 1, receivers: {} };
    throw new CollectorError("Input", `${file}: cannot read (${(e as Error).message})`);
  }
  try {
    const v = JSON.parse(text) as PushState;
    if (v.schema !== 1 || typeof v.receivers !== "object") throw new Error("unknown schema");
    return v;
  } catch (e) {
    throw new CollectorError("Input", `${file}: not a push state (${(e as Error).message}); refusing to reset it`);
  }
}

/** Replace push.state atomically (temp + fsync + rename + dir fsync: @lake/durable's writeAtomic). */
export function writePushState(root: string, state: PushState): void {
  const file = join(root, STATE_FILE);
  writeAtomic(file, JSON.stringify(state) + "\n", { temp: join(root, `.${STATE_FILE}.tmp-${process.pid}-${randomHex(4)}`), mode: 0o644 });
}

/** A summary of a push that sent nothing. */
export function emptySummary(store: string, fleetId: string): PushSummary {
  return { store, fleet_id: fleetId, sessions: 0, segments: 0, rows: 0, bytes: 0, quarantined: 0, sealed: 0, learned: 0, recovered: 0, refused: [], interrupted: false, problems: [] };
}

/**
 * The sessions that need a look at this receiver: all of them when push.state has none of it;
 * else those whose index watermark moved from the recorded one (or was never recorded, or does not
 * read), and, of the unchanged unsealed ones, those whose seal is due: idle for `sealIdleSeconds`
 * by the recorded newest stamp, or every source gone (cursors read only for a session the last
 * complete collect pass did not confirm live). Undefined: every session. `stamped`: entries whose
 * watermark was read and still held, given index.state's stamp (push.state is then saved).
 * `grown`: some session is looked at for its moved watermark (not only for its seal): likely rows to send.
 */
export function sessionsToLook(local: LocalRoot, recv: ReceiverState | undefined, sealIdleSeconds: number, now: number): { look: string[] | undefined; stamped: number; grown: boolean } {
  if (recv === undefined) return { look: undefined, stamped: 0, grown: true };
  const out: string[] = [];
  let stamped = 0;
  let grown = false;
  for (const id of local.sessions()) {
    const ss = recv.sessions[id];
    let seq: number | undefined;
    const stamp = ss?.indexed_seq !== undefined ? local.indexStamp(id) : undefined;
    if (ss?.index_stamp !== undefined && ss.indexed_seq !== undefined && stamp === ss.index_stamp) seq = ss.indexed_seq;
    else {
      try {
        seq = local.indexedSeq(id);
      } catch {
        seq = undefined; // a damaged index.state: the full look names it
      }
      // Still the watermark recorded (an entry of an older push, or an index.state replaced by one
      // saying the same): the stamp taken before that read is kept, so the next push only stats it.
      if (ss !== undefined && stamp !== undefined && seq === ss.indexed_seq) {
        ss.index_stamp = stamp;
        stamped++;
      }
    }
    if (ss?.indexed_seq !== undefined && seq === ss.indexed_seq) {
      // Everything its index lists was sent: a look only when its seal is due, judged as push-send's
      // sealDue would from the files (their newest stamp) and the cursors (read only for a session
      // the last complete collect pass did not find live).
      if (ss.sealed || ss.newest_ms === undefined) continue;
      const due = now - ss.newest_ms >= sealIdleSeconds * 1000 || (!local.sourcesLive(id) && local.allSourcesGone(id));
      if (!due) continue;
    } else grown = true;
    out.push(id);
  }
  return { look: out, stamped, grown };
}

/** The prefix of a push's scratch directory (`$TMPDIR/lake-push-*`, @lake/durable's scratchDir). */
export const PUSH_SCRATCH = "lake-push";

/** Push every session of the root to `store`. */
export async function push(local: LocalRoot, store: ObjectStore, options: PushOptions): Promise<PushSummary> {
  const now = options.now ?? Date.now;
  const state = readPushState(local.root);
  const prior = state.receivers[store.url];
  const { look, stamped, grown } = sessionsToLook(local, prior, options.sealIdleSeconds, now());
  if (stamped > 0) writePushState(local.root, state);
  if (prior !== undefined && look !== undefined && look.length === 0) {
    // Nothing to send, so no scratch directory of its own (whose taking sweeps): what killed pushes left is swept here.
    removeAbandoned(PUSH_SCRATCH);
    return emptySummary(store.url, prior.fleet_id);
  }
  const { send } = await import("./push-send.js");
  return send(local, store, options, state, look, grown);
}

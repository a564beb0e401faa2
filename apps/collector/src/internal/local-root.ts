// The collector's view of a local storage root for push: sessions, their indexed landed files,
// the records in them, and whether every source of a session is gone. What push decides from
// (the sessions, index watermarks, pass.state, cursors) is read through @lake/store/pass; the index
// and the landed files (@lake/store/read) and the record schema are loaded only when a session is read.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeCursor, indexedSeq, indexStamp, listForgotten, listSessions, readPassStateSessions } from "@lake/store/pass";
import type { FleetRow, RecordLine } from "@lake/segments";
import type { UsageRecord } from "@lake/events/usage";
import { CollectorError } from "./errors.js";

/** A landed file as push sees it. */
export interface LandedFileRef {
  /** Path relative to the session directory. */
  readonly rel: string;
  readonly seq: number;
  /** The pass stamp of the file, in ms since the epoch. */
  readonly collectedAtMs: number;
}

/** What push reads from a local root. */
export interface LocalRoot {
  readonly root: string;
  sessions(): string[];
  /** The session index's watermark (`@lake/store` indexedSeq): reads index.state only. */
  indexedSeq(sessionId: string): number | undefined;
  /** index.state's stamp (`@lake/store` indexStamp): one stat; unchanged while the watermark is. */
  indexStamp(sessionId: string): string | undefined;
  /**
   * The session's indexed landed files. `sent` names those push.state lists as sent: their index
   * entries are not read (readRows reads the index again, whole, if asked for one of them).
   */
  landedFiles(sessionId: string, sent?: (rel: string) => boolean): Promise<LandedFileRef[]>;
  /**
   * The records of `files` (re-landed duplicates left out), each as its landed line's bytes with
   * what push reads of it ({@link PushLine}), and each file's SHA-256. With `maxBytes`, the files
   * are read in order until they hold that many bytes (one at least): `files` in the result says
   * how many were read.
   */
  readRows(sessionId: string, files: readonly LandedFileRef[], agent: string, maxBytes?: number): Promise<PushRows>;
  /**
   * True when the last complete collect pass found the session with every source active (its
   * pass.state mark): not all gone then. A cache's answer — false means "not known", never "gone".
   */
  sourcesLive(sessionId: string): boolean;
  /** True when the session has cursors and every one is source_gone. */
  allSourcesGone(sessionId: string): boolean;
}

/**
 * A landed record as push sends it: its line's bytes as the file holds them, never decoded (what
 * DuckDB reads into the segment), with the columns push fills in; its runtime (which segment it
 * goes to) and ts (the session's day), read from the line by key; and the record itself, parsed and
 * checked only when push needs more of it — a line that may carry usage (the segment's usage
 * rollup) or is quarantined (its quarantine object).
 */
export interface PushLine extends RecordLine {
  readonly json: Uint8Array;
  readonly landed_seq: number;
  readonly landed_row: number;
  readonly runtime: string;
  readonly ts: string | undefined;
  /**
   * The usage record the segment's rollup counts of it (usageRecordOfRow), when it has one. Made
   * as the line is read: the parsed record is not kept (its text would live until the session is sent).
   */
  readonly usage: UsageRecord | undefined;
  /** The record as a fleet row when it is quarantined (its quarantine object is made from it); else undefined. */
  readonly quarantined: FleetRow | undefined;
}

/** What push reads of a session's landed files: their lines in order, and each file's SHA-256. */
export interface PushRows {
  readonly lines: PushLine[];
  readonly digests: Map<string, string>;
  /** How many of the files asked for were read (the first ones): all of them unless a byte budget stopped it. */
  readonly files: number;
}

/** A (seq, row) pair as one number: rows of a landed file stay below this (a file is cut at its byte budget). */
const ROWS_PER_SEQ = 2 ** 26;

/** `20260831T091204.481523000Z` → ms since the epoch. */
export function stampMs(stamp: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\.(\d{3})\d*Z$/.exec(stamp);
  if (!m) return 0;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), Number(m[7]));
}

// A landed line is the JSON.stringify of one canonical record: a flat object (`usage` the only
// nested one, of numbers), so a key's quoted name followed by `:` occurs in its bytes only as that
// key (inside a string every quote is escaped). Push reads the few fields it needs of most records
// by key, in one scan of each file's bytes per key (Buffer.indexOf: no string is made of the file),
// not by parsing them.
const RUNTIME_KEY = Buffer.from('"runtime":"');
const TS_KEY = Buffer.from('"ts":"');
/**
 * A record with usage (countUsage reads a row with a usage key), or a `latest` copy (it voids
 * earlier ones): push needs it whole. One scan finds both keys, and every other key that starts so
 * (`usage_key`): a few records more than need it are parsed, never one fewer. A hit is a key when
 * `"` comes before it and `"` or `_` after it (inside a string the quotes would be escaped). The
 * scan looks for `usage` without its quote: Buffer.indexOf finds a short needle by its first byte,
 * and a `"` is in every few bytes of JSON, a `u` far less often (2.5 against 1.6 GB/s here).
 */
const USAGE_KEY_PREFIX = Buffer.from("usage");
const UNDERSCORE = 0x5f;

/** Whether the line [start, end) of `bytes` has a key starting `"usage`, its first hit of `usage` at `at` (or -1). */
function usageKeyIn(bytes: Buffer, at: number, end: number): boolean {
  for (; at >= 0 && at < end; at = bytes.indexOf(USAGE_KEY_PREFIX, at + 1)) {
    if (bytes[at - 1] !== QUOTE) continue;
    const next = bytes[at + USAGE_KEY_PREFIX.length];
    if (next === QUOTE || next === UNDERSCORE) return true;
  }
  return false;
}

/**
 * The next occurrence of a key at or after a line's start, kept across the lines of one file.
 * `first`: the key a record is written with first (`runtime`): it is looked for right after the
 * line's `{` before it is searched for — one search a line less.
 */
class KeyScan {
  #at = -2;
  constructor(
    private readonly bytes: Buffer,
    private readonly key: Buffer,
    private readonly first = false,
  ) {}
  /** Where the key occurs in [start, end) of the bytes (the first time), or -1. */
  within(start: number, end: number): number {
    if (this.#at !== -1 && this.#at < start) this.#at = this.first && this.#startsAt(start + 1, end) ? start + 1 : this.bytes.indexOf(this.key, start);
    return this.#at >= start && this.#at < end ? this.#at : -1;
  }
  #startsAt(at: number, end: number): boolean {
    const { bytes, key } = this;
    if (at + key.length > end) return false;
    for (let i = 0; i < key.length; i++) if (bytes[at + i] !== key[i]) return false;
    return true;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The string value of a key found at `at` (its quoted name, `:` and opening quote, `key` long) in
 * `bytes`: undefined when `at` is -1, null when the value holds an escape or does not end before
 * `end` (the caller parses the line).
 */
function stringAt(bytes: Buffer, at: number, key: Buffer, end: number): string | undefined | null {
  if (at < 0) return undefined;
  const start = at + key.length;
  let close = start;
  while (close < end && bytes[close] !== QUOTE) {
    if (bytes[close] === BACKSLASH) return null;
    close++;
  }
  if (close >= end) return null;
  return bytes.toString("utf8", start, close);
}

/** The runtime names met so far, by their UTF-8 bytes: a file's lines name a few, each one string. */
const runtimeNames: { bytes: Buffer; name: string }[] = [];

/** {@link stringAt} of a line's `runtime`: the same string for the same bytes, not one per line. */
function runtimeName(bytes: Buffer, at: number, end: number): string | undefined | null {
  if (at < 0) return undefined;
  const start = at + RUNTIME_KEY.length;
  let close = start;
  while (close < end && bytes[close] !== QUOTE && bytes[close] !== BACKSLASH) close++;
  if (close >= end || bytes[close] !== QUOTE) return null;
  next: for (const known of runtimeNames) {
    const k = known.bytes;
    if (k.length !== close - start) continue;
    for (let i = 0; i < k.length; i++) if (bytes[start + i] !== k[i]) continue next;
    return known.name;
  }
  // No escape before the closing quote (else null above): the bytes are the string's own UTF-8.
  const name = bytes.toString("utf8", start, close);
  if (runtimeNames.length < 16) runtimeNames.push({ bytes: Buffer.from(bytes.subarray(start, close)), name });
  return name;
}

type Heavy = { store: typeof import("@lake/store/read"); events: typeof import("@lake/events/record"); quarantined: string; usageRecordOfRow: (row: FleetRow, runtime: string) => UsageRecord | undefined };
let heavy: Promise<Heavy> | undefined;
const loadHeavy = (): Promise<Heavy> =>
  (heavy ??= Promise.all([import("@lake/store/read"), import("@lake/events/record"), import("@lake/redact/quarantine"), import("@lake/segments").then(({ usageRecordOfRow }) => usageRecordOfRow)]).then(([store, events, q, usageRecordOfRow]) => ({
    store,
    events,
    quarantined: q.QUARANTINE_TYPE,
    usageRecordOfRow,
  })));

/** A LocalRoot over a @lake/store storage root. */
export function localRoot(root: string): LocalRoot {
  // push asks for a session's files, then its rows: the index (entries.bin) is read once per session,
  // kept here for that session only (the store's own cache of it is dropped: a push reads each index once),
  // with the entries of the files not sent yet only (what a push of a long session reads is what it sends).
  type Read = { sessionId: string; index: ReturnType<Heavy["store"]["readIndex"]>; sent: ((rel: string) => boolean) | undefined };
  let cached: Read | undefined;
  const indexOf = async (sessionId: string, sent?: (rel: string) => boolean): Promise<Read> => {
    if (cached?.sessionId !== sessionId) {
      const { store } = await loadHeavy();
      const entriesOf = sent && ((f: { rel: string }) => !sent(f.rel));
      cached = { sessionId, index: store.readIndex(root, sessionId, { fields: ["vendor_type"], ...(entriesOf ? { entriesOf } : {}) }), sent };
      store.releaseIndex(root, sessionId);
    }
    return cached;
  };
  let passSessions: ReadonlySet<string> | undefined | null;
  return {
    root,
    // A forgotten session is never sent again (its removal may be under way): one listing of the
    // forget records, not one stat per session.
    sessions: () => {
      const forgotten = new Set(listForgotten(root));
      const ids = listSessions(root);
      return forgotten.size === 0 ? ids : ids.filter((id) => !forgotten.has(id));
    },
    indexedSeq: (sessionId) => indexedSeq(root, sessionId),
    indexStamp: (sessionId) => indexStamp(root, sessionId),
    async landedFiles(sessionId, sent) {
      const { index: idx } = await indexOf(sessionId, sent);
      const { parseLandedName } = (await loadHeavy()).store;
      return idx.files.map((f) => ({ rel: f.rel, seq: f.seq, collectedAtMs: stampMs(parseLandedName(f.name)?.stamp ?? "") }));
    },
    async readRows(sessionId, files, agent, maxBytes = Infinity) {
      let got = await indexOf(sessionId);
      // Entries of a file the index was read without (one said to be sent): read again, whole.
      const without = got.sent;
      if (without !== undefined && files.some((f) => without(f.rel))) {
        cached = undefined;
        got = await indexOf(sessionId);
      }
      const idx = got.index;
      const { store, events, quarantined, usageRecordOfRow } = await loadHeavy();
      // Rows the index marks: re-landed duplicates (never sent) and quarantined records (push needs their fields).
      const dup = new Set<number>();
      const held = new Set<number>();
      for (const e of idx.entries) {
        if (e.duplicate) dup.add(e.seq * ROWS_PER_SEQ + e.row);
        else if (e.vendor_type === quarantined) held.add(e.seq * ROWS_PER_SEQ + e.row);
      }
      const lines: PushLine[] = [];
      const digests = new Map<string, string>();
      const indexed = new Map(idx.files.map((x) => [x.rel, x.sha256]));
      let read = 0;
      let bytesRead = 0;
      for (const f of files) {
        if (read > 0 && bytesRead >= maxBytes) break;
        read++;
        // The index recorded the file's SHA-256 when it landed: a file that changed since is damaged
        // (one that still hashes to it is not hashed twice: parseLanded). A file that hashes to it is
        // the one this collector wrote, a canonical record per line: its lines go on as bytes.
        const want = indexed.get(f.rel);
        const lf = store.readLandedBytes(root, sessionId, f.rel, want !== undefined ? { sha256: want } : {});
        if (want !== undefined && lf.sha256 !== want) throw new CollectorError("Input", `${join(root, sessionId, f.rel)}: SHA-256 ${lf.sha256} differs from the index's ${want} (damaged landed file)`);
        digests.set(f.rel, lf.sha256);
        bytesRead += lf.bytes;
        const body = lf.body;
        const runtimes = new KeyScan(body, RUNTIME_KEY, true);
        const times = new KeyScan(body, TS_KEY);
        const usage = new KeyScan(body, USAGE_KEY_PREFIX);
        const rows = lf.rows;
        for (let row = 0; row < rows.length; row++) {
          const bytes = rows[row]!;
          const seqRow = f.seq * ROWS_PER_SEQ + row;
          if (dup.has(seqRow)) continue;
          const start = bytes.byteOffset - body.byteOffset;
          const end = start + bytes.length;
          const carries = usageKeyIn(body, usage.within(start, end), end);
          const whole = carries || held.has(seqRow);
          // A line parsed whole gives its runtime and ts: they are looked for by key in the others only.
          let runtime = whole ? undefined : runtimeName(body, runtimes.within(start, end), end);
          let ts = whole ? undefined : stringAt(body, times.within(start, end), TS_KEY, end);
          let usageRec: UsageRecord | undefined;
          let quarantinedRow: FleetRow | undefined;
          if (whole || typeof runtime !== "string" || ts === null) {
            // The record's fields, checked as the schema declares them without zod (checkStoredRecord;
            // a record that does not fit stops this session only). The object is this line's own.
            const rec = Object.assign(events.checkStoredRecord(JSON.parse(bytes.toString("utf8"))), { agent, landed_seq: f.seq, landed_row: row }) as FleetRow;
            runtime = rec.runtime;
            ts = rec.ts;
            if (carries) usageRec = usageRecordOfRow(rec, rec.runtime);
            if (rec.vendor_type === quarantined) quarantinedRow = rec;
          }
          const ms = ts === undefined ? NaN : Date.parse(ts);
          lines.push({ json: bytes, tsMs: Number.isNaN(ms) ? null : ms, landed_seq: f.seq, landed_row: row, runtime: runtime as string, ts, usage: usageRec, quarantined: quarantinedRow });
        }
      }
      return { lines, digests, files: read };
    },
    sourcesLive(sessionId) {
      if (passSessions === undefined) {
        try {
          passSessions = readPassStateSessions(root);
        } catch {
          passSessions = null; // a cache: unreadable means "not known"
        }
      }
      return passSessions?.has(sessionId) ?? false;
    },
    allSourcesGone(sessionId) {
      let any = false;
      for (const area of ["streams", "runs"]) {
        let streams: string[] = [];
        try {
          streams = readdirSync(join(root, sessionId, area));
        } catch {
          continue;
        }
        for (const s of streams) {
          let names: string[] = [];
          try {
            names = readdirSync(join(root, sessionId, area, s));
          } catch {
            continue;
          }
          for (const n of names) {
            if (!n.endsWith(".cursor")) continue;
            const file = join(root, sessionId, area, s, n);
            any = true;
            try {
              if (decodeCursor(readFileSync(file, "utf8"), file).state !== "source_gone") return false;
            } catch {
              return false;
            }
          }
        }
      }
      return any;
    },
  };
}

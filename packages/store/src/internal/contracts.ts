/**
 * The contracts of a session store: what the caller tells it about a source (its framing, its
 * converter, carried state), the options of a session, and what a pass reports.
 */
import type { CanonicalRecord } from "@lake/events";
import type { StepHook } from "./fsx.js";
import type { Area } from "./names.js";
import type { IndexUpdate } from "./indexer.js";
import type { EncodedWindow, RecordFacts } from "./records.js";

/** The tail window: the bytes before offset that must still match tail_sha256. */
export const TAIL_WINDOW = 1024 * 1024;
/** Default read budget per window (max_delta_bytes). */
export const DEFAULT_MAX_DELTA_BYTES = 2 * 1024 * 1024;
/** Default windows per source per pass. */
export const DEFAULT_MAX_WINDOWS = 65;

/** One source the collector discovered, as the store needs to know it. */
export interface SourceRef {
  /** Absolute path of the source file to read. */
  readonly path: string;
  /** The source as the cursor records it: the path relative to the adapter's source root. */
  readonly source: string;
  /** `streams` (default) for a stream (`main`, an agent id), `runs` for a workflow run. */
  readonly area?: Area;
  /** The stream or run id: the directory its files and cursor live in. */
  readonly stream: string;
  /** The file kind: `transcript`, `meta`, `journal`, `manifest`, `script`, `changes` … */
  readonly kind: string;
  /** Runtime id, for the unknown records the store makes of lines that are not JSON. */
  readonly runtime: string;
  /** Adapter name and version, written to every landed file's header. */
  readonly adapter: string;
  readonly adapterVersion: string;
  /**
   * How an append source is cut into records: newline-terminated lines (default), or a caller's
   * framing for binary formats (a @lake/wal spool or WAL). The cursor rules are the same.
   */
  readonly framing?: Framing;
  /**
   * Whether the first window of a source with no cursor yet is a source of its runtime at all: given
   * the facts (kind, ids) of the records the window would land, a reason to refuse it (`not a claude-code transcript`) or
   * undefined. A refused source lands nothing and gets no cursor, so it is looked at again later.
   */
  readonly accept?: (records: readonly RecordFacts[]) => string | undefined;
  /**
   * Convert and encode a window of a line-based source elsewhere (a caller's worker pool): given the
   * window's text (complete lines, without the last one's newline), where its first line is, and
   * the context convert would get, the window's records as {@link encodeWindow} makes them (or
   * joined from pieces of the window, see `windowPieces`), landed as they are; or undefined, and
   * the pass converts the window itself. Not used with `framing`; refused with `carry` (InvalidArgument).
   * Its records are checked before landing: `facts.length === records` and exactly `records`
   * newline-terminated body lines, else InvalidArgument.
   */
  readonly encode?: (text: Buffer, at: { readonly offset: number; readonly ord: number }, ctx: ConvertContext) => Promise<EncodedWindow | undefined>;
  /**
   * Cross-window state of the caller's converter, carried in the cursor (`adapter_state`) so a pass
   * reads only new bytes. `restore` is called once before the first window with the text saved
   * with the cursor (undefined when none, or the source is read from byte 0) and the cursor's
   * offset; `save(newOffset)` after each window's convert, and its text is saved with that window's cursor.
   */
  readonly carry?: CarriedState;
}

/** A converter's state carried from window to window and from pass to pass inside the cursor. */
export interface CarriedState {
  restore(saved: string | undefined, offset: number): void | Promise<void>;
  /** The state after the window that ends at `offset` (the offset the cursor is saved with). */
  save(offset: number): string | undefined;
}

/**
 * A framing of an append source other than lines. The store reads windows of complete units with
 * it: a unit cut by the end of the file is a write in progress (a torn tail) and waits for a later
 * pass; a unit longer than the budget is read whole.
 */
export interface Framing {
  /** Bytes of the longest prefix of `buf` made of complete units (0 when the first is incomplete). */
  complete(buf: Buffer): number;
  /** The whole length of the unit that starts `head`, when its header is in `head`; else undefined. */
  unitLength(head: Buffer): number | undefined;
  /**
   * The records of complete units: each as a SourceLine (its `value` is what convert sees; `line` is
   * the unit's ordinal or sequence), and for each whether it is invalid (lands as an unknown record
   * keeping its bytes). Units that carry no record (a WAL's lineage frames) yield no line. `refuse`
   * names a reason the whole source must not be read (a newer writer, corruption): the source
   * becomes a conflict and nothing of the window lands.
   */
  split(buf: Buffer, offset: number, ord: number): { lines: SourceLine[]; invalid: boolean[]; refuse?: string };
}

/** One complete source line (or, for a snapshot, the whole trimmed content). */
export interface SourceLine {
  /** The line's bytes without its newline. */
  readonly bytes: Buffer;
  /** The bytes decoded as UTF-8. */
  readonly text: string;
  /** The parsed JSON value (lines that are not JSON never reach convert). */
  readonly value: unknown;
  /** Byte offset of the line's first byte in the source. */
  readonly offset: number;
  /** 1-based line number in the source. */
  readonly line: number;
}

/** What convert is told besides the lines. */
export interface ConvertContext {
  readonly sessionId: string;
  readonly source: SourceRef;
}

/**
 * The caller's converter: complete, valid-JSON source lines → canonical records (already masked),
 * in source order. The store calls it once per run of consecutive JSON lines in a window; it may
 * return fewer or more records than lines. The store holds no adapter code.
 */
export type Convert = (lines: readonly SourceLine[], ctx: ConvertContext) => readonly CanonicalRecord[] | Promise<readonly CanonicalRecord[]>;

/**
 * Masks the text of a line that is not JSON before it lands as an unknown record (the collector
 * composes redaction here). Returns the masked text and the rule ids that fired.
 */
export type MaskUnknown = (text: string, ctx: ConvertContext) => { text: string; rules: readonly string[] };

/** A line the store writes to report a problem (default: standard error). */
export type Logger = (line: string) => void;

/** How {@link SessionStore.resolveConflict} moves a conflict. */
export type ResolveMode = "reread-from-start" | "continue-from-offset";

/** Options of {@link openSession}. */
export interface SessionOptions {
  /** How long to wait for the session's lock (ms). 0 (default): fail at once with `Locked`. */
  readonly waitMs?: number;
  /** max_delta_bytes: read budget per window (default 2 MiB). */
  readonly maxDeltaBytes?: number;
  /** Windows per source per pass before the source is pending (default 65). */
  readonly maxWindows?: number;
  /** Where conflicts found by a pass are named (default: standard error). */
  readonly logger?: Logger;
  /** Masks non-JSON lines before they land as unknown records (default: identity). */
  readonly maskUnknown?: MaskUnknown;
  /** Test hook, called before every durable step with its name. */
  readonly onStep?: StepHook;
  /**
   * fsync landed files, cursors, state and index and their directories (default true). Only a test
   * that kills processes (not the machine) may turn it off: the ordering guarantees do not depend on it.
   */
  readonly fsync?: boolean;
}

/** What happened to one source in a pass. */
export type SourceStatus =
  | "landed" // something landed and the source is drained up to its last complete line
  | "pending" // the window limit was hit with complete lines left
  | "unchanged" // nothing new
  | "waiting" // only an unterminated last line is new
  | "conflict" // found in conflict by this pass (named on the logger)
  | "in_conflict" // already in conflict: skipped, only counted
  | "gone" // the file is gone: cursor set to source_gone (or there was nothing to track)
  | "problem" // the source could not be read (unreadable, not a regular file, dangling link …): cursor untouched
  | "rejected"; // the first window is not a source of its runtime (`accept` refused it): nothing landed, no cursor

/** The outcome of collecting one source. */
export interface SourceOutcome {
  readonly status: SourceStatus;
  /** Landed files, in order. */
  readonly landed: ReadonlyArray<{ readonly seq: number; readonly rel: string; readonly records: number; readonly bytes: number }>;
  /** Source bytes consumed in this pass. */
  readonly bytesRead: number;
  /** For `conflict`, `problem` and `rejected`: why. */
  readonly reason?: string;
  /** True when a source_gone cursor was set back to active. */
  readonly reactivated?: boolean;
  /** The source's cursor, relative to the session directory (`streams/main/transcript.cursor`). */
  readonly cursor?: string;
}

/** Summary of a finished pass. */
export interface PassSummary {
  readonly stamp: string;
  /** Files landed by the pass. */
  readonly landed: number;
  readonly records: number;
  /** Sources with complete lines left after the window limit. */
  readonly pending: number;
  /** Sources in conflict that this pass met (found now or before). */
  readonly conflicts: number;
  /** Conflicts this pass found, with file and reason. */
  readonly newConflicts: ReadonlyArray<{ readonly file: string; readonly reason: string }>;
  /** Cursors set to source_gone by this pass. */
  readonly gone: number;
  /** Sources this pass could not read or refused (`problem`, `rejected`), with file and reason. */
  readonly problems: ReadonlyArray<{ readonly file: string; readonly reason: string }>;
  /** The index update, when the pass updated it. */
  readonly index?: IndexUpdate;
  /** Non-zero exit semantics of a single pass: true when pending > 0 or conflicts > 0. */
  readonly failed: boolean;
  /** The highest landed sequence of the session when the pass ended (0: none); the index covers it unless `index` is absent. */
  readonly seq: number;
}

/** @internal a type with its readonly properties writable. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

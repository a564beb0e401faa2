import type { RawRecord } from "@lake/events";

/** How a source is read: `append` sources only grow (read by byte offset), `snapshot` sources are rewritten whole. */
export type SourceMode = "append" | "snapshot";

/** One source file of a session, as discovery reports it and as the adapter needs it to convert lines. */
export interface SourceRef {
  /** Runtime id (`claude-code`, `codex`, `gemini`, `broca`, `hook`). */
  readonly runtime: string;
  /** Absolute path of the file. */
  readonly path: string;
  /** Path relative to the runtime root (provenance `source_path`); the absolute path when outside a root. */
  readonly rel: string;
  /** Session the source belongs to. */
  readonly session_id: string;
  /** `main`, or the child agent's id. */
  readonly stream: string;
  /** Source kind inside its stream: `transcript`, `meta`, `spool`, `wal` (names the cursor `<kind>.cursor`). */
  readonly kind: string;
  readonly mode: SourceMode;
}

/** A discovered source with what `stat` said when discovery saw it. */
export interface DiscoveredSource extends SourceRef {
  readonly root: string;
  readonly size: number;
  readonly mtimeMs: number;
  /** The file's inode as discovery's stat saw it (absent when discovery did not stat the file). */
  readonly ino?: number;
}

/** A directory or file discovery could not read: it is reported, never fatal. */
export interface DiscoveryProblem {
  readonly path: string;
  readonly reason: string;
  /**
   * `file`: one file that cannot be a source (a dangling link, a FIFO, a socket); `directory`
   * (the default): a directory discovery could not read, which may hide sources.
   */
  readonly scope?: "file" | "directory";
}

/** What discovery found for one runtime. */
export interface Discovery {
  readonly runtime: string;
  /** The roots looked at (existing or not). */
  readonly roots: readonly string[];
  readonly sources: DiscoveredSource[];
  readonly problems: DiscoveryProblem[];
}

/** Options of discovery. Globs match the source path relative to its root (`/` separators) or the session id. */
export interface DiscoverOptions {
  /** Roots to scan instead of the runtime's defaults. */
  readonly roots?: readonly string[];
  /** Keep only sources matching at least one of these globs (default: all). */
  readonly include?: readonly string[];
  /** Drop sources matching any of these globs. */
  readonly exclude?: readonly string[];
  /** Environment for default roots (default: process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Home directory for default roots (default: os.homedir()). */
  readonly home?: string;
}

/**
 * One complete source line as the store hands it over: bytes without the newline, byte offset,
 * 1-based line number; and, when the caller has decoded and parsed the line already (the store
 * does, to tell JSON from torn lines), its text and JSON value, so the adapter does neither again.
 */
export interface SourceLine {
  readonly bytes: Uint8Array | string;
  readonly offset: number;
  readonly line: number;
  /** The bytes decoded as UTF-8; given together with `value`. */
  readonly text?: string;
  /** `text` parsed as JSON (undefined: not JSON); read only when `text` is given. */
  readonly value?: unknown;
}

/**
 * Cross-line state of one source, carried between windows of lines. A plain JSON-serialisable
 * object: the collector persists it beside the source's cursor (or rebuilds it by re-reading the
 * source from byte 0). Claude Code and hooks need none (`{}`); Codex and Gemini keep a few fields.
 */
export type AdapterState = Record<string, unknown>;

/** A runtime adapter. Vendor stores are read-only: adapters never write, rename or lock them. */
export interface Adapter {
  /** Runtime id. */
  readonly runtime: string;
  /** Adapter name (provenance `adapter`). */
  readonly name: string;
  /** Adapter version (provenance `adapter_version`). */
  readonly version: string;
  /** The default roots on this machine. */
  defaultRoots(env?: Readonly<Record<string, string | undefined>>, home?: string): string[];
  /** List the roots' sources. Unreadable directories land in `problems`. */
  discover(options?: DiscoverOptions): Promise<Discovery>;
  /** Describe one file as a source (session id, stream, kind, mode), as discovery would. */
  describe(path: string, root?: string): Promise<SourceRef>;
  /** A fresh state for a source read from byte 0. */
  initialState(source: SourceRef): AdapterState;
  /**
   * True when each line converts on its own: `parseLines` reads and writes no state, so lines may be
   * converted in any grouping (a collector's convert workers). Absent: lines are converted in file
   * order through one state.
   */
  readonly stateless?: boolean;
  /**
   * Convert complete lines of an append source to records. `state` is updated in place. Lines must
   * be handed in file order, each exactly once per state (a re-read starts from `initialState`).
   */
  parseLines(source: SourceRef, lines: Iterable<SourceLine>, state: AdapterState): RawRecord[];
  /** Convert the whole content of a snapshot source (trailing newlines trimmed) to records. */
  parseSnapshot(source: SourceRef, content: Uint8Array | string): RawRecord[];
}

// <root>/pass.state: what the last complete pass of each session confirmed, so a pass over
// unchanged sources reads only their cursors. A cache: absent or unreadable means "check
// everything", and every entry is checked against the cursors before it is believed.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, normalize, sep } from "node:path";
import { StoreError, errno, ioError } from "./errors.js";
import { readCursorFile } from "./cursor.js";
import { fileStamp, replaceAtomic } from "./fsx.js";
import { CONVERSATIONS_DIR } from "./removal.js";

/** pass.state schema version. */
export const PASS_STATE_SCHEMA = 1;
/** The file's name in the storage root. */
export const PASS_STATE_FILE = "pass.state";

/** One source of a session as its last complete pass left it. */
export interface PassStateSource {
  /** The cursor's source (`<runtime>:<path relative to its root>` for the collector). */
  readonly source: string;
  /** Its cursor, relative to the session directory (`streams/main/transcript.cursor`). */
  readonly cursor: string;
  readonly mode: "append" | "snapshot";
  /** For a snapshot: size and mtime (ms) discovery saw before the pass read it. */
  readonly size?: number | undefined;
  readonly mtimeMs?: number | undefined;
  /**
   * The cursor file as the pass left it, `<ino>:<size>:<mtime ns>:<ctime ns>` ({@link confirmSource}),
   * with the source's inode and size that cursor says (append: its offset; snapshot: its size). While
   * a stat of the cursor file still shows it, the cursor is not read again.
   */
  readonly cursorStat?: string | undefined;
  readonly sourceIno?: number | undefined;
  readonly sourceSize?: number | undefined;
}

/** What the last complete pass of one session confirmed. */
export interface SessionMark {
  /** The highest landed sequence its index (and, with `chain`, its round chain) was brought to. */
  readonly seq: number;
  /** The session has a round chain, published up to `seq` (checked to still exist). */
  readonly chain: boolean;
  /** Every source discovery found for the session, each drained to its last complete line. */
  readonly sources: readonly PassStateSource[];
}

/** The whole pass.state. */
export interface PassState {
  readonly sessions: Map<string, SessionMark>;
  /** Sessions discovery no longer finds whose pruning check is done (checked again only after rediscovery). */
  readonly lostChecked: Set<string>;
}

/** An empty pass state (nothing confirmed: every session is checked). */
export function emptyPassState(): PassState {
  return { sessions: new Map(), lostChecked: new Set() };
}

/** Encode pass.state: one JSON object, sessions and lost ids sorted, one trailing newline. */
export function encodePassState(s: PassState): string {
  const sessions: Record<string, unknown> = {};
  for (const id of [...s.sessions.keys()].sort()) {
    const m = s.sessions.get(id)!;
    const sources = m.sources.length < 2 ? m.sources : [...m.sources].sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
    sessions[id] = {
      seq: m.seq,
      chain: m.chain,
      // A member left undefined is not written (JSON.stringify), so one object shape serves every
      // source, without a spread per optional member.
      sources: sources.map((x) => {
        const seen = x.cursorStat !== undefined && x.sourceIno !== undefined && x.sourceSize !== undefined;
        return {
          source: x.source, cursor: x.cursor, mode: x.mode, size: x.size, mtime_ms: x.mtimeMs,
          cursor_stat: seen ? x.cursorStat : undefined, source_ino: seen ? x.sourceIno : undefined, source_size: seen ? x.sourceSize : undefined,
        };
      }),
    };
  }
  return JSON.stringify({ format: "lake.pass-state", schema: PASS_STATE_SCHEMA, sessions, lost_checked: [...s.lostChecked].sort() }) + "\n";
}

function corrupt(file: string, why: string): StoreError {
  return new StoreError("Corrupt", `${file}: ${why}`, { data: { file } });
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;
const STAT = /^\d+:\d+:\d+:\d+$/;

/** A source file's inode, size and mtime, or undefined when it is not a file that can be stat'ed. */
function sourceStat(path: string): { ino: number; size: number; mtimeMs: number } | undefined {
  try {
    const st = statSync(path);
    return st.isFile() ? st : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A source's mark confirmed against its cursor as the pass left it (call it under the session's
 * lock, after `finish`): with the cursor file's identity and the source inode and size the cursor
 * says, when the cursor is active, names the source in its mode and lands nothing past `seq`; else
 * the mark without them (the next check reads the cursor). Cursors are replaced by rename, so a
 * cursor saved since has another inode, or at least another ctime.
 */
export function confirmSource(root: string, sessionId: string, mark: PassStateSource, seq: number): PassStateSource {
  const plain: PassStateSource = { source: mark.source, cursor: mark.cursor, mode: mark.mode, ...(mark.size !== undefined ? { size: mark.size } : {}), ...(mark.mtimeMs !== undefined ? { mtimeMs: mark.mtimeMs } : {}) };
  const path = join(root, sessionId, mark.cursor);
  const before = fileStamp(path);
  let cur;
  try {
    cur = readCursorFile(path);
  } catch {
    return plain;
  }
  if (!cur || before === undefined || fileStamp(path) !== before) return plain;
  if (cur.state !== "active" || cur.source !== mark.source || cur.kind !== mark.mode || cur.last_seq > seq) return plain;
  return { ...plain, cursorStat: before, sourceIno: cur.ino, sourceSize: cur.kind === "append" ? cur.offset : cur.size };
}

/** pass.state's JSON with its format, schema and two members checked; throws `Corrupt` naming `file`. */
function decodeTop(text: string, file: string): { sessions: Record<string, unknown>; lost_checked: unknown[] } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw corrupt(file, "not JSON");
  }
  if (!isObj(v) || v.format !== "lake.pass-state") throw corrupt(file, "not a pass state (format is not lake.pass-state)");
  if (v.schema !== PASS_STATE_SCHEMA) throw corrupt(file, `pass state schema ${JSON.stringify(v.schema)} is not supported`);
  if (!isObj(v.sessions) || !Array.isArray(v.lost_checked)) throw corrupt(file, "sessions or lost_checked missing");
  return { sessions: v.sessions, lost_checked: v.lost_checked };
}

/** Decode pass.state; throws `Corrupt` naming `file`. */
export function decodePassState(text: string, file: string): PassState {
  const v = decodeTop(text, file);
  const out = emptyPassState();
  for (const id of v.lost_checked) {
    if (typeof id !== "string") throw corrupt(file, "lost_checked holds a non-string");
    out.lostChecked.add(id);
  }
  // By its keys: Object.entries would make a pair for each of a thousand sessions.
  const sessions = v.sessions;
  for (const id of Object.keys(sessions)) {
    const m = sessions[id];
    if (!isObj(m) || !isCount(m.seq) || typeof m.chain !== "boolean" || !Array.isArray(m.sources)) throw corrupt(file, `session ${id}: expected {seq, chain, sources}`);
    const sources: PassStateSource[] = [];
    for (const x of m.sources) {
      if (!isObj(x) || typeof x.source !== "string" || typeof x.cursor !== "string" || (x.mode !== "append" && x.mode !== "snapshot")) throw corrupt(file, `session ${id}: a source without source, cursor or mode`);
      if ((x.size !== undefined && !isCount(x.size)) || (x.mtime_ms !== undefined && typeof x.mtime_ms !== "number")) throw corrupt(file, `session ${id}: bad size or mtime_ms`);
      const seen = x.cursor_stat !== undefined || x.source_ino !== undefined || x.source_size !== undefined;
      if (seen && (typeof x.cursor_stat !== "string" || !STAT.test(x.cursor_stat) || !isCount(x.source_ino) || !isCount(x.source_size))) throw corrupt(file, `session ${id}: bad cursor_stat, source_ino or source_size`);
      // Every member written, an absent one as undefined: one object shape for every mark, and no
      // spread, which is slow in code a pass runs once per session.
      sources.push({
        source: x.source, cursor: x.cursor, mode: x.mode, size: x.size as number | undefined, mtimeMs: x.mtime_ms as number | undefined,
        cursorStat: seen ? (x.cursor_stat as string) : undefined, sourceIno: seen ? (x.source_ino as number) : undefined, sourceSize: seen ? (x.source_size as number) : undefined,
      });
    }
    out.sessions.set(id, { seq: m.seq, chain: m.chain, sources });
  }
  return out;
}

/** `<root>/pass.state`'s text, or undefined when there is none. Throws `Io`. */
function passStateText(root: string): { file: string; text: string | undefined } {
  const file = join(root, PASS_STATE_FILE);
  try {
    return { file, text: readFileSync(file, "utf8") };
  } catch (e) {
    if (errno(e) === "ENOENT") return { file, text: undefined };
    throw ioError(file, "read pass state", e);
  }
}

/** Read `<root>/pass.state`; an absent file is an empty state. Throws `Corrupt` or `Io`. */
export function readPassState(root: string): PassState {
  const { file, text } = passStateText(root);
  return text === undefined ? emptyPassState() : decodePassState(text, file);
}

/**
 * The sessions `<root>/pass.state` holds a mark for (none when it is absent): what the last complete
 * pass of each found, without decoding the marks — for a reader that asks only that (push, before it
 * reads a session's cursors). Throws `Corrupt` (the file is not a pass state) or `Io`.
 */
export function readPassStateSessions(root: string): ReadonlySet<string> {
  const { file, text } = passStateText(root);
  return text === undefined ? new Set() : new Set(Object.keys(decodeTop(text, file).sessions));
}

/** Replace `<root>/pass.state` atomically (a cache: not synced). */
export function writePassState(root: string, s: PassState): void {
  replaceAtomic(join(root, PASS_STATE_FILE), root, encodePassState(s), undefined, "pass-state", false);
}

/** A source as this pass's discovery found it. */
export interface FoundSource {
  readonly source: string;
  readonly path: string;
  readonly mode: "append" | "snapshot";
  readonly size: number;
  readonly mtimeMs: number;
  /**
   * The file's inode from discovery's stat: with it, `size` and `mtimeMs` are taken as that stat's
   * and the check stats the source no second time. Absent: the check stats it.
   */
  readonly ino?: number | undefined;
}

/** What a pass knows of the whole root, listed once instead of once per session. */
export interface PassListing {
  /** Session ids with a round chain directory ({@link listConversations}). */
  readonly conversations?: ReadonlySet<string>;
}

/** The session ids that have a directory under `_conversations/` (their round chains); empty when there is none. */
export function listConversations(root: string): Set<string> {
  try {
    return new Set(readdirSync(join(root, CONVERSATIONS_DIR)));
  } catch (e) {
    if (errno(e) === "ENOENT") return new Set();
    throw ioError(join(root, CONVERSATIONS_DIR), "list round chains", e);
  }
}

/** A relative path of plain names (letters, digits, `.`, `_`, `-`; none starting with a dot) joined by `/`. */
const PLAIN_REL = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(?:\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;
let normalized: readonly [string, string] = ["", "."];

/**
 * `join(root, rel)` for the checks a pass makes of each of its sessions, without normalizing the
 * whole path again each time (path.join was a twentieth of a no-op collect): the root, the same for
 * every session of a pass, is normalized once, and a plain `rel` is appended to it.
 */
function under(root: string, rel: string): string {
  if (sep !== "/" || !PLAIN_REL.test(rel)) return join(root, rel);
  if (normalized[0] !== root) normalized = [root, normalize(root)];
  const base = normalized[1];
  return base === "." ? rel : base.endsWith("/") ? base + rel : `${base}/${rel}`;
}

/** The answers of {@link checkSession} that carry no mark: one object each, not one per session. */
const CHANGED = Object.freeze({ unchanged: false });
const UNCHANGED = Object.freeze({ unchanged: true });

/**
 * Whether a session needs no pass: discovery found exactly the sources its last complete pass took
 * (so its pruning check is done), and each source's cursor — read without the lock, cursors are
 * replaced atomically — is active, holds no landed file past the mark, and is at the file's end
 * (an append source: size equals offset and the inode is the cursor's; a snapshot: size, inode
 * and mtime as when last taken). A cursor whose file a stat shows unchanged since the mark confirmed
 * it ({@link confirmSource}) is not read: the check is then stats alone. Opens nothing else.
 */
export function sessionUnchanged(root: string, sessionId: string, mark: SessionMark | undefined, found: readonly FoundSource[], listing: PassListing = {}): boolean {
  return checkSession(root, sessionId, mark, found, listing).unchanged;
}

/**
 * {@link sessionUnchanged}, and, when it is unchanged and some cursor had to be read (its mark had
 * no stat of it, or an old one), `mark`: the mark with those cursors' stats, taken around the read
 * (a cursor replaced during the read is not taken), for the caller to keep so the next check is stats
 * alone.
 */
export function checkSession(root: string, sessionId: string, mark: SessionMark | undefined, found: readonly FoundSource[], listing: PassListing = {}): { readonly unchanged: boolean; readonly mark?: SessionMark } {
  const no = CHANGED;
  if (!mark || mark.sources.length !== found.length || found.length === 0) return no;
  let confirmed: Map<string, PassStateSource> | undefined;
  for (const f of found) {
    // A session has a source or two: a search, not a Map made per session.
    const m = mark.sources.find((s) => s.source === f.source);
    if (!m || m.mode !== f.mode) return no;
    // The source's inode and size its cursor says: from the mark while the cursor file is the one
    // the mark confirmed (one stat), else from the cursor read now.
    const cursorPath = under(root, `${sessionId}/${m.cursor}`);
    const seen = fileStamp(cursorPath);
    let ino: number;
    let size: number;
    if (seen !== undefined && m.cursorStat === seen && m.sourceIno !== undefined && m.sourceSize !== undefined) {
      ino = m.sourceIno;
      size = m.sourceSize;
    } else {
      let cur;
      try {
        cur = readCursorFile(cursorPath);
      } catch {
        return no;
      }
      if (!cur || cur.state !== "active" || cur.source !== f.source || cur.kind !== f.mode || cur.last_seq > mark.seq) return no;
      ino = cur.ino;
      size = cur.kind === "append" ? cur.offset : cur.size;
      if (seen !== undefined && fileStamp(cursorPath) === seen) (confirmed ??= new Map()).set(m.source, { ...m, cursorStat: seen, sourceIno: ino, sourceSize: size });
    }
    const st = f.ino !== undefined ? { ino: f.ino, size: f.size, mtimeMs: f.mtimeMs } : sourceStat(f.path);
    if (st === undefined || st.ino !== ino || st.size !== size) return no;
    if (f.mode === "snapshot" && (m.size !== st.size || m.mtimeMs !== st.mtimeMs)) return no;
  }
  // Derived state a person may delete (the next collect rebuilds it).
  if (mark.seq > 0 && !existsSync(under(root, `${sessionId}/index/index.state`))) return no;
  if (mark.chain && mark.seq > 0 && !(listing.conversations?.has(sessionId) ?? existsSync(under(root, `${CONVERSATIONS_DIR}/${sessionId}`)))) return no;
  if (!confirmed) return UNCHANGED;
  const c = confirmed;
  return { unchanged: true, mark: { ...mark, sources: mark.sources.map((m) => c.get(m.source) ?? m) } };
}

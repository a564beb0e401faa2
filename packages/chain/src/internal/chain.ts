// The chain on disk: listing, head recovery, no-replace publish under `.lock`, parse from the session index.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { ChainError, errnoCode, isChainError } from "./errors.js";
import { fsp } from "./fs.js";
import { ChainState, type Conversation, type RoundSummary } from "./conversation.js";
import { buildRoundBody } from "./build.js";
import { installNoReplace, processAlive, writeAtomic } from "@lake/durable";
import { acquireLock, releaseLock, RESERVATION_MAX_AGE_MS, type InstallMode } from "./lock.js";
import { DEFAULT_POLICY, type ChainPolicy } from "./policy.js";
import { decodeRound, encodeRound, parseRoundFileName, type EncodedRound } from "./round.js";
import type { Round, RoundBody, SessionIndex } from "./types.js";
import { defaultReadIndex, forgotten } from "./store-bridge.js";
import { FOLD_FILE, decodeFold, encodeFold } from "./fold-cache.js";

/** The directory of conversation `id`'s chain: `<root>/_conversations/<id>`. */
export function chainDir(root: string, conversationId: string): string {
  checkId(conversationId);
  return join(root, "_conversations", conversationId);
}

function checkId(id: string): void {
  if (id === "" || id === "." || id === ".." || id.includes("/") || id.includes("\\") || id.includes("\0") || id.startsWith("_")) {
    throw new ChainError("InvalidInput", `conversation id ${JSON.stringify(id)} is not a valid directory name`, { data: { id } });
  }
}

/** A step of a publication, reported to `onStep` as it is reached (crash tests stop the writer there). */
export type PublishStep =
  | "locked"
  | "temp-written"
  | "temp-synced"
  | "temp-readonly"
  | "reserved"
  | "installed"
  | "temp-removed"
  | "dir-synced"
  | "state-written"
  | "unlocked";

/** Options of `publishRound` and `parse`. */
export interface PublishOptions {
  /**
   * How the round gets its final name without replacing: `link` (hard link + unlink; default, and it falls back to
   * `reserve` where links are unsupported) or `reserve` (an empty O_EXCL reservation, then a rename over it).
   */
  installMode?: InstallMode;
  /** Called at each step a publication reaches; a test hook may throw or kill the process there. */
  onStep?: (step: PublishStep) => void | Promise<void>;
}

/** Options of `parse`. */
export interface ParseOptions extends PublishOptions {
  /** Classification policy (default `DEFAULT_POLICY`). */
  policy?: ChainPolicy;
  /**
   * Where the session index comes from (default: @lake/store's `readIndex`). It is asked for the entries `from` the
   * first landed seq past the chain's reach: it may give every entry, or only those, with `from` and `lookup` set.
   */
  readIndex?: (root: string, sessionId: string, options: { from: number }) => SessionIndex | Promise<SessionIndex>;
  /**
   * Bytes of rounds a parse reads (with nothing kept and no `conversation.fold` to fold from) from which it writes
   * `conversation.fold` (default {@link FOLD_MIN_BYTES}): below, reading the rounds again costs less than the file.
   */
  foldMinBytes?: number;
}

/** Default {@link ParseOptions.foldMinBytes}: a chain of a few small rounds is read again, not cached. */
export const FOLD_MIN_BYTES = 256 * 1024;

/** A round file as listed. */
interface Listed {
  name: string;
  round: number;
  digest12: string;
  size: number;
  mtimeMs: number;
}

/** What a rounds directory holds. */
export interface ChainListing {
  /** Complete (non-empty) round files, by round number then name. */
  rounds: { name: string; round: number; digest12: string }[];
  /** Empty round files: reservations, not rounds. */
  reservations: { name: string; ageMs: number }[];
  /** Leftover temporary files of interrupted writers. */
  temps: string[];
}

/** List `<chain>/rounds/`: rounds, reservations (empty round files) and leftover temporary files. */
export async function listChain(root: string, conversationId: string): Promise<ChainListing> {
  const dir = join(chainDir(root, conversationId), "rounds");
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return { rounds: [], reservations: [], temps: [] };
    throw new ChainError("Io", `${dir}: cannot list rounds: ${String(e)}`, { data: { file: dir }, cause: e });
  }
  const listed: Listed[] = [];
  const temps: string[] = [];
  const now = Date.now();
  for (const name of names.sort()) {
    if (name.startsWith(".") && name.includes(".tmp-")) {
      temps.push(name);
      continue;
    }
    const p = parseRoundFileName(name);
    if (!p) continue;
    const st = await fsp.stat(join(dir, name)).catch((e: unknown) => {
      if (errnoCode(e) === "ENOENT") return null;
      throw new ChainError("Io", `${join(dir, name)}: cannot stat: ${String(e)}`, { data: { file: join(dir, name) }, cause: e });
    });
    if (st) listed.push({ name, ...p, size: st.size, mtimeMs: st.mtimeMs });
  }
  return {
    rounds: listed.filter((l) => l.size > 0).sort((a, b) => a.round - b.round || (a.name < b.name ? -1 : 1)).map(({ name, round, digest12 }) => ({ name, round, digest12 })),
    reservations: listed.filter((l) => l.size === 0).map((l) => ({ name: l.name, ageMs: now - l.mtimeMs })),
    temps,
  };
}

/** A chain read from disk: its rounds, decoded and checked, in order. */
export interface ChainRead {
  rounds: Round[];
  files: string[];
}

/**
 * Each round of a chain in order, decoded and checked (its file decodes, its commit digest matches, its name matches
 * its number and digest, the numbers run 1..N with no fork), with its path; one round at a time. Throws ChainError
 * `Corrupt` or `Fork` naming the file.
 */
async function eachRound(root: string, conversationId: string, take: (r: Round, name: string, path: string, bytes: number) => void): Promise<void> {
  const dir = join(chainDir(root, conversationId), "rounds");
  const listing = await listChain(root, conversationId);
  let prev: { round: number; name: string } | undefined;
  for (const l of listing.rounds) {
    const path = join(dir, l.name);
    if (prev && prev.round === l.round) {
      throw new ChainError("Fork", `${path}: round ${l.round} is also ${prev.name}: the chain forks`, { data: { file: path, round: l.round } });
    }
    if (l.round !== (prev?.round ?? 0) + 1) {
      throw new ChainError("Corrupt", `${path}: round ${l.round} where round ${(prev?.round ?? 0) + 1} was expected`, { data: { file: path, round: l.round } });
    }
    const bytes = await fsp.readFile(path).catch((e: unknown) => {
      throw new ChainError("Io", `${path}: cannot read: ${String(e)}`, { data: { file: path }, cause: e });
    });
    const r = decodeRound(bytes, path);
    if (r.round !== l.round || r.commit.slice(0, 12) !== l.digest12) {
      throw new ChainError("Corrupt", `${path}: name does not match round ${r.round} with commit ${r.commit.slice(0, 12)}`, { data: { file: path } });
    }
    take(r, l.name, path, bytes.length);
    prev = { round: l.round, name: l.name };
  }
}

/**
 * Read and check every round of a chain: each file decodes, its commit digest matches, its name matches its number and
 * digest, and the numbers run 1..N with no fork. Throws ChainError `Corrupt` or `Fork` naming the file.
 */
export async function readChain(root: string, conversationId: string): Promise<ChainRead> {
  const rounds: Round[] = [];
  const files: string[] = [];
  await eachRound(root, conversationId, (r, name) => {
    rounds.push(r);
    files.push(name);
  });
  return { rounds, files };
}

/** Fold a chain read from disk into its conversation (the fold of every round, nothing else). */
export async function foldChain(root: string, conversationId: string): Promise<Conversation> {
  return (await readState(root, conversationId, false)).toConversation();
}

/**
 * What a parse in this process left a chain as, under its lock: the (lean) fold, the text of `conversation.state` it
 * wrote, and the identity and times of `rounds/` after its last change. A later parse here reuses the fold while both
 * are unchanged (every publisher writes `conversation.state` and changes `rounds/`; one that dies holding the lock
 * leaves `rounds/` changed), so it reads no round again: the cost of a parse follows what is new, not the chain's
 * length. Authority reads (`readChain`, `foldChain`, `recoverHead`, `verify`) never use it.
 */
interface Kept {
  state: ChainState;
  stateText: string;
  rounds: string;
  /** The calls its fold holds (what a lean fold's size follows). */
  calls: number;
}
const kept = new Map<string, Kept>();
/**
 * Chains kept at most, and the calls their folds may hold together (the least recently parsed goes first, the one just
 * parsed always stays): a watcher over many sessions, or over a few very long ones, stays bounded. A caller done with
 * a chain drops it ({@link releaseFold}).
 */
const KEPT_MAX = 64;
const KEPT_MAX_CALLS = 131_072;

async function roundsStamp(dir: string): Promise<string | null> {
  const st = await fsp.statBig(join(dir, "rounds")).catch(() => null);
  return st ? `${st.dev}:${st.ino}:${st.mtimeNs}:${st.ctimeNs}` : null;
}

/** The kept fold of the chain in `dir` when nothing changed it since, taken out of the cache (put back by `keep`). */
async function takeKept(dir: string): Promise<ChainState | null> {
  const k = kept.get(dir);
  if (!k) return null;
  kept.delete(dir);
  const text = await fsp.readText(join(dir, "conversation.state")).catch(() => null);
  if (text !== k.stateText || (await roundsStamp(dir)) !== k.rounds) return null;
  return k.state;
}

/**
 * Drop the fold this process keeps of a chain (what its last parse left, so the next reads no round
 * again). For a caller done with the conversation — a one-shot collect after the session's pass —
 * so memory follows the chains in hand, not the ones passed.
 */
export function releaseFold(root: string, conversationId: string): void {
  kept.delete(chainDir(root, conversationId));
}

/**
 * @internal What the fold cache holds now: chain directories (least recently parsed first), the calls their folds
 * hold, and the record addresses their turns hold (none: kept folds are lean) (tests).
 */
export function keptChains(): { dirs: string[]; calls: number; records: number } {
  let calls = 0;
  let records = 0;
  for (const k of kept.values()) {
    calls += k.calls;
    for (const s of k.state.streams.values()) for (const t of s.turns) records += t.length;
  }
  return { dirs: [...kept.keys()], calls, records };
}

async function keep(dir: string, state: ChainState, stateText: string): Promise<void> {
  const rounds = await roundsStamp(dir);
  if (rounds === null) return;
  kept.delete(dir);
  kept.set(dir, { state, stateText, rounds, calls: state.calls.size });
  let calls = 0;
  for (const k of kept.values()) calls += k.calls;
  for (const [d, k] of kept) {
    if (kept.size <= 1 || (kept.size <= KEPT_MAX && calls <= KEPT_MAX_CALLS)) break;
    kept.delete(d);
    calls -= k.calls;
  }
}

/**
 * Fold every round of a chain, one round read at a time (a round is decoded, checked, folded and dropped). `lean`: the
 * fold the next round is built from, without the records that only render the conversation.
 */
async function readState(root: string, conversationId: string, lean: boolean, read?: (bytes: number) => void): Promise<ChainState> {
  const st = new ChainState(conversationId, lean);
  await eachRound(root, conversationId, (r, _name, path, bytes) => {
    st.apply(r, path);
    read?.(bytes);
  });
  return st;
}

/** The head as `conversation.state` caches it. */
export interface HeadState {
  round: number;
  commit: string;
  file: string;
  throughSeq: number;
}

/** Recover the head by listing and reading the rounds directory (never from `conversation.state`), and rewrite the cache. */
export async function recoverHead(root: string, conversationId: string): Promise<HeadState | null> {
  const st = await readState(root, conversationId, true);
  const head = headOf(st.head, st.throughSeq);
  if (head) await writeStateFile(chainDir(root, conversationId), head);
  return head;
}

function headOf(h: RoundSummary | null, throughSeq: number): HeadState | null {
  return h ? { round: h.round, commit: h.commit, file: h.file.split(/[\\/]/).pop() as string, throughSeq } : null;
}

/** Read the `conversation.state` cache; null when absent, empty or not decodable (torn). It may lag the rounds directory: `recoverHead` is the authority. */
export async function readConversationState(root: string, conversationId: string): Promise<HeadState | null> {
  const path = join(chainDir(root, conversationId), "conversation.state");
  let text: string;
  try {
    text = await fsp.readText(path);
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return null;
    throw new ChainError("Io", `${path}: cannot read: ${String(e)}`, { data: { file: path }, cause: e });
  }
  // Written without fsync: a machine crash can leave it empty (a rename whose data did not reach the disk).
  if (text === "") return null;
  const kv = new Map(text.split("\n").filter(Boolean).map((l) => [l.slice(0, l.indexOf(" ")), l.slice(l.indexOf(" ") + 1)] as const));
  const round = Number(kv.get("round"));
  const throughSeq = Number(kv.get("through_seq"));
  const commit = kv.get("commit") ?? "";
  const file = kv.get("file") ?? "";
  // Torn (or written by nothing lake knows): a cache that does not decode is absent; recoverHead rebuilds it.
  if (kv.get("schema") !== "1" || !Number.isSafeInteger(round) || !Number.isSafeInteger(throughSeq) || !/^[0-9a-f]{64}$/.test(commit)) return null;
  return { round, commit, file, throughSeq };
}

function stateFileText(head: HeadState): string {
  return `schema 1\nround ${head.round}\ncommit ${head.commit}\nfile ${head.file}\nthrough_seq ${head.throughSeq}\n`;
}

/**
 * Replace the head cache. Atomically, without fsync: nothing trusts it (the head is always read by
 * listing rounds/), so after a machine crash it may be old or empty, never wrong for a reader that
 * follows `readConversationState`'s rule (empty reads as absent).
 */
async function writeStateFile(dir: string, head: HeadState): Promise<void> {
  const path = join(dir, "conversation.state");
  const tmp = join(dir, `.conversation.state.tmp-${process.pid}-${randomBytes(6).toString("hex")}`);
  try {
    writeAtomic(path, stateFileText(head), { temp: tmp, mode: 0o644, label: "state", sync: false });
  } catch (e) {
    throw new ChainError("Io", `${path}: cannot write: ${String(e)}`, { data: { file: path }, cause: e });
  }
}

/**
 * The lean fold `conversation.fold` holds, while it stands for the chain as it is (fold-cache.ts), and whether
 * `rounds/` holds nothing but its rounds (no temporary file to clean); else null.
 */
async function readFold(dir: string, conversationId: string): Promise<{ fold: ChainState; onlyRounds: boolean } | null> {
  let bytes: Buffer;
  let stateText: string;
  let names: string[];
  try {
    bytes = await fsp.readFile(join(dir, FOLD_FILE));
    stateText = await fsp.readText(join(dir, "conversation.state"));
    names = await fsp.readdir(join(dir, "rounds"));
  } catch {
    return null;
  }
  const roundFiles = names.filter((n) => parseRoundFileName(n) !== null);
  const fold = decodeFold(bytes, { conversation: conversationId, stateText, roundFiles, roundsDir: join(dir, "rounds") });
  return fold ? { fold, onlyRounds: roundFiles.length === names.length } : null;
}

/**
 * Replace `conversation.fold` with the lean fold `st` of the chain whose `conversation.state` is
 * `stateText`: atomically, without fsync (a cache: one that is old, torn or gone only makes the next
 * parse read every round). A failure to write it is not the parse's.
 */
function writeFold(dir: string, st: ChainState, stateText: string): void {
  const path = join(dir, FOLD_FILE);
  try {
    writeAtomic(path, encodeFold(st, stateText), { temp: join(dir, `.${FOLD_FILE}.tmp-${process.pid}-${randomBytes(6).toString("hex")}`), mode: 0o644, label: "fold", sync: false });
  } catch {
    // The next parse reads every round.
  }
}

/** What a publication did. */
export interface Published {
  round: number;
  commit: string;
  /** The round's file name under `rounds/`. */
  file: string;
  bytes: number;
  range: { from: number; to: number };
}

/**
 * Publish a prepared round under the chain's `.lock`. The round must follow the head (number N+1, `prev` = the head's
 * commit, range starting past the head's), else ChainError `NotHead` and nothing is written. A second publisher gets
 * `Locked`. The round is written to a temporary file, synced, made read-only, then installed under its final name
 * without replacing; an interrupted publication leaves no partial round.
 */
export async function publishRound(root: string, body: RoundBody, options: PublishOptions = {}): Promise<Published> {
  const dir = chainDir(root, body.conversation);
  await fsp.mkdirs(join(dir, "rounds"));
  return withLock(dir, options, async () => {
    const st = await readState(root, body.conversation, true);
    return publishLocked(root, dir, st, body, options);
  });
}

async function withLock<T>(dir: string, options: PublishOptions, fn: () => Promise<T>): Promise<T> {
  const lock = await acquireLock(dir);
  try {
    await options.onStep?.("locked");
    return await fn();
  } finally {
    releaseLock(lock);
    await options.onStep?.("unlocked");
  }
}

async function publishLocked(root: string, dir: string, st: ChainState, body: RoundBody, options: PublishOptions, cleaned?: boolean): Promise<Published> {
  const head = st.head;
  if (body.round !== st.rounds.length + 1 || body.prev !== (head?.commit ?? null) || body.range.from !== st.throughSeq + 1) {
    throw new ChainError(
      "NotHead",
      `${join(dir, "rounds")}: round ${body.round} (prev ${body.prev?.slice(0, 12) ?? "null"}) does not follow the head (round ${head?.round ?? 0}, ${head?.commit.slice(0, 12) ?? "no commit"})`,
      { data: { file: join(dir, "rounds"), round: body.round, head: head?.round ?? 0 } },
    );
  }
  if (body.conversation !== st.id) throw new ChainError("InvalidInput", `round names conversation ${body.conversation}, not ${st.id}`);
  const enc = encodeRound(body);
  try {
    st.apply(enc.round, join(dir, "rounds", enc.fileName));
  } catch (e) {
    throw new ChainError("InvalidInput", `round ${body.round} does not fold onto the chain: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  if (cleaned !== true) await cleanLeftovers(root, st.id);
  await install(join(dir, "rounds"), enc, options);
  const published: Published = { round: enc.round.round, commit: enc.commit, file: enc.fileName, bytes: enc.bytes.length, range: { ...body.range } };
  await writeStateFile(dir, { round: published.round, commit: published.commit, file: published.file, throughSeq: body.range.to });
  await options.onStep?.("state-written");
  return published;
}

/**
 * Under the lock: remove temporary round files of interrupted writers, reservations older than a minute, and the
 * chain directory's own leftovers (lock and state temporaries) whose writer process on this host is gone.
 */
async function cleanLeftovers(root: string, id: string, roundsToo = true, chainNames?: readonly string[]): Promise<boolean> {
  const chain = chainDir(root, id);
  const dir = join(chain, "rounds");
  let clean = true;
  if (roundsToo) {
    const listing = await listChain(root, id);
    for (const t of listing.temps) await fsp.unlink(join(dir, t)).catch(() => undefined);
    for (const r of listing.reservations) {
      if (r.ageMs > RESERVATION_MAX_AGE_MS) await fsp.unlink(join(dir, r.name)).catch(() => undefined);
      else clean = false;
    }
  }
  for (const n of chainNames ?? (await fsp.readdir(chain).catch(() => [] as string[]))) {
    const m = /^\.(?:lock|conversation\.state|conversation\.fold)\.tmp-(\d+)-/.exec(n);
    if (m && !processAlive(Number(m[1]))) await fsp.unlink(join(chain, n)).catch(() => undefined);
  }
  return clean;
}

/**
 * The round through @lake/durable's `installNoReplace` (temp, fsync, 0444, link or reservation, fsync the directory).
 * Its steps are reported to `onStep` under the chain's names, synchronously (a promise `onStep` returns there is not
 * awaited): a durable step is reported before it acts, a chain step once the step before it is done.
 */
async function install(dir: string, enc: EncodedRound, options: PublishOptions): Promise<void> {
  const final = join(dir, enc.fileName);
  const tmp = join(dir, `.${enc.fileName}.tmp-${process.pid}-${randomBytes(6).toString("hex")}`);
  let renamed = false;
  const report = (s: PublishStep): void => void options.onStep?.(s);
  const step = (d: string): void => {
    const what = d.slice(d.indexOf(":") + 1);
    if (what === "fsync-temp") report("temp-written");
    else if (what === "chmod") report("temp-synced");
    else if (what === "link" || (what === "reserve" && options.installMode === "reserve")) report("temp-readonly");
    else if (what === "unlink-temp") report("installed");
    else if (what === "rename") {
      renamed = true;
      report("reserved");
    } else if (what === "fsync-dir") report(renamed ? "installed" : "temp-removed");
  };
  let r;
  try {
    r = installNoReplace(final, enc.bytes, { temp: tmp, mode: 0o644, readOnly: true, installMode: options.installMode ?? "link", reserveFallback: true, label: "round", step });
  } catch (e) {
    if (isChainError(e)) throw e;
    throw new ChainError("Io", `${final}: cannot install the round: ${String(e)}`, { data: { file: final }, cause: e });
  }
  if (!r.installed) await existing(final);
  await options.onStep?.("dir-synced");
}

/** The final name exists: a reservation (too young to remove) or a round. Never returns. */
async function existing(final: string): Promise<never> {
  const st = await fsp.stat(final).catch(() => null);
  if (st && st.size === 0) {
    throw new ChainError("Reserved", `${final}: an empty reservation younger than a minute holds this name; try again later`, { data: { file: final } });
  }
  throw new ChainError("NotHead", `${final}: a round with this name already exists`, { data: { file: final } });
}

/** What a parse did. */
export interface ParseResult {
  /** The round published, or null when the index held nothing new (or the session has nothing landed). */
  published: Published | null;
  /** The head after the parse, or null when the chain has no rounds. */
  head: HeadState | null;
}

/**
 * Parse a session into its conversation's chain: take the chain's `.lock`, read the head from the rounds directory, then
 * read the session index (never past indexed_seq) and publish the next round when the index holds landed files past
 * the head or files the chain cites are gone. A session with no landed file and no round publishes nothing and leaves
 * no chain directory behind. The conversation id is the session id.
 */
export async function parse(root: string, sessionId: string, options: ParseOptions = {}): Promise<ParseResult> {
  const dir = chainDir(root, sessionId);
  const sessionDir = join(root, sessionId);
  const convRoot = join(root, "_conversations");
  const hadConv = await exists(convRoot);
  const hadDir = await exists(dir);
  if (!hadDir && !(await exists(sessionDir))) return { published: null, head: null };
  // A forgotten session publishes nothing: its removal may have taken some of it already.
  if (forgotten(root, sessionId)) return { published: null, head: null };
  await fsp.mkdirs(join(dir, "rounds"));
  let result: ParseResult;
  try {
    result = await withLock(dir, options, async () => {
      // The fold this process left, while nothing changed the chain since; else the one a parse left
      // on disk (conversation.fold), while rounds/ holds exactly what it folded; else every round is read again.
      const reused = await takeKept(dir);
      const names = reused ? undefined : await fsp.readdir(dir).catch(() => [] as string[]);
      const cached = names?.includes(FOLD_FILE) ? await readFold(dir, sessionId) : null;
      let roundBytes = 0;
      const st = reused ?? cached?.fold ?? (await readState(root, sessionId, true, (n) => (roundBytes += n)));
      // Written (when the chain is clean) by a parse that read many bytes of rounds, or found a fold file there.
      const foldWorth = names?.includes(FOLD_FILE) === true || roundBytes >= (options.foldMinBytes ?? FOLD_MIN_BYTES);
      const current = headOf(st.head, st.throughSeq);
      // rounds/ is as a parse here left it (clean, or it would not have been kept), or holds the fold's rounds and
      // nothing else: only the chain directory's own leftovers.
      const clean = await cleanLeftovers(root, sessionId, reused === null && cached?.onlyRounds !== true, names);
      if (!(await exists(sessionDir)) || forgotten(root, sessionId)) return { published: null, head: current };
      // The index by range: the entries past the chain's reach (the rest is searched, not held).
      // Held by nothing once the body is built: the entries go before the round is encoded and published.
      const read = options.readIndex ?? defaultReadIndex;
      const body = buildRoundBody(st, await read(root, sessionId, { from: st.throughSeq + 1 }), options.policy ?? DEFAULT_POLICY);
      if (!body) {
        if (current) {
          const text = stateFileText(current);
          if (!reused && !cached) {
            await writeStateFile(dir, current);
            if (clean && foldWorth) writeFold(dir, st, text);
          }
          if (clean) await keep(dir, st, text);
        }
        return { published: null, head: current };
      }
      const published = await publishLocked(root, dir, st, body, options, true);
      const head = { round: published.round, commit: published.commit, file: published.file, throughSeq: body.range.to };
      const text = stateFileText(head);
      // A fold kept in memory (a watcher) is not written at each round: the next parse in another process reads the rounds once.
      if (clean && !reused && foldWorth) writeFold(dir, st, text);
      if (clean) await keep(dir, st, text);
      return { published, head };
    });
  } finally {
    if (!hadDir) await removeIfEmpty(root, sessionId, dir, hadConv ? null : convRoot);
  }
  return result;
}

/** Undo a chain directory this parse created when it holds no round. */
async function removeIfEmpty(root: string, id: string, dir: string, convRoot: string | null): Promise<void> {
  const listing = await listChain(root, id).catch(() => null);
  if (!listing || listing.rounds.length > 0 || listing.reservations.length > 0) return;
  const rest = await fsp.readdir(dir).catch(() => ["?"]);
  if (rest.some((n) => n !== "rounds")) return;
  await fsp.rmdir(join(dir, "rounds")).catch(() => undefined);
  await fsp.rmdir(dir).catch(() => undefined);
  if (convRoot) await fsp.rmdir(convRoot).catch(() => undefined);
}

async function exists(path: string): Promise<boolean> {
  try {
    await fsp.stat(path);
    return true;
  } catch (e) {
    if (errnoCode(e) === "ENOENT") return false;
    throw new ChainError("Io", `${path}: cannot stat: ${String(e)}`, { data: { file: path }, cause: e });
  }
}

// `show SESSION`: one conversation, from the round chain's fold when the local root has a chain
// for the session (@lake/chain foldChain; record text read from the landed files with @lake/store
// readLanded), else from the fleet's events. Both become the same ShowConversation and are
// rendered by the same code.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { RecordRef, StreamNode, ToolCall } from "@lake/chain";
import type { Memo } from "./context.js";
import { ReaderError } from "./errors.js";
import { clip, fmtDuration } from "./format.js";
import { QUARANTINE_TYPE } from "@lake/redact";

/** One item of a shown conversation. */
export interface ShowItem {
  kind: string;
  ts: string | null;
  stream: string;
  /** The turn of its stream (0-based): a user record opens the next one. */
  turn: number;
  model?: string;
  text?: string;
  redaction_rules?: string[];
  /** A steering or queued message (chain only). */
  message?: "steering" | "queued";
  /** Reasoning the model showed (a thinking block: the adapter's `attrs.thinking`); text shows it collapsed to its length unless --full. */
  thinking?: true;
  /** The collector withheld the record whole (vendor_type `@lake/redact` QUARANTINE_TYPE): the rules that fired; it has no text. */
  quarantined?: { rules: string[] };
  /** A compaction boundary (chain only). */
  compaction?: true;
  /** The record's landed file is gone (a tombstone): its address (chain only). */
  gone?: { seq: number; row: number };
  tool?: {
    name: string | null;
    call_id: string | null;
    input: string | null;
    result: { text: string | null; is_error: boolean | null; exit_code: number | null; redaction_rules?: string[] } | null;
    child?: { stream: string; items: ShowItem[] };
  };
}

/** A stream shown apart from the main one: not launched by a shown call, or a call's second child. */
export interface OtherStream {
  stream: string;
  /** The call that launched it, when one did. */
  launched_by?: string;
  items: ShowItem[];
}

/** A session's conversation (the JSON `show --json` prints). */
export interface ShowConversation {
  session_id: string;
  runtime: string;
  /** The fleet agent (events), or null for the local root (chain). */
  agent: string | null;
  source: "chain" | "events";
  first_ts: string | null;
  last_ts: string | null;
  /** Chain only: rounds folded, the landed seq they reach, and landed files gone since (tombstones). */
  chain?: { root: string; rounds: number; through_seq: number; tombstones: { seq: number; rows: number }[] };
  items: ShowItem[];
  other_streams: OtherStream[];
}

/** A record as show reads it (a landed row, or an events row made plain). */
export type ShowRecord = Record<string, unknown>;

const str = (v: unknown): string | null => (v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : String(v));

/** The masks of a record, when any rule fired. */
export function maskRules(r: ShowRecord): { redaction_rules?: string[] } {
  const x = (r.redaction_rules as string[] | null | undefined) ?? [];
  return x.length ? { redaction_rules: x } : {};
}

/** A tool result as shown beside its call. */
export function resultOf(res: ShowRecord): NonNullable<NonNullable<ShowItem["tool"]>["result"]> {
  return { text: str(res.text ?? res.raw), is_error: (res.is_error ?? null) as boolean | null, exit_code: (res.exit_code ?? null) as number | null, ...maskRules(res) };
}


function attrsOf(r: ShowRecord): Record<string, unknown> {
  if (typeof r.attrs !== "string" || r.attrs === "") return {};
  try {
    const v: unknown = JSON.parse(r.attrs);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A record that is neither a tool call nor a result shown beside its call; undefined when it has nothing to show. */
export function plainItem(r: ShowRecord, stream: string, turn: number): ShowItem | undefined {
  const kind = String(r.kind);
  if (r.vendor_type === QUARANTINE_TYPE) return { kind, ts: str(r.ts), stream, turn, quarantined: { rules: withheldBy(r) } };
  if (kind === "tool_result") return { kind, ts: str(r.ts), stream, turn, text: String(r.text ?? ""), ...maskRules(r) };
  if (kind === "usage" || kind === "meta") return undefined;
  const text = str(r.text ?? r.raw);
  const thinking = isThinking(r);
  // A text block of whitespace only (Claude Code streams "\n\n" before a thinking block) shows nothing.
  if (!thinking && (text === null || text.trim() === "")) return undefined;
  const item: ShowItem = { kind, ts: str(r.ts), stream, turn, text: text ?? "", ...maskRules(r), ...(thinking ? { thinking: true as const } : {}) };
  if (r.model !== null && r.model !== undefined) item.model = String(r.model);
  return item;
}

/** A thinking block (Claude Code `thinking` / `redacted_thinking`, or attrs saying so). */
function isThinking(r: ShowRecord): boolean {
  if (typeof r.vendor_type === "string" && /(^|\/)(redacted_)?thinking$/.test(r.vendor_type)) return true;
  return attrsOf(r).thinking === true;
}

/** The rules that withheld a quarantined record: its attrs' rules_fired, else its redaction rules. */
function withheldBy(r: ShowRecord): string[] {
  const fired = attrsOf(r).rules_fired;
  if (Array.isArray(fired) && fired.length > 0) return fired.map(String);
  return ((r.redaction_rules as string[] | null | undefined) ?? []).map(String);
}

/** A tool call item (without its child). */
export function callItem(r: ShowRecord, stream: string, turn: number, callId: string | null, res: ShowRecord | undefined): ShowItem {
  return {
    kind: "tool_call",
    ts: str(r.ts),
    stream,
    turn,
    ...maskRules(r),
    tool: { name: str(r.tool_name), call_id: callId, input: str(r.tool_input), result: res ? resultOf(res) : null },
  };
}

/** The chain directory names of the local root (session ids), or [] when it has none. */
function chainIds(root: string): string[] {
  const dir = join(root, "_conversations");
  if (!existsSync(dir)) return [];
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
  } catch (e) {
    throw new ReaderError("Io", `${dir}: cannot list: ${(e as Error).message}`, { data: { file: dir }, cause: e });
  }
}

/** A session a SESSION prefix matches, as an ambiguity error lists it. */
export interface SessionMatch {
  readonly id: string;
  readonly runtime: string | null;
  readonly first_ts: string | null;
  readonly last_ts: string | null;
}

/** At most this many matches are listed in an ambiguity error. */
const MAX_LISTED = 50;

/**
 * The session a SESSION argument names among `ids` (exact, else a unique prefix); undefined when
 * none. Several matches are a Usage error listing each with its runtime, start time and run time
 * (`describe` looks them up); `where` names the local root or the fleet store, never an inner folder.
 */
export async function pickSession(ids: readonly string[], want: string, where: string, describe: (ids: readonly string[]) => Promise<readonly SessionMatch[]> | readonly SessionMatch[]): Promise<string | undefined> {
  if (ids.includes(want)) return want;
  const m = ids.filter((id) => id.startsWith(want));
  if (m.length <= 1) return m[0];
  const listed = await describe(m.slice(0, MAX_LISTED));
  const one = (x: SessionMatch) => {
    const start = x.first_ts ? `started ${x.first_ts.replace("T", " ").replace(/\.\d+Z$/, "Z")}` : "start unknown";
    const ran = x.first_ts && x.last_ts ? `, ran ${fmtDuration((Date.parse(x.last_ts) - Date.parse(x.first_ts)) / 1000)}` : "";
    return `${x.id} (${x.runtime ?? "?"}, ${start}${ran})`;
  };
  const more = m.length > listed.length ? `; and ${m.length - listed.length} more` : "";
  throw new ReaderError("Usage", `${JSON.stringify(want)} matches ${m.length} sessions in ${where}, give more of the id: ${listed.map(one).join("; ")}${more}`);
}

/**
 * The local session a SESSION argument names (exact, else a unique prefix) among the root's
 * session directories and chains, with its runtime and times; undefined when none.
 */
export async function localSession(root: string, want: string): Promise<SessionMatch | undefined> {
  const { listSessions } = await import("@lake/store");
  const ids = [...new Set([...listSessions(root), ...chainIds(root)])].sort();
  const sid = await pickSession(ids, want, `the local root ${root}`, (m) => localMatches(root, m));
  return sid === undefined ? undefined : (await localMatches(root, [sid]))[0];
}

/** Runtime and first/last record time of local sessions, from their first and last landed files. */
async function localMatches(root: string, ids: readonly string[]): Promise<SessionMatch[]> {
  const { readIndex, readLanded } = await import("@lake/store");
  return ids.map((id) => {
    const out = { id, runtime: null as string | null, first_ts: null as string | null, last_ts: null as string | null };
    try {
      const files = readIndex(root, id).files;
      const recs = (seq: number | undefined) => (seq === undefined ? [] : readLanded(root, id, seq).rows.map((t) => JSON.parse(t) as ShowRecord));
      const first = recs(files[0]?.seq);
      const last = files.length > 1 ? recs(files[files.length - 1]?.seq) : first;
      const tss = [...first, ...last].map((r) => str(r.ts)).filter((t): t is string => t !== null).sort();
      out.runtime = str(first.find((r) => r.runtime)?.runtime);
      out.first_ts = tss[0] ?? null;
      out.last_ts = tss[tss.length - 1] ?? null;
    } catch {
      /* unreadable: listed without times */
    }
    return out;
  });
}

const refKey = (r: RecordRef) => `${r.seq}:${r.row}`;

/**
 * The conversation of `want` from the local root's round chain, or undefined when the root has no
 * chain (with rounds) for it. Record text comes from the landed files the rounds cite; a record of a
 * file that is gone (tombstoned) shows as a `gone` item.
 */
export async function chainConversation(root: string, want: string, memo?: Memo): Promise<ShowConversation | undefined> {
  const sid = await pickSession(chainIds(root), want, `the local root ${root}`, (ids) => localMatches(root, ids));
  if (sid === undefined) return undefined;
  if (!memo) return foldConversation(root, sid);
  return memo.get(`chain\0${root}\0${sid}\0${await chainGeneration(root, sid)}`, () => foldConversation(root, sid));
}

/**
 * What a session's conversation from the chain is built from, as a string that changes when any
 * of it does: each round file (its name holds its round and commit) and each stream directory of the session (its
 * time changes when a landed file is added or removed).
 */
export async function chainGeneration(root: string, sid: string): Promise<string> {
  const [{ listChain }, { stat, readdir }] = await Promise.all([import("@lake/chain"), import("node:fs/promises")]);
  const parts = (await listChain(root, sid)).rounds.map((r) => r.name);
  for (const area of ["streams", "runs"]) {
    const dir = join(root, sid, area);
    const streams = await readdir(dir).catch(() => [] as string[]);
    for (const s of streams.sort()) {
      const st = await stat(join(dir, s)).catch(() => null);
      parts.push(`${area}/${s} ${st ? st.mtimeMs : "-"}`);
    }
  }
  return parts.join("\n");
}

async function foldConversation(root: string, sid: string): Promise<ShowConversation | undefined> {
  const [{ foldChain, isChainError }, { readLanded, isStoreError }] = await Promise.all([import("@lake/chain"), import("@lake/store")]);
  let fold;
  try {
    fold = await foldChain(root, sid);
  } catch (e) {
    if (isChainError(e)) throw new ReaderError("Corrupt", `${join(root, "_conversations", sid)}: ${(e as Error).message}`, { data: { file: join(root, "_conversations", sid) }, cause: e });
    throw e;
  }
  if (fold.rounds.length === 0) return undefined;
  const landed = new Map<number, string[] | null>();
  const load = (ref: RecordRef): ShowRecord | null => {
    let rows = landed.get(ref.seq);
    if (rows === undefined) {
      try {
        rows = readLanded(root, sid, ref.seq).rows;
      } catch (e) {
        if (!isStoreError(e) || e.code !== "NotFound") {
          throw new ReaderError("Corrupt", `${join(root, sid)}: landed file ${ref.seq}: ${(e as Error).message}`, { data: { file: join(root, sid) }, cause: e });
        }
        rows = null;
      }
      landed.set(ref.seq, rows);
    }
    const text = rows?.[ref.row];
    if (text === undefined) return null;
    try {
      return JSON.parse(text) as ShowRecord;
    } catch (e) {
      throw new ReaderError("Corrupt", `${join(root, sid)}: landed file ${ref.seq} row ${ref.row}: not JSON`, { data: { file: join(root, sid) }, cause: e });
    }
  };
  // A result shown beside its call is not shown again where it lies.
  const besideCall = new Set<string>();
  const callAt = new Map<string, ToolCall>();
  for (const c of fold.calls) {
    if (c.call) callAt.set(refKey(c.call), c);
    if (c.call && c.result) besideCall.add(refKey(c.result));
  }
  const seen: ShowRecord[] = [];
  const others: OtherStream[] = [];
  const build = (node: StreamNode, depth: number): ShowItem[] => {
    const out: ShowItem[] = [];
    for (const turn of node.turns) {
      const compactions = new Set(turn.compactions.map((c) => refKey(c.at)));
      const messages = new Map(turn.messages.map((m) => [refKey(m.at), m.type]));
      for (const ref of turn.records) {
        const key = refKey(ref);
        if (besideCall.has(key)) continue;
        const r = load(ref);
        if (r === null) {
          out.push({ kind: "gone", ts: null, stream: node.name, turn: turn.index, gone: { seq: ref.seq, row: ref.row }, text: `[landed file ${ref.seq} is gone: record ${ref.row} not shown]` });
          continue;
        }
        seen.push(r);
        if (compactions.has(key)) {
          out.push({ kind: "compaction", ts: str(r.ts), stream: node.name, turn: turn.index, compaction: true, text: str(r.text) ?? "context compacted" });
          continue;
        }
        const call = callAt.get(key);
        if (call) {
          const res = call.result ? load(call.result) : null;
          const item = callItem(r, node.name, turn.index, call.id, res ?? undefined);
          if (call.result && res === null) item.tool!.result = { text: `[landed file ${call.result.seq} is gone: result not shown]`, is_error: null, exit_code: null };
          call.children.forEach((child, i) => {
            const items = depth < 16 ? build(child, depth + 1) : [];
            if (i === 0) item.tool!.child = { stream: child.name, items };
            else others.push({ stream: child.name, launched_by: call.id, items });
          });
          out.push(item);
          continue;
        }
        const item = plainItem(r, node.name, turn.index);
        if (!item) continue;
        const m = messages.get(key);
        if (m) item.message = m;
        out.push(item);
      }
    }
    return out;
  };
  const items = build(fold.main, 0);
  for (const d of fold.detached) others.push({ stream: d.name, items: build(d, 1) });
  const tss = seen.map((r) => str(r.ts)).filter((t): t is string => t !== null).sort();
  return {
    session_id: sid,
    runtime: String(seen.find((r) => r.runtime)?.runtime ?? ""),
    agent: null,
    source: "chain",
    first_ts: tss[0] ?? null,
    last_ts: tss[tss.length - 1] ?? null,
    chain: { root, rounds: fold.rounds.length, through_seq: fold.throughSeq, tombstones: fold.tombstones.map((t) => ({ seq: t.seq, rows: t.rows })) },
    items,
    other_streams: others,
  };
}

/** The text rendering of a conversation (the same for both sources). */
export function renderConversation(conv: ShowConversation, full: boolean): string {
  const n = full ? Infinity : 400;
  const from = conv.source === "chain" ? `from the round chain (${conv.chain?.rounds ?? 0} round(s), ${conv.chain?.root ?? ""})` : "from events";
  const who = conv.agent === null ? "local root" : `agent ${conv.agent}`;
  const lines: string[] = [`session ${conv.session_id} (${conv.runtime}, ${who}) — ${from}`, `${conv.first_ts ?? "?"} → ${conv.last_ts ?? "?"}`];
  const gone = conv.chain?.tombstones ?? [];
  if (gone.length) lines.push(`landed files gone (tombstones): ${gone.map((t) => `seq ${t.seq} (${t.rows} records)`).join(", ")}`);
  lines.push("");
  const render = (items: readonly ShowItem[], indent: string) => {
    let turn = -1;
    for (const it of items) {
      if (it.turn !== turn) {
        turn = it.turn;
        lines.push(`${indent}── turn ${turn} ──`);
      }
      const t = it.ts ? it.ts.slice(11, 19) : "--:--:--";
      const masks = it.redaction_rules && it.redaction_rules.length ? ` [masked: ${it.redaction_rules.join(", ")}]` : "";
      if (it.tool) {
        lines.push(`${indent}${t} ⚙ ${it.tool.name ?? "tool"}(${clip(it.tool.input ?? "", Math.min(n, 160))})${masks}`);
        const r = it.tool.result;
        if (r) {
          const status = r.is_error ? "✗" : "✓";
          const rm = r.redaction_rules && r.redaction_rules.length ? ` [masked: ${r.redaction_rules.join(", ")}]` : "";
          lines.push(`${indent}         ${status} ${r.exit_code !== null ? `exit ${r.exit_code} ` : ""}${clip(r.text ?? "", n)}${rm}`);
        } else lines.push(`${indent}         … no result`);
        if (it.tool.child) {
          lines.push(`${indent}         ┌ agent ${it.tool.child.stream}`);
          render(it.tool.child.items, indent + "         │ ");
          lines.push(`${indent}         └`);
        }
        continue;
      }
      if (it.compaction) {
        lines.push(`${indent}${t} ── compaction: ${clip(it.text ?? "", Math.min(n, 160))}`);
        continue;
      }
      if (it.gone) {
        lines.push(`${indent}${t} ✂ ${it.text ?? ""}`);
        continue;
      }
      const whoSaid = it.kind === "user" ? "user" : it.kind === "assistant" ? `assistant${it.model ? ` (${it.model})` : ""}` : it.kind;
      const tag = it.message ? ` [${it.message}]` : "";
      if (it.quarantined) {
        lines.push(`${indent}${t} ${whoSaid}: record withheld: ${it.quarantined.rules.join(", ") || "quarantined"}`);
        continue;
      }
      if (it.thinking && !full) {
        lines.push(`${indent}${t} ${whoSaid}: thinking: ${(it.text ?? "").length} chars, collapsed${masks}`);
        continue;
      }
      lines.push(`${indent}${t} ${whoSaid}${tag}: ${it.thinking ? "thinking: " : ""}${clip(it.text ?? "", n)}${masks}`);
    }
  };
  render(conv.items, "");
  for (const o of conv.other_streams) {
    lines.push("", `agent ${o.stream} (${o.launched_by ? `also launched by call ${o.launched_by}` : "not attached to a call"})`);
    render(o.items, "  ");
  }
  return lines.join("\n") + "\n";
}

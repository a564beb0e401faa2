// Gemini CLI: ~/.gemini/tmp/<projectHash>/chats/session-*.json (legacy whole-file ConversationRecord,
// a snapshot source) and session-*.jsonl (append-only: a metadata line, message records re-appended
// in full whenever they change, {"$set": …} patches and {"$rewindTo": id} truncations).
import { basename, join } from "node:path";
import type { RawRecord, Usage } from "@lake/events";
import { MAIN_STREAM } from "@lake/events/record";
import { LineRecords, attrsText, contentText, count, isoTs, jsonText, lineText, obj, parseJson, shortHash, str, textId, unknownRecord, usageOf, type Obj } from "./build.js";
import { snapshotLines } from "./codex.js";
import { discoverWith, homeOf, peek, peekField, relPath } from "./discover.js";
import { AdaptersError } from "./errors.js";
import type { Adapter, AdapterState, DiscoverOptions, SourceLine, SourceRef } from "./types.js";

const ADAPTER = { name: "gemini", version: "1.0.0" };

/**
 * Cross-line state of a Gemini JSONL session: the ids of the messages currently in the
 * conversation, in order (a `$rewindTo` drops the target and everything after it; the records of
 * the rewind name the dropped ids). Grows with the message count, not with the copies.
 */
export interface GeminiState {
  ids: string[];
}

function isGeminiState(s: AdapterState): s is AdapterState & GeminiState {
  return Array.isArray(s.ids);
}

/** Gemini tokens → broca usage: input includes cached (subtract), thoughts are reasoning inside output, tool prompts are input. */
export function geminiUsage(t: unknown): Usage | undefined {
  const o = obj(t);
  if (!o) return undefined;
  const input = count(o.input);
  const cached = count(o.cached);
  const output = count(o.output);
  const thoughts = count(o.thoughts);
  const tool = count(o.tool);
  return usageOf({
    input_tokens: input === undefined ? undefined : Math.max(0, input - (cached ?? 0)) + (tool ?? 0),
    cached_input_tokens: cached,
    output_tokens: output === undefined && thoughts === undefined ? undefined : (output ?? 0) + (thoughts ?? 0),
    reasoning_tokens: thoughts,
  });
}

/** The usage key of a Gemini message: copies of one message id are one response. */
export function geminiUsageKey(messageId: string): string {
  return `gemini:${messageId}`;
}

/** Records of one message object (a JSONL line or an element of a legacy `messages` array). */
function message(b: LineRecords, m: Obj, replayed: true | undefined): void {
  const id = str(m.id);
  const type = str(m.type) ?? "?";
  const ts = isoTs(m.timestamp);
  const model = str(m.model);
  const usage = geminiUsage(m.tokens);
  const common = { ts, model, message_id: id, replayed };
  let first = true;
  const u = () => {
    if (!first || !usage) return {};
    first = false;
    // The last copy of a message id wins (Gemini rewrites a message by appending it again).
    return { usage, usage_mode: "latest" as const, usage_key: id ? geminiUsageKey(id) : undefined };
  };
  const text = contentText(m.content) ?? (typeof m.content === "object" ? jsonText(m.content) : undefined);
  if (type === "user") b.add({ kind: "user", vendor_type: "user", role: "user", text }, common);
  else if (type === "gemini" || type === "model") {
    if (Array.isArray(m.thoughts))
      for (const th of m.thoughts) {
        const t = obj(th);
        if (!t) continue;
        const s = [str(t.subject), str(t.description)].filter((x) => x).join("\n");
        b.add({ ts: isoTs(t.timestamp) ?? ts, kind: "assistant", vendor_type: "gemini/thought", role: "assistant", text: s || undefined, attrs: attrsText({ thinking: true }) }, common, u());
      }
    if (text) b.add({ kind: "assistant", vendor_type: "gemini", role: "assistant", text }, common, u());
    if (Array.isArray(m.toolCalls))
      for (const tc of m.toolCalls) {
        const c = obj(tc);
        if (!c) continue;
        const callId = str(c.id);
        const status = str(c.status);
        b.add({ ts: isoTs(c.timestamp) ?? ts, kind: "tool_call", vendor_type: "gemini/tool_call", tool_name: str(c.name), tool_call_id: callId, tool_input: jsonText(c.args ?? {}), attrs: attrsText({ display_name: str(c.displayName) }) }, common, u());
        if (c.result !== undefined || status !== undefined) {
          const outputs: string[] = [];
          if (Array.isArray(c.result))
            for (const r of c.result) {
              const resp = obj(obj(obj(r)?.functionResponse)?.response);
              const o = resp?.output ?? resp?.error;
              if (o !== undefined) outputs.push(typeof o === "string" ? o : JSON.stringify(o));
            }
          b.add({ ts: isoTs(c.timestamp) ?? ts, kind: "tool_result", vendor_type: "gemini/tool_result", tool_name: str(c.name), tool_call_id: callId, text: outputs.length ? outputs.join("\n") : str(c.resultDisplay), is_error: status === "error" ? true : status === "success" ? false : undefined, attrs: attrsText({ status }) }, common);
        }
      }
    if (first && usage) b.add({ kind: "assistant", vendor_type: "gemini", role: "assistant" }, common, u());
    else if (b.out.length === 0) b.add({ kind: "assistant", vendor_type: "gemini", role: "assistant" }, common);
  } else {
    b.add({ kind: "system", vendor_type: type, role: "system", text, is_error: type === "error" ? true : undefined }, common, u());
  }
}

/** A per-version id of a message: its id plus a digest of its JSON, so identical copies share it. */
function messageId(m: Obj): string {
  const id = str(m.id);
  const h = shortHash(JSON.stringify(m));
  return id ? `${id}@${h}` : `h${h}`;
}

/** Convert one Gemini JSONL line; `state` is updated in place. */
export function geminiLine(source: SourceRef, line: SourceLine | undefined, text: string, state: GeminiState): RawRecord[] {
  const v = parseJson(text);
  const o = obj(v);
  if (!o) return [unknownRecord(source, line, text, ADAPTER, v === undefined ? "invalid JSON" : "not a JSON object")];
  if (typeof o.$rewindTo === "string") {
    const i = state.ids.indexOf(o.$rewindTo);
    const dropped = i < 0 ? state.ids.splice(0) : state.ids.splice(i);
    const b = new LineRecords(source, line, ADAPTER, textId(text));
    b.add({ kind: "meta", vendor_type: "$rewindTo", message_id: o.$rewindTo, attrs: attrsText({ rewind_to: o.$rewindTo, dropped, dropped_usage_keys: dropped.map(geminiUsageKey) }) });
    // Each dropped message's usage is voided by a later `latest` copy of its key that reports nothing.
    for (const id of dropped) b.add({ kind: "meta", vendor_type: "$rewindTo/void", message_id: id, usage_mode: "latest", usage_key: geminiUsageKey(id) });
    return b.out;
  }
  if (str(o.id) !== undefined && str(o.type) !== undefined) {
    const id = str(o.id)!;
    if (!state.ids.includes(id)) state.ids.push(id);
    const b = new LineRecords(source, line, ADAPTER, messageId(o));
    message(b, o, undefined);
    return b.out;
  }
  // The metadata line or a `$set` patch. A `messages` array replaces the conversation.
  const patch = o.$set !== undefined ? obj(o.$set) ?? {} : o;
  const b = new LineRecords(source, line, ADAPTER, textId(text));
  b.add({
    kind: "meta",
    vendor_type: o.$set !== undefined ? "$set" : "session",
    ts: isoTs(patch.lastUpdated) ?? isoTs(patch.startTime),
    text: str(patch.summary),
    attrs: attrsText({ keys: Object.keys(patch).sort(), gemini_session_id: str(patch.sessionId), project_hash: str(patch.projectHash), start_time: str(patch.startTime), kind: str(patch.kind) }),
  });
  const out = b.out;
  if (Array.isArray(patch.messages)) {
    state.ids = [];
    for (const m of patch.messages) {
      const mo = obj(m);
      if (!mo) continue;
      const id = str(mo.id);
      if (id !== undefined && !state.ids.includes(id)) state.ids.push(id);
      const mb = new LineRecords(source, line, ADAPTER, messageId(mo));
      message(mb, mo, undefined);
      out.push(...mb.out);
    }
  }
  return out;
}

/** Convert a legacy whole-file session JSON (snapshot source). */
export function geminiSnapshot(source: SourceRef, content: string): RawRecord[] {
  const text = content.replace(/\n+$/, "");
  if (text === "") return [];
  const v = parseJson(text);
  const o = obj(v);
  if (o) return geminiLine(source, undefined, text, { ids: [] });
  if (Array.isArray(v)) {
    // logs.json: an array of {sessionId, messageId, type, message, timestamp} (user prompts only).
    const out: RawRecord[] = [];
    for (const e of v) {
      const eo = obj(e);
      if (!eo) continue;
      const b = new LineRecords({ ...source, session_id: str(eo.sessionId) ?? source.session_id }, undefined, ADAPTER, textId(JSON.stringify(eo)));
      b.add({ kind: "meta", vendor_type: `logs/${str(eo.type) ?? "?"}`, ts: isoTs(eo.timestamp), text: str(eo.message), attrs: attrsText({ log_message_id: eo.messageId }) });
      out.push(...b.out);
    }
    return out;
  }
  return [unknownRecord(source, undefined, text, ADAPTER, v === undefined ? "invalid JSON" : "not a JSON object")];
}

/** Describe a Gemini file: `.json` is a snapshot source, `.jsonl` an append source. */
export async function describeGemini(path: string, root: string | undefined, rel = root ? relPath(root, path) : path): Promise<SourceRef> {
  const name = basename(path);
  const session = peekField(await peek(path, 16 * 1024), "sessionId") ?? name.replace(/\.jsonl?$/, "");
  const isLogs = name === "logs.json" || name.endsWith("-logs.json");
  return { runtime: "gemini", path, rel, session_id: session, stream: MAIN_STREAM, kind: isLogs ? "logs" : "transcript", mode: name.endsWith(".jsonl") ? "append" : "snapshot" };
}

/** The Gemini CLI adapter. */
export const geminiAdapter: Adapter = {
  runtime: "gemini",
  name: ADAPTER.name,
  version: ADAPTER.version,
  defaultRoots(env = process.env, home) {
    return [join(env.GEMINI_CLI_HOME ?? homeOf(home), ".gemini", "tmp")];
  },
  discover(options: DiscoverOptions = {}) {
    const roots = options.roots ?? this.defaultRoots(options.env, options.home);
    return discoverWith("gemini", roots, options, (rel) => /(^|\/)chats\/.*\.jsonl?$/.test(rel), (p, r, rel) => describeGemini(p, r, rel));
  },
  describe: (path, root) => describeGemini(path, root),
  initialState: () => ({ ids: [] }),
  parseLines(source, lines, state) {
    if (!isGeminiState(state)) throw new AdaptersError("InvalidState", `${source.path}: not a Gemini adapter state`, { data: { path: source.path } });
    const out: RawRecord[] = [];
    for (const l of lines) for (const r of geminiLine(source, l, lineText(l), state)) out.push(r);
    return out;
  },
  parseSnapshot(source, content) {
    const text = typeof content === "string" ? content : new TextDecoder().decode(content);
    if (source.mode === "append") {
      const state: GeminiState = { ids: [] };
      return snapshotLines(text, (l) => geminiLine(source, l, lineText(l), state));
    }
    return geminiSnapshot(source, text);
  },
};

/**
 * Drop the usage that a later `$rewindTo` discarded (Gemini's rule: a rewind drops what follows).
 * Records are taken in order; a usage record whose usage_key a later rewind record of the same
 * session names in `attrs.dropped_usage_keys` loses its usage. Apply before `countUsage` until the
 * accounting carries this rule itself.
 */
export function dropRewound<T extends Pick<RawRecord, "session_id" | "usage_key" | "vendor_type" | "attrs" | "usage">>(records: Iterable<T>): T[] {
  const all = [...records];
  const dropped = new Map<string, Set<string>>();
  for (let i = all.length - 1; i >= 0; i--) {
    const r = all[i]!;
    if (r.vendor_type === "$rewindTo" && r.attrs) {
      const keys = obj(parseJson(r.attrs))?.dropped_usage_keys;
      if (Array.isArray(keys)) {
        let s = dropped.get(r.session_id);
        if (!s) dropped.set(r.session_id, (s = new Set()));
        for (const k of keys) if (typeof k === "string") s.add(k);
      }
    } else if (r.usage_key !== undefined && r.usage && dropped.get(r.session_id)?.has(r.usage_key)) {
      const { usage: _u, ...rest } = r;
      all[i] = rest as T;
    }
  }
  return all;
}

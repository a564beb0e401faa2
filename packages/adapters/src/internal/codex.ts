// Codex CLI: ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl and ~/.codex/archived_sessions/.
// Record ids are digests of the line's own text, so the same file in both trees (or a line fed
// twice) yields identical records. Cross-line state (CodexState) is small and JSON-serialisable.
import { basename, join } from "node:path";
import type { RawRecord, Usage } from "@lake/events";
import { MAIN_STREAM } from "@lake/events/record";
import { LineRecords, attrsText, contentText, count, isoTs, jsonText, lineJson, num, obj, parseJson, str, textId, unknownRecord, usageOf, type Obj } from "./build.js";
import { discoverWith, homeOf, peek, relPath } from "./discover.js";
import { AdaptersError } from "./errors.js";
import type { Adapter, AdapterState, DiscoverOptions, SourceLine, SourceRef } from "./types.js";

const ADAPTER = { name: "codex", version: "1.0.0" };

/** Raw Codex totals (input includes cached; output includes reasoning). */
interface CodexTotals {
  input?: number;
  cached?: number;
  output?: number;
  reasoning?: number;
}

/**
 * Cross-line state of a Codex rollout:
 * - `start_ms`: the session's own start (first session_meta, else the time in the file name);
 * - `metas`: session_meta lines seen (a fork has two: its own, then the parent's);
 * - `fork`: the session is a fork (its session_meta names forked_from_id, or a second session_meta follows);
 * - `replaying`: the current turn of a fork replays the parent's history (task_started.started_at before start);
 * - `baseline`: the last replayed cumulative total; live totals count from it;
 * - `model`, `cwd`: from the latest turn_context / session_meta.
 */
export interface CodexState {
  start_ms?: number;
  metas: number;
  fork?: boolean;
  replaying: boolean;
  baseline?: CodexTotals;
  model?: string;
  cwd?: string;
}

function isCodexState(s: AdapterState): s is AdapterState & CodexState {
  return typeof s.metas === "number" && typeof s.replaying === "boolean";
}

/** Codex totals → broca usage: input minus cached is fresh input; reasoning is inside output. */
export function codexUsage(t: CodexTotals): Usage | undefined {
  return usageOf({
    input_tokens: t.input === undefined ? undefined : Math.max(0, t.input - (t.cached ?? 0)),
    cached_input_tokens: t.cached,
    output_tokens: t.output,
    reasoning_tokens: t.reasoning,
  });
}

function totals(u: unknown): CodexTotals | undefined {
  const o = obj(u);
  if (!o) return undefined;
  const t: CodexTotals = {};
  const set = (k: keyof CodexTotals, v: number | undefined) => {
    if (v !== undefined) t[k] = v;
  };
  set("input", count(o.input_tokens));
  set("cached", count(o.cached_input_tokens) ?? count(o.cache_read_input_tokens));
  set("output", count(o.output_tokens));
  set("reasoning", count(o.reasoning_output_tokens));
  return Object.keys(t).length ? t : undefined;
}

function minus(a: CodexTotals, b: CodexTotals | undefined): CodexTotals {
  if (!b) return a;
  const out: CodexTotals = {};
  for (const k of ["input", "cached", "output", "reasoning"] as const) {
    const v = a[k];
    if (v !== undefined) out[k] = Math.max(0, v - (b[k] ?? 0));
  }
  return out;
}

const NAME_TIME = /(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})/;

/** A fresh Codex state for a source. With no session_meta, the time in the file name (read as UTC) is the start. */
export function codexInitialState(source: SourceRef): CodexState {
  const m = NAME_TIME.exec(basename(source.path));
  const s: CodexState = { metas: 0, replaying: false };
  if (m) s.start_ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  return s;
}

const RESPONSE_ITEM_TYPES = new Set([
  "message", "reasoning", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
  "local_shell_call", "local_shell_call_output", "web_search_call", "ghost_snapshot", "tool_search_call", "compaction",
]);

/** Convert one Codex rollout line; `state` is updated in place. */
export function codexLine(source: SourceRef, line: SourceLine, state: CodexState): RawRecord[] {
  const { text, value: v } = lineJson(line);
  const o = obj(v);
  if (!o) return [unknownRecord(source, line, text, ADAPTER, v === undefined ? "invalid JSON" : "not a JSON object")];
  const b = new LineRecords(source, line, ADAPTER, textId(text));
  const ts = isoTs(o.timestamp);
  const type = str(o.type);
  const payload = obj(o.payload);
  let envelope: string;
  let p: Obj;
  if (payload && type) {
    envelope = type;
    p = payload;
  } else if (type && RESPONSE_ITEM_TYPES.has(type)) {
    // Older pre-envelope format: response items stand alone on their line.
    envelope = "response_item";
    p = o;
  } else if (!type && str(o.id) && (o.instructions !== undefined || o.timestamp !== undefined)) {
    envelope = "session_meta"; // pre-envelope first line: {id, timestamp, instructions, git}
    p = o;
  } else if (str(o.record_type)) {
    b.add({ kind: "meta", vendor_type: `state/${str(o.record_type)}`, ts });
    return b.out;
  } else return [unknownRecord(source, line, text, ADAPTER, "unrecognised Codex line")];

  const tsMs = ts ? Date.parse(ts) : undefined;
  if (envelope === "session_meta") {
    state.metas++;
    const own = state.metas === 1;
    const metaTs = isoTs(p.timestamp) ?? ts;
    if (own && metaTs) state.start_ms = Date.parse(metaTs);
    if (str(p.forked_from_id) !== undefined || !own) state.fork = true;
    const cwd = str(p.cwd);
    if (own && cwd !== undefined) state.cwd = cwd;
    const git = obj(p.git);
    b.add({
      kind: "meta",
      vendor_type: "session_meta",
      ts,
      cwd: str(p.cwd),
      repo: str(git?.repository_url),
      branch: str(git?.branch),
      replayed: own ? undefined : true,
      attrs: attrsText({
        codex_session_id: str(p.id),
        forked_from_id: str(p.forked_from_id),
        originator: str(p.originator),
        cli_version: str(p.cli_version),
        source: typeof p.source === "string" ? p.source : undefined,
        commit: str(git?.commit_hash),
        parent_meta: own ? undefined : true,
      }),
    });
    return b.out;
  }
  // A line timestamped before the session's own start replays history copied from elsewhere.
  const before = state.start_ms !== undefined && tsMs !== undefined && tsMs < state.start_ms;
  if (envelope === "event_msg" && str(p.type) === "task_started") {
    const started = num(p.started_at);
    state.replaying = before || (state.fork === true && started !== undefined && state.start_ms !== undefined && started * 1000 < Math.floor(state.start_ms / 1000) * 1000);
  }
  const replayed: true | undefined = state.replaying || before ? true : undefined;
  const common = { ts, model: state.model, cwd: state.cwd, replayed };

  switch (envelope) {
    case "turn_context": {
      const model = str(p.model);
      const cwd = str(p.cwd);
      if (model !== undefined) state.model = model;
      if (cwd !== undefined) state.cwd = cwd;
      b.add({ model: state.model, cwd: state.cwd, kind: "meta", vendor_type: "turn_context", attrs: attrsText({ approval_policy: str(p.approval_policy), sandbox: str(obj(p.sandbox_policy)?.type), effort: str(p.effort), turn_id: str(p.turn_id) }) }, common);
      break;
    }
    case "response_item":
      responseItem(b, p, common);
      break;
    case "event_msg":
      eventMsg(b, p, common, state, replayed === true);
      break;
    case "compacted":
      b.add({ kind: "summary", vendor_type: "compacted", text: str(p.message), attrs: attrsText({ replacement_items: Array.isArray(p.replacement_history) ? p.replacement_history.length : undefined }) }, common);
      break;
    default:
      b.add({ kind: "meta", vendor_type: envelope, attrs: attrsText({ payload_type: str(p.type) }) }, common);
  }
  return b.out;
}

type Common = { ts: string | undefined; model: string | undefined; cwd: string | undefined; replayed: true | undefined };

function outputFields(out: unknown): { text: string | undefined; exit_code: number | undefined } {
  // function_call_output.output is text, often JSON {"output": "...", "metadata": {"exit_code": 0}}.
  const s = typeof out === "string" ? out : contentText(out) ?? jsonText(out);
  const j = typeof out === "string" && out.startsWith("{") ? obj(parseJson(out)) : obj(out);
  const meta = obj(j?.metadata);
  const ec = meta?.exit_code ?? j?.exit_code;
  return { text: str(j?.output) ?? s, exit_code: typeof ec === "number" && Number.isInteger(ec) ? ec : undefined };
}

function responseItem(b: LineRecords, p: Obj, c: Common): void {
  const t = str(p.type) ?? "?";
  const vt = `response_item/${t}`;
  switch (t) {
    case "message": {
      const role = str(p.role);
      const kind = role === "assistant" ? "assistant" : role === "user" ? "user" : "system";
      b.add({ kind, vendor_type: vt, role, text: contentText(p.content), message_id: str(p.id), attrs: attrsText({ phase: str(p.phase) }) }, c);
      break;
    }
    case "reasoning": {
      const summary = Array.isArray(p.summary) ? p.summary.map((s) => str(obj(s)?.text)).filter((s) => s !== undefined).join("\n") : undefined;
      b.add({ kind: "assistant", vendor_type: vt, role: "assistant", text: summary || contentText(p.content), attrs: attrsText({ thinking: true, encrypted: p.encrypted_content ? true : undefined }) }, c);
      break;
    }
    case "function_call":
    case "custom_tool_call":
    case "local_shell_call":
      b.add({ kind: "tool_call", vendor_type: vt, tool_name: str(p.name) ?? (t === "local_shell_call" ? "local_shell" : undefined), tool_call_id: str(p.call_id) ?? str(p.id), tool_input: jsonText(p.arguments ?? p.input ?? p.action), attrs: attrsText({ status: str(p.status) }) }, c);
      break;
    case "function_call_output":
    case "custom_tool_call_output":
    case "local_shell_call_output": {
      const f = outputFields(p.output);
      b.add({ kind: "tool_result", vendor_type: vt, tool_call_id: str(p.call_id), text: f.text, exit_code: f.exit_code, is_error: f.exit_code !== undefined ? f.exit_code !== 0 : undefined }, c);
      break;
    }
    case "web_search_call": {
      const action = obj(p.action);
      b.add({ kind: "tool_call", vendor_type: vt, tool_name: "web_search", tool_call_id: str(p.id), tool_input: jsonText(action), attrs: attrsText({ status: str(p.status) }) }, c);
      break;
    }
    default:
      b.add({ kind: "meta", vendor_type: vt }, c);
  }
}

function eventMsg(b: LineRecords, p: Obj, c: Common, state: CodexState, replayed: boolean): void {
  const t = str(p.type) ?? "?";
  const vt = `event_msg/${t}`;
  switch (t) {
    case "token_count": {
      const info = obj(p.info);
      const total = totals(info?.total_token_usage);
      if (!info || !total) {
        // A token_count with null info carries only rate limits: no usage.
        b.add({ kind: "meta", vendor_type: vt }, c);
        return;
      }
      // Replayed history sets the baseline live totals count from; its own usage is marked replayed.
      if (replayed) state.baseline = total;
      const live = replayed ? total : minus(total, state.baseline);
      const usage = codexUsage(live);
      b.add({ kind: "usage", vendor_type: vt, usage, usage_mode: usage ? "cumulative" : undefined, attrs: attrsText({ last: info.last_token_usage, context_window: info.model_context_window, baseline: !replayed && state.baseline ? true : undefined }) }, c);
      return;
    }
    case "user_message":
    case "agent_message":
    case "agent_reasoning":
      // Duplicates of response items (the conversation): kept as meta so views do not double them.
      b.add({ kind: "meta", vendor_type: vt, text: str(p.message) ?? str(p.text) }, c);
      return;
    case "exec_command_end":
    case "patch_apply_end":
    case "mcp_tool_call_end":
    case "web_search_end": {
      const ec = count(p.exit_code);
      b.add({ kind: "meta", vendor_type: vt, tool_call_id: str(p.call_id), exit_code: typeof p.exit_code === "number" && Number.isInteger(p.exit_code) ? p.exit_code : undefined, is_error: ec !== undefined ? ec !== 0 : p.success === false ? true : undefined, attrs: attrsText({ turn_id: str(p.turn_id), duration: p.duration }) }, c);
      return;
    }
    case "collab_agent_spawn_end":
      b.add({ kind: "meta", vendor_type: vt, tool_call_id: str(p.call_id), child_stream: str(p.new_thread_id), attrs: attrsText({ agent_role: str(p.new_agent_role) }) }, c);
      return;
    case "task_started":
    case "task_complete":
    case "turn_aborted":
      b.add({ kind: "meta", vendor_type: vt, text: str(p.last_agent_message), attrs: attrsText({ turn_id: str(p.turn_id), started_at: p.started_at, reason: str(p.reason) }) }, c);
      return;
    case "error":
    case "stream_error":
      b.add({ kind: "system", vendor_type: vt, text: str(p.message), is_error: true }, c);
      return;
    default:
      b.add({ kind: "meta", vendor_type: vt, text: str(p.message) }, c);
  }
}

const ROLLOUT_ID = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

/** Describe a Codex rollout file as a source; the session id comes from the name, else session_meta. */
export async function describeCodex(path: string, root: string | undefined, rel = root ? relPath(root, path) : path): Promise<SourceRef> {
  const m = ROLLOUT_ID.exec(basename(path));
  let session = m?.[1];
  if (!session) {
    const head = await peek(path, 64 * 1024);
    const first = head.split("\n", 1)[0] ?? "";
    const o = obj(parseJson(first));
    session = str(obj(o?.payload)?.id) ?? str(o?.id) ?? basename(path).replace(/\.jsonl$/, "");
  }
  return { runtime: "codex", path, rel, session_id: session, stream: MAIN_STREAM, kind: "transcript", mode: "append" };
}

/** The Codex CLI adapter. */
export const codexAdapter: Adapter = {
  runtime: "codex",
  name: ADAPTER.name,
  version: ADAPTER.version,
  defaultRoots(env = process.env, home) {
    return [env.CODEX_HOME ?? join(homeOf(home), ".codex")];
  },
  discover(options: DiscoverOptions = {}) {
    const roots = options.roots ?? this.defaultRoots(options.env, options.home);
    return discoverWith("codex", roots, options, (rel) => /^(sessions|archived_sessions)\/.*\.jsonl$/.test(rel), (p, r, rel) => describeCodex(p, r, rel));
  },
  describe: (path, root) => describeCodex(path, root),
  initialState: (source) => codexInitialState(source) as unknown as AdapterState,
  parseLines(source, lines, state) {
    if (!isCodexState(state)) throw new AdaptersError("InvalidState", `${source.path}: not a Codex adapter state`, { data: { path: source.path } });
    const out: RawRecord[] = [];
    for (const l of lines) for (const r of codexLine(source, l, state)) out.push(r);
    return out;
  },
  parseSnapshot(source, content) {
    const state = codexInitialState(source);
    return snapshotLines(content, (l) => codexLine(source, l, state));
  },
};

/** Run a line converter over a whole text (snapshot read), with offsets and line numbers. */
export function snapshotLines(content: Uint8Array | string, each: (l: SourceLine) => RawRecord[]): RawRecord[] {
  const text = typeof content === "string" ? content : new TextDecoder().decode(content);
  const out: RawRecord[] = [];
  let offset = 0;
  let n = 1;
  for (const l of text.split("\n")) {
    if (l.length) out.push(...each({ bytes: l, offset, line: n }));
    offset += Buffer.byteLength(l) + 1;
    n++;
  }
  return out;
}

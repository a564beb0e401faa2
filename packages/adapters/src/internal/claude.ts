// Claude Code: ~/.claude/projects/<project>/<session>.jsonl, subagents (flat agent-*.jsonl and
// <session>/subagents/agent-*.jsonl + agent-*.meta.json sidecars). Every line converts on its own:
// the adapter keeps no cross-line state (`{}`); duplicates are left to countUsage (usage_key).
import { basename, dirname, join } from "node:path";
import type { RawRecord } from "@lake/events";
import { MAIN_STREAM } from "@lake/events/record";
import { LineRecords, attrsText, bool, contentText, count, isoTs, jsonText, lineJson, obj, parseJson, str, textId, unknownRecord, usageOf, type Fields, type Obj } from "./build.js";
import { discoverWith, homeOf, peek, peekField, relPath } from "./discover.js";
import type { Adapter, AdapterState, DiscoverOptions, SourceLine, SourceRef } from "./types.js";

const ADAPTER = { name: "claude-code", version: "1.1.0" };
/** Tools whose call launches a child agent. */
const AGENT_TOOLS = new Set(["Task", "Agent"]);

/**
 * Claude usage → broca meaning: input is already fresh; cache read/creation map to cached/write;
 * `cache_creation.ephemeral_1h_input_tokens` (Claude Code 2.1+) is the 1-hour part of the writes.
 */
export function claudeUsage(u: unknown) {
  const o = obj(u);
  if (!o) return undefined;
  return usageOf({
    input_tokens: count(o.input_tokens),
    cached_input_tokens: count(o.cache_read_input_tokens),
    cache_write_tokens: count(o.cache_creation_input_tokens),
    output_tokens: count(o.output_tokens),
    cache_write_1h_tokens: count(obj(o.cache_creation)?.ephemeral_1h_input_tokens),
  });
}

/** Claude Code's own cost of a response (`costUSD`, written by older versions), when it is a price. */
function recordedCost(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined;
}

/** Convert one Claude Code transcript line to records. */
export function claudeLine(source: SourceRef, line: SourceLine): RawRecord[] {
  const { text, value: v } = lineJson(line);
  const o = obj(v);
  if (!o) return [unknownRecord(source, line, text, ADAPTER, v === undefined ? "invalid JSON" : "not a JSON object")];
  const message = obj(o.message);
  const type = str(o.type) ?? str(message?.role);
  const uuid = str(o.uuid);
  const b = new LineRecords(source, line, ADAPTER, uuid ?? textId(text));
  const lineSession = str(o.sessionId);
  const common = {
    parent_id: str(o.parentUuid) ?? str(o.logicalParentUuid),
    ts: isoTs(o.timestamp),
    cwd: str(o.cwd),
    branch: str(o.gitBranch),
    is_sidechain: bool(o.isSidechain),
  };
  const baseAttrs = {
    version: str(o.version),
    agent_id: str(o.agentId),
    line_session_id: lineSession !== undefined && lineSession !== source.session_id ? lineSession : undefined,
  };
  switch (type) {
    case "assistant":
      assistant(b, o, message ?? {}, common, baseAttrs);
      break;
    case "user":
      user(b, o, message ?? {}, common, baseAttrs);
      break;
    case "system": {
      const subtype = str(o.subtype);
      b.add(
        {
          kind: "system",
          vendor_type: subtype ? `system/${subtype}` : "system",
          role: "system",
          text: str(o.content),
          is_error: subtype === "api_error" ? true : undefined,
          attrs: attrsOf(baseAttrs, {
            level: str(o.level),
            is_meta: bool(o.isMeta) || undefined,
            compact: obj(o.compactMetadata),
            duration_ms: o.durationMs,
            hook_count: o.hookCount,
            hook_errors: Array.isArray(o.hookErrors) && o.hookErrors.length ? o.hookErrors : undefined,
            prevented_continuation: o.preventedContinuation,
            retry_attempt: o.retryAttempt,
            error: o.error === undefined ? undefined : o.error,
          }),
        },
        common,
      );
      break;
    }
    case "summary":
      b.add({ kind: "summary", vendor_type: "summary", text: str(o.summary), attrs: attrsText({ leaf_uuid: str(o.leafUuid) }) });
      break;
    case "file-history-snapshot": {
      const snap = obj(o.snapshot);
      const files = obj(snap?.trackedFileBackups);
      b.add({
        kind: "meta",
        vendor_type: "file-history-snapshot",
        ts: isoTs(snap?.timestamp),
        attrs: attrsText({ message_uuid: str(o.messageId), is_update: bool(o.isSnapshotUpdate), files: files ? Object.keys(files) : undefined }),
      });
      break;
    }
    case "queue-operation":
      b.add({ kind: "meta", vendor_type: `queue-operation/${str(o.operation) ?? "?"}`, ts: isoTs(o.timestamp), text: str(o.content) });
      break;
    case "progress":
      progress(b, o, common, baseAttrs);
      break;
    default:
      if (type === undefined) return [unknownRecord(source, line, text, ADAPTER, "no record type")];
      // A newer record type: keep it as meta with its fields' names (content stays in the vendor store).
      b.add({ kind: "meta", vendor_type: type, text: str(o.content) ?? str(o.summary) ?? str(o.title), attrs: attrsOf(baseAttrs, { keys: Object.keys(o).sort() }) }, common);
  }
  return b.out;
}

type Common = { parent_id: string | undefined; ts: string | undefined; cwd: string | undefined; branch: string | undefined; is_sidechain: boolean | undefined };
type BaseAttrs = { version: string | undefined; agent_id: string | undefined; line_session_id: string | undefined };

/**
 * `attrs` of a record: the line's base attributes, then `extra` (attrsText of `{ ...base, ...extra }`,
 * built by assignment: see LineRecords.add).
 */
function attrsOf(base: BaseAttrs, extra: Obj): string | undefined {
  const a: Obj = { version: base.version, agent_id: base.agent_id, line_session_id: base.line_session_id };
  for (const k in extra) a[k] = extra[k];
  return attrsText(a);
}

function assistant(b: LineRecords, o: Obj, m: Obj, common: Common, baseAttrs: BaseAttrs): void {
  const usage = claudeUsage(m.usage);
  const messageId = str(m.id);
  const requestId = str(o.requestId);
  const model = str(m.model);
  const isError = bool(o.isApiErrorMessage) || undefined;
  const shared: Fields = {
    parent_id: common.parent_id,
    ts: common.ts,
    cwd: common.cwd,
    branch: common.branch,
    is_sidechain: common.is_sidechain,
    role: "assistant",
    model,
    message_id: messageId,
    request_id: requestId,
    is_error: isError,
  };
  // Usage goes on the line's first record only: one line, one copy of the response's usage.
  const withUsage: readonly Fields[] = usage ? [shared, { usage, usage_mode: "delta", usage_key: requestId ?? messageId, cost_usd: recordedCost(o.costUSD) }] : [shared];
  const attrs = attrsOf(baseAttrs, { stop_reason: str(m.stop_reason), service_tier: str(obj(m.usage)?.service_tier) });
  const content = Array.isArray(m.content) ? m.content : typeof m.content === "string" ? [{ type: "text", text: m.content }] : [];
  let first = true;
  // The bases of a record (LineRecords.add): the fields every record of the line shares, and the usage after them on the first one.
  const u = (): readonly Fields[] => {
    if (!first) return [shared];
    first = false;
    return withUsage;
  };
  for (const blk of content) {
    const c = obj(blk);
    if (!c) continue;
    const t = str(c.type);
    if (t === "text") b.add({ kind: "assistant", vendor_type: "assistant/text", text: str(c.text), attrs }, ...u());
    else if (t === "thinking" || t === "redacted_thinking")
      b.add({ kind: "assistant", vendor_type: `assistant/${t}`, text: str(c.thinking), attrs: attrsOf(baseAttrs, { thinking: true, signature_only: str(c.thinking) ? undefined : true }) }, ...u());
    else if (t === "tool_use" || t === "server_tool_use") {
      const name = str(c.name);
      const input = obj(c.input);
      b.add(
        {
          kind: "tool_call",
          vendor_type: `assistant/${t}`,
          tool_name: name,
          tool_call_id: str(c.id),
          tool_input: jsonText(c.input),
          attrs: name && AGENT_TOOLS.has(name) ? attrsOf(baseAttrs, { subagent_type: str(input?.subagent_type), description: str(input?.description) }) : attrs,
        },
        ...u(),
      );
    } else if (t?.endsWith("_tool_result"))
      b.add({ kind: "tool_result", vendor_type: `assistant/${t}`, tool_call_id: str(c.tool_use_id), text: contentText(c.content) ?? jsonText(c.content), attrs }, ...u());
    else b.add({ kind: "assistant", vendor_type: `assistant/${t ?? "?"}`, attrs }, ...u());
  }
  if (first) b.add({ kind: "assistant", vendor_type: "assistant", attrs }, ...u());
}

function user(b: LineRecords, o: Obj, m: Obj, common: Common, baseAttrs: BaseAttrs): void {
  const isMeta = bool(o.isMeta) || undefined;
  const compact = bool(o.isCompactSummary) || undefined;
  const shared: Fields = { parent_id: common.parent_id, ts: common.ts, cwd: common.cwd, branch: common.branch, is_sidechain: common.is_sidechain, role: "user" };
  const kind = compact ? "summary" : "user";
  const vt = compact ? "user/compact_summary" : isMeta ? "user/meta" : "user";
  const attrs = attrsOf(baseAttrs, { is_meta: isMeta, permission_mode: str(o.permissionMode) });
  if (typeof m.content === "string" || !Array.isArray(m.content)) {
    b.add({ kind, vendor_type: vt, text: str(m.content), attrs }, shared);
    return;
  }
  const tur = o.toolUseResult;
  const turObj = obj(tur);
  let texts: string[] = [];
  const flush = () => {
    if (texts.length) b.add({ kind, vendor_type: vt, text: texts.join("\n"), attrs }, shared);
    texts = [];
  };
  for (const blk of m.content) {
    const c = obj(blk);
    if (!c) continue;
    if (c.type === "tool_result") {
      flush();
      const agentId = str(turObj?.agentId);
      // A Task/Agent result copies the child's usage (toolUseResult.usage): never counted here; the
      // child's own transcript carries it. Kept in attrs as totals only.
      b.add(
        {
        kind: "tool_result",
        vendor_type: "user/tool_result",
        tool_call_id: str(c.tool_use_id),
        text: contentText(c.content),
        is_error: bool(c.is_error),
        exit_code: exitCode(turObj),
        child_stream: agentId,
        attrs: attrsOf(baseAttrs, {
          interrupted: bool(turObj?.interrupted) || undefined,
          status: str(turObj?.status),
          total_tokens: agentId ? turObj?.totalTokens : undefined,
          total_duration_ms: agentId ? turObj?.totalDurationMs : undefined,
          total_tool_use_count: agentId ? turObj?.totalToolUseCount : undefined,
          tool_error: typeof tur === "string" && bool(c.is_error) ? tur : undefined,
        }),
        },
        shared,
      );
    } else {
      const t = contentText([c]);
      if (t !== undefined) texts.push(t);
    }
  }
  flush();
  if (b.out.length === 0) b.add({ kind, vendor_type: vt, attrs }, shared);
}

function exitCode(t: Obj | undefined): number | undefined {
  const v = t?.exitCode ?? t?.exit_code ?? t?.returnCode;
  return typeof v === "number" && Number.isInteger(v) ? v : undefined;
}

function progress(b: LineRecords, o: Obj, common: Common, baseAttrs: BaseAttrs): void {
  const d = obj(o.data) ?? {};
  const dt = str(d.type) ?? "?";
  const inner = obj(d.message);
  // A progress row may embed a child's assistant message with its usage: never counted here.
  b.add(
    {
    kind: "meta",
    vendor_type: `progress/${dt}`,
    tool_call_id: str(o.parentToolUseID),
    child_stream: dt === "agent_progress" ? str(d.agentId) : undefined,
    text: dt === "bash_progress" ? str(d.output) : undefined,
    attrs: attrsOf(baseAttrs, {
      tool_use_id: str(o.toolUseID),
      hook_event: str(d.hookEvent),
      hook_name: str(d.hookName),
      command: str(d.command),
      inner_type: str(inner?.type),
      inner_uuid: str(inner?.uuid),
      task_description: str(d.taskDescription),
      elapsed_s: d.elapsedTimeSeconds,
    }),
    },
    common,
  );
}

/** Convert a `.meta.json` sidecar of a subagent (a snapshot source) to its record. */
export function claudeSidecar(source: SourceRef, content: string): RawRecord[] {
  const text = content.replace(/\n+$/, "");
  if (text === "") return [];
  const o = obj(parseJson(text));
  if (!o) return [unknownRecord(source, undefined, text, ADAPTER, "invalid JSON")];
  const b = new LineRecords(source, undefined, ADAPTER, textId(text));
  b.add({
    kind: "meta",
    vendor_type: "subagent_meta",
    child_stream: source.stream,
    tool_call_id: str(o.toolUseId),
    text: str(o.description),
    attrs: attrsText({ agent_type: str(o.agentType), description: str(o.description), keys: Object.keys(o).sort() }),
  });
  return b.out;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Describe a Claude Code file (relative to a projects root) as a source. */
export async function describeClaude(path: string, root: string | undefined, rel = root ? relPath(root, path) : path): Promise<SourceRef> {
  const name = basename(path);
  const dir = dirname(path);
  const runtime = "claude-code";
  if (name.endsWith(".meta.json")) {
    const agent = name.slice("agent-".length, -".meta.json".length);
    const session = basename(dirname(dir));
    return { runtime, path, rel, session_id: session, stream: agent, kind: "meta", mode: "snapshot" };
  }
  if (name.startsWith("agent-") && name.endsWith(".jsonl")) {
    const agent = name.slice("agent-".length, -".jsonl".length);
    if (basename(dir) === "subagents") return { runtime, path, rel, session_id: basename(dirname(dir)), stream: agent, kind: "transcript", mode: "append" };
    // Legacy flat layout: the parent session is named inside the file.
    const session = peekField(await peek(path), "sessionId") ?? agent;
    return { runtime, path, rel, session_id: session, stream: agent, kind: "transcript", mode: "append" };
  }
  const stem = name.replace(/\.jsonl$/, "");
  const session = UUID_RE.test(stem) ? stem : (peekField(await peek(path), "sessionId") ?? stem);
  return { runtime, path, rel, session_id: session, stream: MAIN_STREAM, kind: "transcript", mode: "append" };
}

/**
 * {@link describeClaude} of a main transcript named by its session id (`<uuid>.jsonl`), the common
 * case, without a promise (discovery describes every file: a thousand awaits cost more than the
 * rest); undefined for any other file.
 */
function describeClaudeMain(path: string, rel: string): SourceRef | undefined {
  const name = basename(path);
  if (!name.endsWith(".jsonl") || name.startsWith("agent-")) return undefined;
  const stem = name.slice(0, -".jsonl".length);
  return UUID_RE.test(stem) ? { runtime: "claude-code", path, rel, session_id: stem, stream: MAIN_STREAM, kind: "transcript", mode: "append" } : undefined;
}

/** The Claude Code adapter. */
export const claudeCodeAdapter: Adapter = {
  runtime: "claude-code",
  name: ADAPTER.name,
  version: ADAPTER.version,
  defaultRoots(env = process.env, home) {
    const cfg = env.CLAUDE_CONFIG_DIR;
    return [join(cfg ?? join(homeOf(home), ".claude"), "projects")];
  },
  discover(options: DiscoverOptions = {}) {
    const roots = options.roots ?? this.defaultRoots(options.env, options.home);
    return discoverWith("claude-code", roots, options, (rel) => rel.endsWith(".jsonl") || (rel.endsWith(".meta.json") && rel.includes("/subagents/")), (p, r, rel) => describeClaudeMain(p, rel) ?? describeClaude(p, r, rel));
  },
  describe: (path, root) => describeClaude(path, root),
  initialState: () => ({}),
  stateless: true,
  parseLines(source: SourceRef, lines: Iterable<SourceLine>, _state: AdapterState): RawRecord[] {
    const out: RawRecord[] = [];
    for (const l of lines) for (const r of claudeLine(source, l)) out.push(r);
    return out;
  },
  parseSnapshot(source: SourceRef, content: Uint8Array | string): RawRecord[] {
    const text = typeof content === "string" ? content : new TextDecoder().decode(content);
    if (source.kind === "meta") return claudeSidecar(source, text);
    // A transcript read whole: every line in order.
    const out: RawRecord[] = [];
    let offset = 0;
    let n = 1;
    for (const l of text.split("\n")) {
      if (l.length) out.push(...claudeLine(source, { bytes: l, offset, line: n }));
      offset += Buffer.byteLength(l) + 1;
      n++;
    }
    return out;
  },
};

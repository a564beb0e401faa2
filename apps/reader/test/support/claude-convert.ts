// TEST-ONLY converter: Claude Code JSONL → canonical records, standing in for @lake/adapters until
// that package is ready. It is deliberately small: user/assistant text, tool calls and results,
// usage in broca's meaning with usage_key = message.id + requestId (one billed response), sidechain
// streams. It is NOT the adapter and makes no claim of completeness; the reader tests only need a
// faithful-enough record set pushed through the fleet to compare the reader against
// usageBySession / usageByDay over the very same records.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { canonicalize, type CanonicalRecord, type RawRecord, type Usage } from "@lake/events";

type Json = Record<string, unknown>;

function usageOf(u: Json | undefined): Usage | undefined {
  if (!u) return undefined;
  const out: Usage = {};
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
  const map = [
    ["input_tokens", "input_tokens"],
    ["cache_read_input_tokens", "cached_input_tokens"],
    ["cache_creation_input_tokens", "cache_write_tokens"],
    ["output_tokens", "output_tokens"],
  ] as const;
  for (const [from, to] of map) {
    const v = n(u[from]);
    if (v !== undefined) out[to] = v;
  }
  return Object.keys(out).length ? out : undefined;
}

/** Convert one Claude Code transcript file; `rel` is its path relative to the projects root. */
export function convertClaudeFile(path: string, rel: string): CanonicalRecord[] {
  const out: CanonicalRecord[] = [];
  const lines = readFileSync(path, "utf8").split("\n");
  let offset = 0;
  const fileSession = basename(path, ".jsonl");
  lines.forEach((line, i) => {
    const at = offset;
    offset += Buffer.byteLength(line) + 1;
    if (!line.trim()) return;
    let o: Json;
    try {
      o = JSON.parse(line) as Json;
    } catch {
      return;
    }
    const msg = (o.message ?? {}) as Json;
    const type = (o.type as string | undefined) ?? (msg.role as string | undefined);
    if (type !== "user" && type !== "assistant") return;
    const session_id = (o.sessionId as string | undefined) ?? fileSession;
    const stream = o.isSidechain ? ((o.agentId as string | undefined) ?? "sidechain") : "main";
    const base: Omit<RawRecord, "kind"> = {
      runtime: "claude-code",
      session_id,
      stream,
      source_path: rel,
      source_offset: at,
      source_line: i + 1,
      adapter: "test-claude-convert",
      adapter_version: "0",
    };
    const uuid = o.uuid as string | undefined;
    if (typeof o.timestamp === "string") base.ts = new Date(o.timestamp).toISOString();
    if (o.parentUuid) base.parent_id = String(o.parentUuid);
    if (o.isSidechain !== undefined) base.is_sidechain = Boolean(o.isSidechain);
    if (typeof o.cwd === "string") base.cwd = o.cwd;
    if (typeof o.gitBranch === "string") base.branch = o.gitBranch;
    const content = msg.content;
    const blocks: Json[] = typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? (content as Json[]) : [];
    const recs: RawRecord[] = [];
    for (const b of blocks) {
      if (b.type === "text" && typeof b.text === "string") recs.push({ ...base, kind: type, role: type, text: b.text });
      else if (b.type === "tool_use") recs.push({ ...base, kind: "tool_call", tool_name: String(b.name), tool_call_id: String(b.id), tool_input: JSON.stringify(b.input ?? {}) });
      else if (b.type === "tool_result") {
        const c = b.content;
        const text = typeof c === "string" ? c : Array.isArray(c) ? (c as Json[]).map((x) => (typeof x.text === "string" ? x.text : "")).join("\n") : "";
        recs.push({ ...base, kind: "tool_result", tool_call_id: String(b.tool_use_id), text, is_error: Boolean(b.is_error) });
      } else if (b.type === "thinking") recs.push({ ...base, kind: "assistant", role: "assistant", vendor_type: "assistant/thinking", text: String(b.thinking ?? "") });
    }
    const usage = type === "assistant" ? usageOf(msg.usage as Json | undefined) : undefined;
    if (recs.length === 0 && usage) recs.push({ ...base, kind: "usage" });
    recs.forEach((r, k) => {
      if (uuid) r.record_id = k === 0 ? uuid : `${uuid}#${k}`;
      if (type === "assistant" && typeof msg.model === "string") r.model = msg.model;
      if (k === 0 && usage) {
        r.usage = usage;
        r.usage_mode = "delta";
        if (msg.id || o.requestId) r.usage_key = `${String(msg.id ?? "")}:${String(o.requestId ?? "")}`;
        if (typeof msg.id === "string") r.message_id = msg.id;
        if (typeof o.requestId === "string") r.request_id = o.requestId;
      }
      out.push(canonicalize(r, []));
    });
  });
  return out;
}

// TEST-ONLY: a minimal Claude Code line converter, standing in for @lake/adapters (not a dependency of this package;
// to be replaced by the adapter once @lake/adapters is a devDependency here). It fills only the fields the index
// carries, the way the adapter does: one record per content part (record ids uuid, uuid#1 …), tool_use → tool_call,
// tool_result → tool_result (child_stream from toolUseResult.agentId), system/<subtype>, queue-operation/<op>,
// progress/<type> with tool_call_id = parentToolUseID (and child_stream for agent_progress), compact summaries → summary.
import { canonicalize, type CanonicalRecord, type RawRecord } from "@lake/events";
import type { Convert, SourceLine } from "@lake/store";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

interface Part {
  kind: RawRecord["kind"];
  vendor_type: string;
  tool_call_id?: string | undefined;
  child_stream?: string | undefined;
  text?: string | undefined;
}

function parts(o: Obj): Part[] {
  const type = str(o.type) ?? "?";
  const m = obj(o.message) ?? {};
  const content = m.content;
  if (type === "assistant") {
    if (!Array.isArray(content)) return [{ kind: "assistant", vendor_type: "assistant" }];
    return content.map((c): Part => {
      const p = obj(c) ?? {};
      const t = str(p.type) ?? "?";
      if (t === "tool_use") return { kind: "tool_call", vendor_type: "assistant/tool_use", tool_call_id: str(p.id) };
      return { kind: "assistant", vendor_type: `assistant/${t}`, text: str(p.text) };
    });
  }
  if (type === "user") {
    const kind = o.isCompactSummary === true ? "summary" : "user";
    const vt = o.isCompactSummary === true ? "user/compact_summary" : o.isMeta === true ? "user/meta" : "user";
    if (!Array.isArray(content)) return [{ kind, vendor_type: vt, text: str(content) }];
    const out: Part[] = [];
    const texts: string[] = [];
    for (const c of content) {
      const p = obj(c) ?? {};
      if (p.type === "tool_result") {
        const agentId = str(obj(o.toolUseResult)?.agentId);
        out.push({ kind: "tool_result", vendor_type: "user/tool_result", tool_call_id: str(p.tool_use_id), child_stream: agentId });
      } else if (typeof p.text === "string") texts.push(p.text);
    }
    if (texts.length) out.unshift({ kind, vendor_type: vt, text: texts.join("\n") });
    return out.length ? out : [{ kind, vendor_type: vt }];
  }
  if (type === "system") return [{ kind: "system", vendor_type: str(o.subtype) ? `system/${String(o.subtype)}` : "system", text: str(o.content) }];
  if (type === "queue-operation") return [{ kind: "meta", vendor_type: `queue-operation/${str(o.operation) ?? "?"}`, text: str(o.content) }];
  if (type === "progress") {
    const d = obj(o.data) ?? {};
    const dt = str(d.type) ?? "?";
    return [{ kind: "meta", vendor_type: `progress/${dt}`, tool_call_id: str(o.parentToolUseID), child_stream: dt === "agent_progress" ? str(d.agentId) : undefined }];
  }
  return [{ kind: "meta", vendor_type: type }];
}

/** TEST-ONLY converter of Claude Code lines to canonical records (index-visible fields only). */
export const claudeTestConvert: Convert = (lines: readonly SourceLine[], ctx) => {
  const out: CanonicalRecord[] = [];
  for (const l of lines) {
    const o = obj(l.value) ?? {};
    const uuid = str(o.uuid);
    parts(o).forEach((p, n) => {
      const raw: RawRecord = {
        runtime: "claude-code",
        session_id: ctx.sessionId,
        stream: ctx.source.stream,
        kind: p.kind,
        vendor_type: p.vendor_type,
        source_path: ctx.source.source,
        source_offset: l.offset,
        source_line: l.line,
        adapter: "chain-test-converter",
        adapter_version: "0",
      };
      if (uuid !== undefined) raw.record_id = n === 0 ? uuid : `${uuid}#${n}`;
      const parent = str(o.parentUuid);
      if (parent !== undefined) raw.parent_id = parent;
      if (p.tool_call_id !== undefined) raw.tool_call_id = p.tool_call_id;
      if (p.child_stream !== undefined) raw.child_stream = p.child_stream;
      if (p.text !== undefined) raw.text = p.text;
      if (typeof o.timestamp === "string") raw.ts = o.timestamp;
      out.push(canonicalize(raw));
    });
  }
  return out;
};

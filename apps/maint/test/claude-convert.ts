// ---- TEST-ONLY Claude Code → canonical records converter (shared by tests and the bench) ----
import { canonicalize, type CanonicalRecord, type RawRecord, type Usage } from "@lake/events";

// A small stand-in for @lake/adapters' Claude Code adapter (same field mapping for what the tests
// use: text, tool calls/results, exit codes, usage with requestId as usage key). Switch to
// @lake/adapters once this app lists it as a devDependency.

type Obj = Record<string, unknown>;
const o = (v: unknown): Obj | undefined => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : undefined);
const s = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const n = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

function contentText(c: unknown): string | undefined {
  if (typeof c === "string") return c;
  if (Array.isArray(c)) {
    const parts = c.map((b) => s(o(b)?.text)).filter((x): x is string => x !== undefined);
    return parts.length ? parts.join("\n") : undefined;
  }
  return undefined;
}

/** Convert a Claude Code JSONL transcript to canonical records (TEST-ONLY). */
export function claudeRecords(text: string, sessionId: string, sourcePath: string): CanonicalRecord[] {
  const out: CanonicalRecord[] = [];
  const lines = text.split("\n");
  let offset = 0;
  lines.forEach((line, idx) => {
    const lineOffset = offset;
    offset += Buffer.byteLength(line) + 1;
    if (line.trim() === "") return;
    const d = JSON.parse(line) as Obj;
    const m = o(d.message);
    const uuid = s(d.uuid) ?? `line${idx + 1}`;
    const base = {
      runtime: "claude-code",
      session_id: sessionId,
      stream: "main",
      parent_id: s(d.parentUuid),
      ts: s(d.timestamp) ?? s(o(d.snapshot)?.timestamp),
      cwd: s(d.cwd),
      branch: s(d.gitBranch),
      is_sidechain: d.isSidechain === true ? true : undefined,
      source_path: sourcePath,
      source_offset: lineOffset,
      source_line: idx + 1,
      adapter: "test-claude",
      adapter_version: "0",
    };
    let k = 0;
    const add = (r: { [K in keyof RawRecord]?: RawRecord[K] | undefined } & { kind: RawRecord["kind"] }) => {
      const raw = { ...base, record_id: k === 0 ? uuid : `${uuid}:${k}`, ...r } as Obj;
      k++;
      for (const key of Object.keys(raw)) if (raw[key] === undefined) delete raw[key];
      out.push(canonicalize(raw as unknown as RawRecord, []));
    };
    const type = s(d.type);
    if (type === "assistant" && m) {
      const u = o(m.usage);
      let usage: Usage | undefined;
      if (u) {
        const x: Record<string, number> = {};
        const pairs = [["input_tokens", u.input_tokens], ["cached_input_tokens", u.cache_read_input_tokens], ["cache_write_tokens", u.cache_creation_input_tokens], ["output_tokens", u.output_tokens]] as const;
        for (const [key, v] of pairs) if (n(v) !== undefined) x[key] = n(v)!;
        usage = x as Usage;
      }
      let first = true;
      const uf = () => {
        if (!first || !usage) return {};
        first = false;
        return { usage, usage_mode: "delta" as const, usage_key: s(d.requestId) ?? s(m.id) };
      };
      const shared = { role: "assistant", model: s(m.model), message_id: s(m.id), request_id: s(d.requestId) };
      for (const b of Array.isArray(m.content) ? m.content : []) {
        const c = o(b);
        if (!c) continue;
        if (c.type === "tool_use") add({ ...shared, ...uf(), kind: "tool_call", vendor_type: "assistant/tool_use", tool_name: s(c.name), tool_call_id: s(c.id), tool_input: JSON.stringify(c.input) });
        else if (c.type === "text") add({ ...shared, ...uf(), kind: "assistant", vendor_type: "assistant/text", text: s(c.text) });
        else add({ ...shared, ...uf(), kind: "assistant", vendor_type: `assistant/${String(c.type)}`, text: s(c.thinking) });
      }
      if (first && usage) add({ ...shared, ...uf(), kind: "assistant", vendor_type: "assistant" });
    } else if (type === "user" && m) {
      if (!Array.isArray(m.content)) {
        add({ kind: "user", vendor_type: "user", role: "user", text: s(m.content) });
        return;
      }
      const tur = o(d.toolUseResult);
      for (const b of m.content) {
        const c = o(b);
        if (!c) continue;
        if (c.type === "tool_result") {
          const ec = n(tur?.exitCode ?? tur?.exit_code);
          add({ kind: "tool_result", vendor_type: "user/tool_result", role: "user", tool_call_id: s(c.tool_use_id), text: contentText(c.content), is_error: c.is_error === true ? true : undefined, exit_code: ec });
        } else add({ kind: "user", vendor_type: "user", role: "user", text: contentText([c]) });
      }
    } else {
      // progress, system, snapshots, queue operations: envelopes without content (content_hash "").
      add({ kind: "meta", vendor_type: type ?? "unknown" });
    }
  });
  return out;
}


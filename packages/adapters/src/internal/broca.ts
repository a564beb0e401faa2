// broca: WALs through @lake/wal. One session per address; live-first resolution (a live WAL in
// wal/, wal-durable/ or wal-ephemeral/ wins over an archived member); usage from
// model_step_finished (already in broca's meaning). WALs are framed, not lines: the collector reads
// them with `parseWal` (records after a sequence number), not `parseLines`.
import { readFile } from "node:fs/promises";
import type { RawRecord } from "@lake/events";
import { decodeWal, readArchiveMember, type WalRecordEntry, type WalSkippedEntry } from "@lake/wal";
import { brocaDiscoverer, defaultBrocaRoot } from "./broca-discover.js";

export { defaultBrocaRoot };
import { LineRecords, attrsText, contentText, count, isoTs, jsonText, obj, str, usageOf, type Obj } from "./build.js";
import { AdaptersError } from "./errors.js";
import type { Adapter, SourceRef } from "./types.js";

const ADAPTER = { name: "broca", version: "1.0.0" };

/**
 * Cross-record state of a broca WAL: the run context later records need (from run_started). Plain
 * JSON: the collector carries it in the source's cursor, so a pass decodes only the new frames.
 */
export interface BrocaState {
  model?: string;
  run_id?: string;
}

/** Records of a WAL's bytes; only records with seq > `afterSeq` (default 0) are returned. */
export function parseWal(source: SourceRef, bytes: Uint8Array, options: { afterSeq?: number } = {}): RawRecord[] {
  let decoded;
  try {
    decoded = decodeWal(bytes, { file: source.path });
  } catch (e) {
    throw new AdaptersError("InvalidSource", `${source.path}: ${(e as Error).message}`, { data: { path: source.path }, cause: e });
  }
  const entries = [...decoded.records, ...decoded.skipped].sort((a, b) => a.seq - b.seq);
  const state: BrocaState = {};
  const after = options.afterSeq ?? 0;
  return brocaRecords(source, entries, state, after);
}

/**
 * Records of decoded WAL entries (records and skipped records, in sequence order), as
 * `@lake/wal`'s decoder or its incremental scanner yields them. `state` is updated in place;
 * entries with seq ≤ `afterSeq` only update it.
 */
export function brocaRecords(source: SourceRef, entries: Iterable<WalRecordEntry | WalSkippedEntry>, state: BrocaState, afterSeq = 0): RawRecord[] {
  const out: RawRecord[] = [];
  for (const entry of entries) {
    const e = entry.kind === "skipped" ? { ...entry, record: { type: entry.type } as unknown as WalRecordEntry["record"], skippedType: entry.type as string | undefined } : { ...entry, skippedType: undefined as string | undefined };
    const rec = e.record as unknown as Obj;
    const type = str(rec.type) ?? "?";
    if (type === "run_started") {
      const m = str(obj(obj(rec.config)?.model)?.model_id);
      const r = str(rec.run_id);
      if (m === undefined) delete state.model;
      else state.model = m;
      if (r === undefined) delete state.run_id;
      else state.run_id = r;
    }
    const model = state.model;
    const runId = state.run_id;
    if (e.seq <= afterSeq) continue;
    const b = new LineRecords(source, { bytes: "", offset: e.offset, line: e.seq }, ADAPTER, `wal-${e.seq}`);
    const common = { ts: isoTs(rec.ts_ms), model, vendor_type: type };
    const attrs = (x: Obj = {}) => attrsText({ run_id: runId, gated: e.gated || undefined, requires: e.requires.length ? e.requires : undefined, skipped: e.skippedType ? true : undefined, ...x });
    switch (type) {
      case "run_started": {
        const session = obj(rec.session);
        b.add({ ...common, kind: "meta", cwd: str(session?.project_root), attrs: attrs({ title: str(rec.title), origin: str(obj(rec.origin)?.kind), harness: str(session?.harness), session: str(session?.session), provider: str(obj(obj(rec.config)?.model)?.provider_module_id) }) });
        const text = contentText(rec.input) ?? (Array.isArray(rec.input) ? rec.input.map((m) => contentText(obj(m)?.content) ?? "").filter((s) => s).join("\n") : undefined);
        if (text) b.add({ ...common, kind: "user", role: "user", text });
        break;
      }
      case "model_step_finished": {
        const u = obj(rec.usage);
        const usage = u ? usageOf({ input_tokens: count(u.input_tokens), cached_input_tokens: count(u.cached_input_tokens), cache_write_tokens: count(u.cache_write_tokens), output_tokens: count(u.output_tokens), reasoning_tokens: count(u.reasoning_tokens) }) : undefined;
        const msg = obj(rec.assistant_message);
        b.add({ ...common, kind: "assistant", role: "assistant", text: contentText(msg?.content) ?? str(msg?.text), usage, usage_mode: usage ? "delta" : undefined, attrs: attrs({ step_id: rec.step_id, finish_reason: str(rec.finish_reason) }) });
        break;
      }
      case "tool_dispatch_intent":
        b.add({ ...common, kind: "tool_call", tool_name: str(rec.tool_name), tool_call_id: str(rec.tool_call_id), tool_input: jsonText(rec.args), attrs: attrs({ batch_id: str(rec.batch_id) }) });
        break;
      case "tool_result": {
        const r = obj(rec.result);
        b.add({ ...common, kind: "tool_result", tool_call_id: str(r?.tool_call_id) ?? str(rec.tool_call_id), text: typeof rec.result === "string" ? rec.result : contentText(r?.content) ?? jsonText(rec.result), is_error: str(rec.outcome) === undefined ? undefined : str(rec.outcome) !== "ok" && str(rec.outcome) !== "success", attrs: attrs({ outcome: str(rec.outcome), batch_id: str(rec.batch_id) }) });
        break;
      }
      case "run_finished":
      case "run_paused":
        // run_finished carries the run's summed usage: kept in attrs only (model_step_finished counts).
        b.add({ ...common, kind: "meta", is_error: rec.error ? true : undefined, attrs: attrs({ reason: str(rec.reason), run_usage: rec.usage, error: rec.error }) });
        break;
      default:
        b.add({ ...common, kind: "meta", attrs: attrs() });
    }
    out.push(...b.out);
  }
  return out;
}

/** The broca adapter. A live source is `<root>/<live dir>/<addr>.wal`; an archived one is `<container>#<addr>`. */
export const brocaAdapter: Adapter & { parseWal: typeof parseWal } = {
  runtime: "broca",
  name: ADAPTER.name,
  version: ADAPTER.version,
  parseWal,
  defaultRoots: brocaDiscoverer.defaultRoots,
  discover: brocaDiscoverer.discover,
  describe: brocaDiscoverer.describe,
  initialState: () => ({}),
  parseLines(source) {
    throw new AdaptersError("InvalidSource", `${source.path}: a WAL is framed, not line-based: read it with parseWal`, { data: { path: source.path } });
  },
  parseSnapshot(source, content) {
    return parseWal(source, typeof content === "string" ? Buffer.from(content) : content);
  },
};

/** Read one broca source whole (a live WAL file or an archived member, live-first already applied by discovery). */
export async function readBrocaSource(source: SourceRef): Promise<Uint8Array> {
  const hash = source.rel.lastIndexOf("#");
  if (hash >= 0) return readArchiveMember(source.path, source.rel.slice(hash + 1));
  return readFile(source.path);
}

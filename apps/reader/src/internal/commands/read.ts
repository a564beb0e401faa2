// sessions, show, sql.
import { ReaderError } from "../errors.js";
import { COMMON_HELP, COMMON_OPTIONS, locations, usageError, withReadModel, type Io } from "../context.js";
import { cellText, clip, fmtInt, renderTable, toCsv, toJson } from "../format.js";
import { sqlString, type ReadModel } from "../readmodel.js";
import { parse } from "./parse.js";

const EXITS = "Exit codes: 0 ok, 2 bad arguments, 3 malformed store data, 5 not found, 6 store unreadable, 7 query failed.";

export const SESSIONS_HELP = `lake-reader sessions [options]

One row per session of the fleet store (the \`sessions\` view), oldest activity first.

Options:
  --json         print a JSON array of rows (the sessions view's columns)
${COMMON_HELP}

${EXITS}`;

/** `lake-reader sessions`. */
export async function sessionsCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parse(argv, { ...COMMON_OPTIONS, json: { type: "boolean" } } as const);
  if (values.help) return help(io, SESSIONS_HELP);
  if (positionals.length) throw usageError(`sessions: unexpected argument ${JSON.stringify(positionals[0])}`);
  const { rows } = await withReadModel(locations(values, io.env), (rm) => rm.query("SELECT * FROM sessions ORDER BY last_ts NULLS FIRST, session_id"));
  if (values.json) {
    io.out(toJson(rows) + "\n");
    return 0;
  }
  const table = rows.map((r) => [
    String(r.session_id),
    String(r.runtime),
    String(r.agent),
    r.first_ts instanceof Date ? r.first_ts.toISOString().slice(0, 16).replace("T", " ") : "-",
    r.duration_s === null ? "-" : fmtDuration(Number(r.duration_s)),
    fmtInt(r.user_turns as number),
    fmtInt(r.tool_calls as number),
    ((r.models as string[] | null) ?? []).join(", "),
    r.sealed ? "yes" : "no",
  ]);
  io.out(renderTable(["Session", "Runtime", "Agent", "Started (UTC)", "Duration", "Turns", "Tools", "Models", "Sealed"], table, [false, false, false, false, true, true, true, false, false]) + `\n${rows.length} session(s)\n`);
  return 0;
}

function fmtDuration(s: number): string {
  if (s < 60) return `${Math.round(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

export const SHOW_HELP = `lake-reader show SESSION [options]

The conversation of one session (a unique prefix of its id is enough), from the fleet's events:
turns in order, each tool call beside its result, child agents nested under the call that launched
them, masked text shown as its masks with the rules that fired.

Options:
  --json         print the conversation as JSON (documented in the README)
  --full         do not shorten long texts
${COMMON_HELP}

${EXITS}`;

/** One item of a shown conversation. */
export interface ShowItem {
  kind: string;
  ts: string | null;
  stream: string;
  model?: string;
  text?: string;
  redaction_rules?: string[];
  tool?: {
    name: string | null;
    call_id: string | null;
    input: string | null;
    result: { text: string | null; is_error: boolean | null; exit_code: number | null; redaction_rules?: string[] } | null;
    child?: { stream: string; items: ShowItem[] };
  };
}

/** `lake-reader show`. */
export async function showCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parse(argv, { ...COMMON_OPTIONS, json: { type: "boolean" }, full: { type: "boolean" } });
  if (values.help) return help(io, SHOW_HELP);
  const want = positionals[0];
  if (want === undefined || positionals.length > 1) throw usageError("show: expected exactly one SESSION");
  const loc = locations(values, io.env);
  const conv = await withReadModel(loc, (rm) => conversation(rm, want));
  if (values.json) {
    io.out(toJson(conv) + "\n");
    return 0;
  }
  const n = values.full ? Infinity : 400;
  const lines: string[] = [`session ${conv.session_id} (${conv.runtime}, agent ${conv.agent}) — from ${conv.source}`, `${conv.first_ts ?? "?"} → ${conv.last_ts ?? "?"}`, ""];
  const render = (items: ShowItem[], indent: string) => {
    for (const it of items) {
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
      const who = it.kind === "user" ? "user" : it.kind === "assistant" ? `assistant${it.model ? ` (${it.model})` : ""}` : it.kind;
      lines.push(`${indent}${t} ${who}: ${clip(it.text ?? "", n)}${masks}`);
    }
  };
  render(conv.items, "");
  for (const o of conv.other_streams) {
    lines.push("", `agent ${o.stream} (not attached to a call)`);
    render(o.items, "  ");
  }
  io.out(lines.join("\n") + "\n");
  return 0;
}

/** A session's conversation (the JSON `show --json` prints). */
export interface Conversation {
  session_id: string;
  runtime: string;
  agent: string;
  source: "events";
  first_ts: string | null;
  last_ts: string | null;
  items: ShowItem[];
  other_streams: { stream: string; items: ShowItem[] }[];
}

const iso = (v: unknown): string | null => (v instanceof Date ? v.toISOString() : v === null || v === undefined ? null : String(v));

/** Build the conversation of a session from the `events` view. */
export async function conversation(rm: ReadModel, want: string): Promise<Conversation> {
  const ids = await rm.query(`SELECT DISTINCT session_id FROM events WHERE session_id = ${sqlString(want)} OR starts_with(session_id, ${sqlString(want)}) ORDER BY 1`);
  const exact = ids.rows.find((r) => r.session_id === want);
  if (!exact && ids.rows.length === 0) throw new ReaderError("NotFound", `${rm.files.storeUrl}: no session ${JSON.stringify(want)}`, { data: { file: rm.files.storeUrl } });
  if (!exact && ids.rows.length > 1) {
    throw new ReaderError("Usage", `show: ${JSON.stringify(want)} matches ${ids.rows.length} sessions (${ids.rows.slice(0, 3).map((r) => String(r.session_id)).join(", ")}…)`);
  }
  const sid = String((exact ?? ids.rows[0]!).session_id);
  const { rows } = await rm.query(`
    SELECT * FROM events WHERE session_id = ${sqlString(sid)} AND NOT coalesce(replayed, false)
    ORDER BY ts NULLS LAST, source_path, source_line NULLS LAST, file_row`);
  const results = new Map<string, Record<string, unknown>>();
  for (const r of rows) if (r.kind === "tool_result" && r.tool_call_id) results.set(String(r.tool_call_id), r);
  const byStream = new Map<string, Record<string, unknown>[]>();
  for (const r of rows) {
    const s = String(r.stream);
    let l = byStream.get(s);
    if (!l) byStream.set(s, (l = []));
    l.push(r);
  }
  const attached = new Set<string>(["main"]);
  const rules = (r: Record<string, unknown>) => {
    const x = (r.redaction_rules as string[] | null) ?? [];
    return x.length ? { redaction_rules: x } : {};
  };
  const build = (stream: string, depth: number): ShowItem[] => {
    const out: ShowItem[] = [];
    const usedResults = new Set<string>();
    for (const r of byStream.get(stream) ?? []) {
      const kind = String(r.kind);
      if (kind === "tool_call") {
        const callId = r.tool_call_id === null ? null : String(r.tool_call_id);
        const res = callId ? results.get(callId) : undefined;
        if (callId && res) usedResults.add(callId);
        const item: ShowItem = {
          kind,
          ts: iso(r.ts),
          stream,
          ...rules(r),
          tool: {
            name: r.tool_name === null ? null : String(r.tool_name),
            call_id: callId,
            input: r.tool_input === null ? null : String(r.tool_input),
            result: res
              ? { text: (res.text ?? res.raw ?? null) as string | null, is_error: (res.is_error ?? null) as boolean | null, exit_code: (res.exit_code ?? null) as number | null, ...rules(res) }
              : null,
          },
        };
        const child = r.child_stream === null ? undefined : String(r.child_stream);
        if (child && byStream.has(child) && !attached.has(child) && depth < 16) {
          attached.add(child);
          item.tool!.child = { stream: child, items: build(child, depth + 1) };
        }
        out.push(item);
        continue;
      }
      if (kind === "tool_result") {
        const callId = r.tool_call_id === null ? null : String(r.tool_call_id);
        if (callId && rows.some((c) => c.kind === "tool_call" && c.tool_call_id === callId)) continue; // shown beside its call
        out.push({ kind, ts: iso(r.ts), stream, text: String(r.text ?? ""), ...rules(r) });
        continue;
      }
      if (kind === "usage" || kind === "meta") continue;
      const text = (r.text ?? r.raw ?? null) as string | null;
      if (text === null || text === "") continue;
      const item: ShowItem = { kind, ts: iso(r.ts), stream, text, ...rules(r) };
      if (r.model !== null && r.model !== undefined) item.model = String(r.model);
      out.push(item);
    }
    return out;
  };
  const items = build("main", 0);
  const other_streams = [...byStream.keys()].filter((s) => !attached.has(s)).sort().map((s) => ({ stream: s, items: build(s, 1) }));
  const head = rows[0] ?? {};
  const tss = rows.map((r) => iso(r.ts)).filter((t): t is string => t !== null).sort();
  return {
    session_id: sid,
    runtime: String(head.runtime ?? ""),
    agent: String(head.agent ?? ""),
    source: "events",
    first_ts: tss[0] ?? null,
    last_ts: tss[tss.length - 1] ?? null,
    items,
    other_streams,
  };
}

export const SQL_HELP = `lake-reader sql "SELECT …" [options]

Run SQL against the read model (DuckDB). Views: events, sessions, interrupted_sessions, tools_daily,
tokens_daily, usage_counted, hook_decisions, blocks_by_hook, labels (columns in the README).

Options:
  --json         print a JSON array of row objects
  --csv          print CSV with a header line
${COMMON_HELP}

${EXITS}`;

/** `lake-reader sql`. */
export async function sqlCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parse(argv, { ...COMMON_OPTIONS, json: { type: "boolean" }, csv: { type: "boolean" } });
  if (values.help) return help(io, SQL_HELP);
  if (positionals.length !== 1) throw usageError('sql: expected exactly one query argument (quote it: sql "SELECT …")');
  if (values.json && values.csv) throw usageError("sql: --json and --csv exclude each other");
  const res = await withReadModel(locations(values, io.env), (rm) => rm.query(positionals[0]!));
  if (values.json) io.out(toJson(res.rows) + "\n");
  else if (values.csv) io.out(toCsv(res.columns, res.rows));
  else io.out(renderTable(res.columns, res.rows.map((r) => res.columns.map((c) => clip(cellText(r[c]), 80)))) + `\n${res.rows.length} row(s)\n`);
  return 0;
}

/** Print a help text. */
export function help(io: Io, text: string): number {
  io.out(text + "\n");
  return 0;
}

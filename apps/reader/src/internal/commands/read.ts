// sessions, show, sql.
import { ReaderError } from "../errors.js";
import { choice, flag, type RunContext } from "@lake/cli";
import { COMMON, fleetFiles, keptAnswer, locations, useReadModel, usageError, withReadModel, type Io, type Locations } from "../context.js";
import { cellText, clip, fmtDuration, fmtInt, renderTable, shortModel, strWidth, terminalOf, toCsv, toJson } from "../format.js";
import type { ReadModel } from "../readmodel.js";
import { sqlString } from "../sqltext.js";
import { callItem, chainConversation, localSession, pickSession, plainItem, renderConversation, type SessionMatch, type ShowConversation, type ShowItem } from "../show.js";
import { readerCommand } from "./parse.js";

const SESSIONS_OPTIONS = { ...COMMON, json: flag("print a JSON array of rows (the sessions view's columns)") } as const;

async function sessions({ values, io }: RunContext<typeof SESSIONS_OPTIONS, Io>): Promise<number> {
  const rows = await sessionRows(locations(values, io.env, io.damaged));
  if (values.json) {
    io.out(toJson(rows) + "\n");
    return 0;
  }
  const when = (v: unknown) => (v instanceof Date ? v.toISOString().slice(0, 16).replace("T", " ") : "-");
  const table = rows.map((r) => [
    String(r.session_id),
    String(r.runtime),
    String(r.agent),
    r.project === null || r.project === undefined ? "-" : String(r.project),
    when(r.first_ts),
    when(r.last_ts),
    r.duration_s === null ? "-" : fmtDuration(Number(r.duration_s)),
    fmtInt(r.user_turns as number),
    fmtInt(r.tool_calls as number),
    ((r.models as string[] | null) ?? []).join(", "),
    r.sealed ? "yes" : "no",
  ]);
  const head = ["Session", "Runtime", "Agent", "Project", "Started (UTC)", "Last activity (UTC)", "Duration", "Turns", "Tools", "Models", "Sealed"];
  const t = terminalOf(io.env, io.stdout ?? {});
  // On a narrow terminal the ids, agent, project and models are clipped (the project at its start:
  // a path's end says most); if that is not enough, Agent, Started, Duration, Tools and Sealed are left out
  // and models are named short.
  const render = (keep: (h: string) => boolean, short: boolean) => {
    const cols = head.map((h, i) => [h, i] as const).filter(([h]) => keep(h));
    const rowsOf = table.map((r) => cols.map(([h, i]) => (short && h === "Models" ? r[i]!.split(", ").map(shortModel).join(", ") : r[i]!)));
    const floors: Record<string, number> = { Session: 8, Runtime: 6, Agent: 6, Project: 10, Models: 8 };
    const shrink = new Map(cols.flatMap(([h], j) => (floors[h] ? [[j, floors[h]] as const] : [])));
    return renderTable(cols.map(([h]) => h), rowsOf, cols.map(([h]) => h === "Duration" || h === "Turns" || h === "Tools"), undefined, { terminal: t, shrink, clipStart: new Set([cols.findIndex(([h]) => h === "Project")]) });
  };
  let out = render(() => true, false);
  if (t.columns !== undefined && strWidth(out.slice(0, out.indexOf("\n"))) > t.columns) out = render((h) => !["Agent", "Started (UTC)", "Duration", "Tools", "Sealed"].includes(h), true);
  io.out(out + `\n${rows.length} session(s)\n`);
  return 0;
}

/** `lake-reader sessions`. */
export const sessionsCommand = readerCommand({
  description: `One row per session of the fleet store (the \`sessions\` view), oldest activity first: its runtime,
agent, project (the repo, else the working directory), first and last activity, turns, tool calls,
models. The table fits the terminal ($COLUMNS, else the TTY's width): long text is clipped with ….`,
  options: SESSIONS_OPTIONS,
  run: sessions,
});

/** The rows `sessions --json` prints: the sessions view, oldest activity first. */
export async function sessionRows(loc: Locations): Promise<Record<string, unknown>[]> {
  const files = await fleetFiles(loc);
  return keptAnswer(loc, files, "sessions", async () => (await useReadModel(loc, files, (rm) => rm.query("SELECT * FROM sessions ORDER BY last_ts NULLS FIRST, session_id"))).rows);
}

const SHOW_OPTIONS = {
  ...COMMON,
  from: choice("SRC", ["chain", "events"], "where the conversation comes from (default: chain when the local root\nhas one for the session, else events)"),
  json: flag("print the conversation as JSON (documented in the README)"),
  full: flag("do not shorten long texts; thinking blocks expanded"),
} as const;

async function show({ values, positionals, io }: RunContext<typeof SHOW_OPTIONS, Io>): Promise<number> {
  const want = positionals[0];
  if (want === undefined || positionals.length > 1) throw usageError("show: expected exactly one SESSION");
  const conv = await showConversation(locations(values, io.env, io.damaged), want, values.from);
  io.out(values.json ? toJson(conv) + "\n" : renderConversation(conv, values.full));
  return 0;
}

/** `lake-reader show`. */
export const showCommand = readerCommand({
  usage: "SESSION [options]",
  description: `The conversation of one session (a unique prefix of its id is enough): from the round chain's fold
when the local root (--root) has a chain for the session — record text read from its landed files —
else from the fleet's events. Turns in order, each tool call beside its result, child agents nested
under the call that launched them, masked text shown as its masks with the rules that fired, and
(chain) compactions, steering messages and records of landed files that are gone. The header says
which source it came from. A prefix that matches several sessions is a usage error listing them.`,
  options: SHOW_OPTIONS,
  positionals: { names: "SESSION", min: 0, max: Number.MAX_SAFE_INTEGER },
  run: show,
});

/** The conversation `show SESSION --json` prints: from the chain (unless `from` is "events"), else from events. */
export async function showConversation(loc: Locations, want: string, from?: "chain" | "events" | undefined): Promise<ShowConversation> {
  let conv: ShowConversation | undefined;
  if (from !== "events") {
    conv = await chainConversation(loc.root, want, loc.memo);
    if (!conv && from === "chain") {
      throw new ReaderError("NotFound", `${loc.root}: no round chain for session ${JSON.stringify(want)}`, { data: { file: loc.root } });
    }
  }
  if (conv) return conv;
  // From events: the same fleet state folds to the same conversation (kept among the last few
  // conversations, not with the fleet's answers: one can be large).
  const files = await fleetFiles(loc);
  const build = () => useReadModel(loc, files, (rm) => conversation(rm, want));
  return loc.memo ? loc.memo.get(`events\0${files.fingerprint}\0${want}`, build) : build();
}

/**
 * The session a SESSION argument names, as show resolves it: in the local root (session
 * directories and chains), else among the fleet's events (a store that is not there has none);
 * undefined when neither has it. An ambiguous prefix is a Usage error listing the matches.
 */
export async function resolveSession(loc: Locations, want: string): Promise<SessionMatch | undefined> {
  const local = await localSession(loc.root, want);
  if (local) return local;
  try {
    return await withReadModel(loc, async (rm) => {
      const ids = await rm.query(`SELECT DISTINCT session_id FROM events WHERE starts_with(session_id, ${sqlString(want)}) ORDER BY 1`);
      const sid = await pickSession(ids.rows.map((r) => String(r.session_id)), want, `the fleet store ${rm.files.storeUrl}`, (m) => fleetMatches(rm, m));
      return sid === undefined ? undefined : (await fleetMatches(rm, [sid]))[0];
    });
  } catch (e) {
    if (e instanceof ReaderError && e.code === "NotFound") return undefined;
    throw e;
  }
}

/** Runtime and first/last record time of fleet sessions (the ambiguity error of a SESSION prefix). */
export async function fleetMatches(rm: ReadModel, ids: readonly string[]): Promise<SessionMatch[]> {
  const { rows } = await rm.query(`
    SELECT session_id, min(runtime) AS runtime, min(ts) AS first_ts, max(ts) AS last_ts FROM events
    WHERE session_id IN (${ids.map(sqlString).join(", ")}) GROUP BY session_id ORDER BY session_id`);
  const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : v === null || v === undefined ? null : String(v));
  return rows.map((r) => ({ id: String(r.session_id), runtime: r.runtime === null ? null : String(r.runtime), first_ts: iso(r.first_ts), last_ts: iso(r.last_ts) }));
}

/** Build the conversation of a session from the \`events\` view. */
export async function conversation(rm: ReadModel, want: string): Promise<ShowConversation> {
  const ids = await rm.query(`SELECT DISTINCT session_id FROM events WHERE session_id = ${sqlString(want)} OR starts_with(session_id, ${sqlString(want)}) ORDER BY 1`);
  const sid = await pickSession(ids.rows.map((r) => String(r.session_id)), want, `the fleet store ${rm.files.storeUrl}`, (m) => fleetMatches(rm, m));
  if (sid === undefined) throw new ReaderError("NotFound", `${rm.files.storeUrl}: no session ${JSON.stringify(want)}`, { data: { file: rm.files.storeUrl } });
  const { rows } = await rm.query(`
    SELECT * FROM events WHERE session_id = ${sqlString(sid)} AND NOT coalesce(replayed, false)
    ORDER BY ts NULLS LAST, source_path, source_line NULLS LAST, file_row`);
  const results = new Map<string, Record<string, unknown>>();
  const calls = new Set<string>();
  // A child launch may be named on the call, its result or its progress rows (all carry the call id).
  const launched = new Map<string, string>();
  for (const r of rows) {
    if (r.kind === "tool_result" && r.tool_call_id && !results.has(String(r.tool_call_id))) results.set(String(r.tool_call_id), r);
    if (r.kind === "tool_call" && r.tool_call_id) calls.add(String(r.tool_call_id));
    if (r.child_stream && r.tool_call_id && !launched.has(String(r.tool_call_id))) launched.set(String(r.tool_call_id), String(r.child_stream));
  }
  const byStream = new Map<string, Record<string, unknown>[]>();
  for (const r of rows) {
    const s = String(r.stream);
    let l = byStream.get(s);
    if (!l) byStream.set(s, (l = []));
    l.push(r);
  }
  const attached = new Set<string>(["main"]);
  const build = (stream: string, depth: number): ShowItem[] => {
    const out: ShowItem[] = [];
    let turn = -1;
    for (const r of byStream.get(stream) ?? []) {
      // A stream's first record opens turn 0; each user record after it opens the next.
      if (turn < 0 || r.kind === "user") turn++;
      const kind = String(r.kind);
      if (kind === "tool_call") {
        const callId = r.tool_call_id === null ? null : String(r.tool_call_id);
        const item = callItem(r, stream, turn, callId, callId ? results.get(callId) : undefined);
        const child = r.child_stream ? String(r.child_stream) : callId ? launched.get(callId) : undefined;
        if (child && byStream.has(child) && !attached.has(child) && depth < 16) {
          attached.add(child);
          item.tool!.child = { stream: child, items: build(child, depth + 1) };
        }
        out.push(item);
        continue;
      }
      if (kind === "tool_result" && r.tool_call_id !== null && calls.has(String(r.tool_call_id))) continue; // shown beside its call
      const item = plainItem(r, stream, turn);
      if (item) out.push(item);
    }
    return out;
  };
  const items = build("main", 0);
  const other_streams = [...byStream.keys()].filter((s) => !attached.has(s)).sort().map((s) => ({ stream: s, items: build(s, 1) }));
  const head = rows[0] ?? {};
  const tss = rows.map((r) => (r.ts instanceof Date ? r.ts.toISOString() : null)).filter((t): t is string => t !== null).sort();
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

const SQL_OPTIONS = { ...COMMON, json: flag("print a JSON array of row objects"), csv: flag("print CSV with a header line") } as const;

async function sql({ values, positionals, io }: RunContext<typeof SQL_OPTIONS, Io>): Promise<number> {
  if (positionals.length !== 1) throw usageError('sql: expected exactly one query argument (quote it: sql "SELECT …")');
  if (values.json && values.csv) throw usageError("sql: --json and --csv exclude each other");
  const res = await withReadModel(locations(values, io.env, io.damaged), (rm) => rm.query(positionals[0]!));
  if (values.json) io.out(toJson(res.rows) + "\n");
  else if (values.csv) io.out(toCsv(res.columns, res.rows));
  else io.out(renderTable(res.columns, res.rows.map((r) => res.columns.map((c) => clip(cellText(r[c]), 80)))) + `\n${res.rows.length} row(s)\n`);
  return 0;
}

/** `lake-reader sql`. */
export const sqlCommand = readerCommand({
  usage: '"SELECT …" [options]',
  description: `Run SQL against the read model (DuckDB). Views: events, sessions, interrupted_sessions, tools_daily,
tokens_daily, usage_counted, hook_decisions, blocks_by_hook, labels (columns in the README).`,
  options: SQL_OPTIONS,
  positionals: { names: "QUERY", min: 0, max: Number.MAX_SAFE_INTEGER },
  run: sql,
});

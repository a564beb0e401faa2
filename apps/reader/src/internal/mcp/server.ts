// `lake-reader mcp`: a Model Context Protocol server over the same fleet as the other commands.
// Read tools answer with the CLI's --json shapes, one bounded page at a time; the coordination
// tools write only what an agent may write (its claim proposals, its roster heartbeat and intents,
// leases with fencing epochs) through @lake/layout. What a tool needs (DuckDB, SQLite, the round
// chain) loads when it first runs, so the server answers `initialize` without loading them.
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Locations } from "../context.js";
import { EXIT, ReaderError, describeError } from "../errors.js";
import { toJson } from "../format.js";
import { firstLine } from "../sqltext.js";
import { BY_KEYS, USAGE_REPORTS, usageJson, usageReport } from "../commands/usage.js";
import type { ShowConversation, ShowItem } from "../show.js";
import { DEFAULT_MAX_BYTES, MAX_MAX_BYTES, MIN_MAX_BYTES, decodeCursor, encodeCursor, jsonBytes, peekOffset, questionHash, stateOf, takePage, type Bounds } from "./page.js";
import { Coordination, type Refusal } from "./coord.js";

const read = () => import("../commands/read.js");
const search = () => import("../commands/search.js");
const sql = () => import("./sql.js");

/** What the server needs: the fleet's locations and who is asking. */
export interface McpOptions {
  readonly loc: Locations;
  /** This agent's id: the `agent` of its claims, roster heartbeat and intents, the default lease owner. */
  readonly agent: string;
  /** The server's version (package.json). */
  readonly version: string;
  /** The environment (defaults the CLI resolves from it). */
  readonly env: NodeJS.ProcessEnv;
}

/** A tool's answer: a JSON object, or a refusal (an error that still carries the answer). */
type Answer = Record<string, unknown> | Refusal;

const paging = {
  cursor: z.string().max(512).optional().describe("next_cursor of the previous page; omit for the first page"),
  max_bytes: z.number().int().min(MIN_MAX_BYTES).max(MAX_MAX_BYTES).optional().describe(`bound on the answer's JSON size in bytes (default ${DEFAULT_MAX_BYTES})`),
};
const limitOf = (def: number, max: number) => z.number().int().min(1).max(max).optional().describe(`rows per page (default ${def}, at most ${max})`);
const day = z.string().max(10).optional();

/** The plain JSON of an answer (Dates as ISO strings, BigInts as numbers when safe): what the CLI's --json prints. */
function plain(v: unknown): Record<string, unknown> {
  return JSON.parse(toJson(v, 0)) as Record<string, unknown>;
}

function ok(v: Record<string, unknown>): CallToolResult {
  const p = plain(v);
  return { content: [{ type: "text", text: JSON.stringify(p) }], structuredContent: p };
}

/** An error as the CLI prints it: `lake-reader <tool>: <message>`, with its code and exit code. */
export function toolError(tool: string, e: unknown, value?: Record<string, unknown>): CallToolResult {
  const d = describeError(e);
  const line = `lake-reader ${tool}: ${firstLine(d.message)}`;
  // The error's own code (a ReaderError's, or the lake package's: `NotFound`, `HashMismatch` …); a bug is `Internal`.
  const own = (e as { code?: unknown } | null)?.code;
  const code = d.code !== EXIT.internal && typeof own === "string" ? own : "Internal";
  const error = { code, exit_code: d.code, message: line };
  return { isError: true, content: [{ type: "text", text: line }], structuredContent: plain({ ...(value ?? {}), error }) };
}

function bounds(args: { limit?: number | undefined; max_bytes?: number | undefined }, defLimit: number): Bounds {
  return { limit: args.limit ?? defLimit, maxBytes: args.max_bytes ?? DEFAULT_MAX_BYTES };
}

/** The byte budget left for a page's rows once the rest of the answer (and a cursor) is counted. */
function rowBudget(b: Bounds, rest: unknown): Bounds {
  return { limit: b.limit, maxBytes: Math.max(256, b.maxBytes - jsonBytes(rest) - 160) };
}

/**
 * Page several lists with one cursor: each list from the same offset, at most `limit` rows each,
 * the byte budget shared evenly. Every list is cut to the rows of the one that stopped first, so the
 * next page starts at one offset for all and no row is given twice.
 */
function pageLists<K extends string>(lists: Record<K, readonly unknown[]>, offset: number, b: Bounds): { page: Record<K, unknown[]>; next: number | undefined; clipped: boolean } {
  const keys = Object.keys(lists) as K[];
  const share: Bounds = { limit: b.limit, maxBytes: Math.max(128, Math.floor(b.maxBytes / keys.length)) };
  const pages = keys.map((k) => takePage(lists[k], offset, share));
  const stopped = pages.filter((p) => p.next !== undefined).map((p) => p.rows.length);
  const n = stopped.length ? Math.min(...stopped) : Infinity;
  const page = {} as Record<K, unknown[]>;
  keys.forEach((k, i) => (page[k] = pages[i]!.rows.slice(0, n)));
  const more = keys.some((k) => lists[k].length > offset + page[k].length);
  return { page, next: more ? offset + n : undefined, clipped: pages.some((p) => p.clipped) };
}

/** Main-stream items grouped by turn (consecutive items of one turn), for paging a conversation by turn. */
function turnsOf(items: readonly ShowItem[]): ShowItem[][] {
  const out: ShowItem[][] = [];
  for (const it of items) {
    const last = out[out.length - 1];
    if (last && last[0]!.turn === it.turn) last.push(it);
    else out.push([it]);
  }
  return out;
}

/** Build the MCP server: its tools and resources. */
export function createMcpServer(opts: McpOptions): McpServer {
  const { loc } = opts;
  const server = new McpServer(
    { name: "lake", title: "lake fleet store", version: opts.version },
    {
      instructions:
        "Read a lake fleet store (every agent session's record, usage and cost, claims) and coordinate with other agents through it: " +
        "roster and intents (advisory), leases with fencing epochs (carry the epoch in the writes the lease protects; renew and release need it). " +
        "Lists come a page at a time: pass next_cursor back as cursor for the next page.",
    },
  );
  const coord = new Coordination(loc, opts.agent);

  const register = <S extends z.ZodRawShape>(
    name: string,
    config: { title: string; description: string; input: S; readOnly: boolean; idempotent?: boolean },
    fn: (args: z.infer<z.ZodObject<S>>) => Promise<Answer>,
  ): void => {
    server.registerTool(
      name,
      {
        title: config.title,
        description: config.description,
        inputSchema: config.input,
        annotations: { readOnlyHint: config.readOnly, idempotentHint: config.idempotent ?? config.readOnly, destructiveHint: false, openWorldHint: false },
      },
      // The SDK has validated the arguments against the schema before this runs.
      (async (args: z.infer<z.ZodObject<S>>): Promise<CallToolResult> => {
        try {
          const a = await fn(args);
          if ("refusal" in a && a.refusal instanceof ReaderError) return toolError(name, a.refusal, a.value as Record<string, unknown>);
          return ok(a as Record<string, unknown>);
        } catch (e) {
          return toolError(name, e);
        }
      }) as never,
    );
  };

  register(
    "search",
    {
      title: "Full-text search",
      description:
        "FTS5 (bm25) over the text of every event (user and assistant text, tool input and output) and the current snapshot's claims; every word must match. " +
        "Returns {query, events: [{session_id, stream, ts, kind, tool_name, snippet}], claims: [{claim_id, agent, repo, subject, kind, snippet}], next_cursor} — `lake-reader search --json`, paged.",
      input: { query: z.string().min(1).max(1000).describe("words to find (all must match; operators are literal)"), limit: limitOf(20, 200), ...paging },
      readOnly: true,
    },
    async (args) => {
      const b = bounds(args, 20);
      const text = args.query.trim();
      if (!text) throw new ReaderError("Usage", "search: expected TEXT");
      // The fleet's state is known only after reading: the cursor's hash is checked after the search.
      const r = await (await search()).searchFleet(loc, text, peekOffset(args.cursor) + b.limit + 1);
      const hash = questionHash("search", args, r.fingerprint);
      const offset = decodeCursor(args.cursor, hash);
      const p = pageLists({ events: r.events, claims: r.claims }, offset, rowBudget(b, { query: text }));
      return { query: text, ...p.page, next_cursor: p.next === undefined ? null : encodeCursor(p.next, hash), ...(p.clipped ? { clipped: true } : {}) };
    },
  );

  register(
    "list_sessions",
    {
      title: "Sessions",
      description:
        "One row per session of the fleet (the `sessions` view), oldest activity first: {sessions: [{session_id, runtime, agent, fleet, first_ts, last_ts, duration_s, events, streams, user_turns, " +
        "assistant_turns, tool_calls, tool_errors, models, cwd, repo, branch, sealed}], total, next_cursor} — the rows of `lake-reader sessions --json`, paged.",
      input: { limit: limitOf(50, 1000), ...paging },
      readOnly: true,
    },
    async (args) => {
      const b = bounds(args, 50);
      const rows = plainRows(await (await read()).sessionRows(loc));
      const hash = questionHash("list_sessions", args, stateOf(rows));
      const offset = decodeCursor(args.cursor, hash);
      const p = takePage(rows, offset, rowBudget(b, { total: rows.length }));
      return { sessions: p.rows, total: rows.length, next_cursor: p.next === undefined ? null : encodeCursor(p.next, hash), ...(p.clipped ? { clipped: true } : {}) };
    },
  );

  register(
    "show_session",
    {
      title: "A session's conversation",
      description:
        "The conversation of one session (a unique prefix of its id is enough), paged by turn: `lake-reader show SESSION --json` ({session_id, runtime, agent, source, first_ts, last_ts, chain?, items, other_streams}) " +
        "with `items` holding the main stream's turns of this page and `other_streams` the streams outside it (on the pages after the last turn), plus {turns: {from, to, total}, next_cursor}. " +
        "Items: {kind, ts, stream, turn, text?, model?, redaction_rules?, tool?: {name, call_id, input, result, child?}}.",
      input: {
        session: z.string().min(1).max(200).describe("session id or a unique prefix"),
        from: z.enum(["chain", "events"]).optional().describe("chain (the local root's round chain) or events (the fleet); default chain when the local root has one"),
        turns: z.number().int().min(1).max(500).optional().describe("turns per page (default 20)"),
        ...paging,
      },
      readOnly: true,
    },
    async (args) => {
      const b: Bounds = { limit: args.turns ?? 20, maxBytes: args.max_bytes ?? DEFAULT_MAX_BYTES };
      const conv = plain(await (await read()).showConversation(loc, args.session, args.from)) as unknown as ShowConversation;
      const { items, other_streams, ...head } = conv;
      const units: { turn?: ShowItem[]; other?: (typeof other_streams)[number] }[] = [...turnsOf(items).map((t) => ({ turn: t })), ...other_streams.map((o) => ({ other: o }))];
      const hash = questionHash("show_session", args, stateOf(conv));
      const offset = decodeCursor(args.cursor, hash);
      const p = takePage(units, offset, rowBudget(b, head));
      const pageItems = p.rows.flatMap((u) => u.turn ?? []);
      const turnCount = units.filter((u) => u.turn).length;
      const firstTurn = Math.min(offset, turnCount);
      return {
        ...head,
        items: pageItems,
        other_streams: p.rows.flatMap((u) => (u.other ? [u.other] : [])),
        turns: { from: firstTurn, to: Math.min(offset + p.rows.length, turnCount), total: turnCount },
        next_cursor: p.next === undefined ? null : encodeCursor(p.next, hash),
        ...(p.clipped ? { clipped: true } : {}),
      };
    },
  );

  register(
    "usage",
    {
      title: "Token usage and cost",
      description:
        "Tokens (broca's meaning: input fresh, cached_input cache reads, cache_write (cache_write_1h its 1-hour part), output including reasoning, reasoning a subset; null = nobody reported it) and USD cost (prices: @pydantic/genai-prices, each response priced on its own), " +
        "`lake-reader usage <report> --json`: daily → {daily: [{date, …}]}, weekly → {weekly: [{week (Monday), …}]}, monthly → {monthly: [{month, …}]}, session → {sessions: [{session_id, runtime, models, …}]}, " +
        "blocks → {blocks: [{start, end, last_ts, active, sessions, models, …}], untimed_tokens}; each row has input_tokens, cached_input_tokens, cache_write_tokens, cache_write_1h_tokens, output_tokens, reasoning_tokens, total_tokens, cost_usd (the sum of what is priced), unpriced_tokens, unpriced_models, cost_source (calculated, recorded, mixed). " +
        "totals and pricing cover every row of the report, not only this page; plus next_cursor.",
      input: {
        report: z.enum(USAGE_REPORTS).describe("hourly, daily, weekly, monthly, session or blocks"),
        since: day.describe("first day included (in timezone), yyyy-mm-dd"),
        until: day.describe("last day included (in timezone), yyyy-mm-dd"),
        timezone: z.string().min(1).max(64).optional().describe("IANA zone days are counted in (default UTC)"),
        runtime: z.array(z.string().min(1).max(64)).max(16).optional().describe("only these runtimes: claude-code, codex, gemini, broca, hook"),
        model: z.array(z.string().min(1).max(200)).max(16).optional().describe("only models whose id contains one of these"),
        by: z.enum(BY_KEYS).optional().describe("split every row by this key (the row gets a field of its name): runtime, model, project (repo, else cwd), repo, branch, agent, machine (also: machines.shared_responses, responses seen on more than one machine)"),
        breakdown: z.boolean().optional().describe("each row's numbers per model (breakdown: [{model, …}])"),
        cost_mode: z.enum(["calculate", "recorded", "auto"]).optional().describe("calculate from tokens (default), the runtime's recorded cost (Claude Code costUSD), or recorded where there is one else calculated"),
        limit: limitOf(100, 1000),
        ...paging,
      },
      readOnly: true,
    },
    async (args) => {
      const b = bounds(args, 100);
      // The CLI's usage report, from the same options `usage REPORT --json` parses.
      const values = { store: loc.store, cache: loc.cache, root: loc.root, since: args.since, until: args.until, timezone: args.timezone ?? "UTC", runtime: args.runtime, model: args.model, by: args.by, breakdown: args.breakdown, "cost-mode": args.cost_mode };
      const full = plain(usageJson(await usageReport(args.report, values, opts.env)));
      const listKey = args.report === "session" ? "sessions" : args.report;
      const { [listKey]: list, ...rest } = full;
      const hash = questionHash("usage", args, stateOf(full));
      const offset = decodeCursor(args.cursor, hash);
      const p = takePage(list as unknown[], offset, rowBudget(b, rest));
      return { [listKey]: p.rows, ...rest, next_cursor: p.next === undefined ? null : encodeCursor(p.next, hash), ...(p.clipped ? { clipped: true } : {}) };
    },
  );

  register(
    "sql",
    {
      title: "Read-only SQL",
      description:
        "One SELECT over the read model (DuckDB views: events, sessions, interrupted_sessions, tools_daily, tokens_daily, usage_counted, hook_decisions, blocks_by_hook, labels). " +
        "Read-only: any other statement is refused, and the connection can read only the fleet's files. Returns {columns, rows (as `lake-reader sql --json`), next_cursor}; " +
        "pages re-run the query, so give it an ORDER BY for a stable order.",
      input: { query: z.string().min(1).max(100_000).describe("one SELECT statement"), limit: limitOf(100, 1000), ...paging },
      readOnly: true,
    },
    async (args) => {
      const b = bounds(args, 100);
      // The fingerprint is known only after reading; a cursor carries it, checked after the query.
      const r = await (await sql()).sandboxedQuery(loc, args.query, peekOffset(args.cursor), b.limit);
      const hash = questionHash("sql", args, r.fingerprint);
      const offset = decodeCursor(args.cursor, hash);
      const p = takePage(r.rows, 0, rowBudget(b, { columns: r.columns }));
      const more = p.next !== undefined || r.more;
      return { columns: r.columns, rows: p.rows, next_cursor: more ? encodeCursor(offset + p.rows.length, hash) : null, ...(p.clipped ? { clipped: true } : {}) };
    },
  );

  register(
    "propose_claim",
    {
      title: "Propose a claim",
      description:
        "Append a proposed claim (a fact others should know) to claims/events/dt=<today>/agent=<this agent>/<ulid>.json; every secret in text, subject and repo is masked by @lake/redact before anything is written. " +
        "lake-maint promote decides what becomes a fleet claim. Returns {key, event: {claim_id?, agent, proposed_at, repo, subject, text, kind}, redaction_rules}.",
      input: {
        text: z.string().min(1).max(8192).describe("the claim"),
        subject: z.string().max(200).optional(),
        repo: z.string().max(200).optional(),
        kind: z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/).optional().describe("default fact"),
        claim_id: z.string().min(1).max(200).optional().describe("revise the claim with this id"),
      },
      readOnly: false,
      idempotent: false,
    },
    async (args) => coord.propose(args),
  );

  register(
    "roster",
    {
      title: "Who is working",
      description:
        "The fleet's live control plane: {agents: [{agent_id, runtime, repo, branch, tool, status, started_at, updated_at, expires_at, live}], intents: [{agent_id, intents: [{repo, resource, resource_key}], note, declared_at, expires_at, live}], " +
        "leases: [{resource_key, repo, resource, status, owner, epoch, expires_at, live}], me, next_cursor} — as `lake-maint roster list`, `intents list`, `lease list` --json. Only live entries unless include_expired.",
      input: { include_expired: z.boolean().optional(), limit: limitOf(100, 1000), ...paging },
      readOnly: true,
    },
    async (args) => {
      const b = bounds(args, 100);
      const lists = await coord.roster(args.include_expired === true);
      const hash = questionHash("roster", args);
      const offset = decodeCursor(args.cursor, hash);
      const p = pageLists(lists, offset, rowBudget(b, { me: opts.agent }));
      return { ...p.page, me: opts.agent, next_cursor: p.next === undefined ? null : encodeCursor(p.next, hash), ...(p.clipped ? { clipped: true } : {}) };
    },
  );

  register(
    "heartbeat",
    {
      title: "Join the roster",
      description: "Write (or refresh) this agent's roster heartbeat live/agents/<agent>.json: returns {agent_id, runtime, repo, branch, tool, status, started_at, updated_at, expires_at}.",
      input: {
        runtime: z.string().min(1).max(64).describe("claude-code, codex, gemini, …"),
        repo: z.string().max(200).optional(),
        branch: z.string().max(200).optional(),
        tool: z.string().max(200).optional().describe("what it is running now"),
        ttl_seconds: z.number().int().min(1).max(86_400).optional().describe("default 300"),
      },
      readOnly: false,
      idempotent: true,
    },
    async (args) => coord.heartbeat(args),
  );

  register(
    "declare_intent",
    {
      title: "Declare intent",
      description:
        "Declare what this agent is about to touch (replacing its earlier declaration; advisory — nothing stops others), live/intents/<agent>.json: returns {agent_id, intents: [{repo, resource, resource_key}], note, declared_at, expires_at}. An empty list clears it.",
      input: {
        intents: z.array(z.object({ repo: z.string().min(1).max(200), resource: z.string().min(1).max(1000) })).max(100),
        note: z.string().max(1000).optional(),
        ttl_seconds: z.number().int().min(1).max(86_400).optional().describe("default 900"),
      },
      readOnly: false,
      idempotent: true,
    },
    async (args) => coord.declareIntent(args),
  );

  const leaseInput = { repo: z.string().min(1).max(200), resource: z.string().min(1).max(1000), owner: z.string().min(1).max(200).optional().describe("default: this agent's id") };
  register(
    "lease_acquire",
    {
      title: "Acquire a lease",
      description:
        "Take the advisory lease on (repo, resource) for ttl_seconds: {acquired, epoch, owner, expires_at} as `lake-maint lease acquire --json`. " +
        "acquired: epoch is your fencing token (strictly larger than every earlier holder's): pass it to lease_renew and lease_release. Not acquired: owner and epoch name the holder.",
      input: { ...leaseInput, ttl_seconds: z.number().int().min(1).max(86_400).describe("how long the lease lasts unless renewed") },
      readOnly: false,
      idempotent: false,
    },
    async (args) => coord.acquire(args),
  );
  register(
    "lease_renew",
    {
      title: "Renew a lease",
      description: "Extend a lease you hold: only while it is held by owner at epoch. {renewed, epoch, owner, expires_at}; refused (a tool error, code Refused) when it is not.",
      input: { ...leaseInput, epoch: z.number().int().min(1).describe("the epoch lease_acquire returned"), ttl_seconds: z.number().int().min(1).max(86_400) },
      readOnly: false,
      idempotent: true,
    },
    async (args) => coord.renew(args),
  );
  register(
    "lease_release",
    {
      title: "Release a lease",
      description: "Free a lease you hold at epoch (the next holder gets epoch + 1). {released, epoch, owner, expires_at}; refused (a tool error, code Refused) when owner does not hold it at that epoch.",
      input: { ...leaseInput, epoch: z.number().int().min(1).describe("the epoch lease_acquire returned") },
      readOnly: false,
      idempotent: true,
    },
    async (args) => coord.release(args),
  );

  server.registerResource(
    "claims",
    "lake://claims",
    { title: "Fleet claims", description: "Every claim of the current snapshot (snapshot/latest.json): {snapshot: content_hash | null, claims: [{claim_id, agent, repo, subject, text, kind, proposed_at, promoted_at}]}", mimeType: "application/json" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(await (await search()).snapshotClaims(loc)) }] }),
  );
  server.registerResource(
    "transcript",
    new ResourceTemplate("lake://sessions/{session}/transcript", {
      list: async () => {
        const rows = await (await read()).sessionRows(loc);
        return {
          resources: rows
            .slice(-100)
            .reverse()
            .map((r) => ({ uri: `lake://sessions/${encodeURIComponent(String(r.session_id))}/transcript`, name: String(r.session_id), mimeType: "application/json" })),
        };
      },
    }),
    { title: "Session transcript", description: "A session's whole conversation, as `lake-reader show SESSION --json` (the show_session tool pages it).", mimeType: "application/json" },
    async (uri, vars) => {
      const sid = decodeURIComponent(String(Array.isArray(vars.session) ? vars.session[0] : vars.session));
      try {
        return { contents: [{ uri: uri.href, mimeType: "application/json", text: toJson(await (await read()).showConversation(loc, sid), 0) }] };
      } catch (e) {
        throw new Error(`lake-reader show: ${firstLine(describeError(e).message)}`, { cause: e });
      }
    },
  );
  return server;
}

/** Rows as plain JSON values. */
function plainRows(rows: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return JSON.parse(toJson(rows, 0)) as Record<string, unknown>[];
}

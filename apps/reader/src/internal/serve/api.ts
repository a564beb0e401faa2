// The JSON API of `lake-reader serve`: each endpoint calls the function its CLI command calls and
// answers exactly that command's `--json` object (README, "serve").
import { ReaderError } from "../errors.js";
import type { Locations } from "../context.js";
import { sqlString } from "../sqltext.js";

/** A parsed API request: the path segments after /api/ and the query. */
export interface ApiRequest {
  readonly path: readonly string[];
  readonly query: URLSearchParams;
  /** The zone usage reports count days in when the query names none (serve's --timezone, else the system's). */
  readonly timezone: string;
}

const bad = (msg: string) => new ReaderError("Usage", msg);

function one(q: URLSearchParams, name: string): string | undefined {
  const all = q.getAll(name).filter((v) => v !== "");
  if (all.length > 1) throw bad(`?${name}: given ${all.length} times`);
  return all[0];
}

function many(q: URLSearchParams, name: string): string[] | undefined {
  const all = q.getAll(name).filter((v) => v !== "");
  return all.length ? all : undefined;
}

/** The values of the store options, as the CLI would pass them. */
function common(loc: Locations): { store: string; cache: string; root: string } {
  return { store: loc.store, cache: loc.cache, root: loc.root };
}

/**
 * Answer one API request; resolves to the JSON value to send. Unknown endpoints are NotFound, bad
 * query values Usage errors (the server maps codes to HTTP statuses).
 */
export async function answer(loc: Locations, env: NodeJS.ProcessEnv, req: ApiRequest): Promise<unknown> {
  const [head, ...rest] = req.path;
  const q = req.query;
  switch (head) {
    case "usage": {
      // /api/usage/<report>  = usage <report> --json (daily, weekly, monthly, session, blocks) [--since --until --runtime… --model… --by]
      const report = rest[0];
      const { USAGE_REPORTS, usageJson, usageReport } = await import("../commands/usage.js");
      if (rest.length !== 1 || report === undefined || !(USAGE_REPORTS as readonly string[]).includes(report)) break;
      const values = { ...common(loc), since: one(q, "since"), until: one(q, "until"), timezone: one(q, "timezone") ?? req.timezone, runtime: many(q, "runtime"), model: many(q, "model"), by: one(q, "by"), breakdown: one(q, "breakdown") === "1" || one(q, "breakdown") === "true" };
      return usageJson(await usageReport(report as (typeof USAGE_REPORTS)[number], values, env, undefined, loc));
    }
    case "sessions": {
      // /api/sessions  = sessions --json
      if (rest.length) break;
      const { sessionRows } = await import("../commands/read.js");
      return sessionRows(loc);
    }
    case "show": {
      // /api/show/<session>  = show SESSION --json [--from chain|events]
      const want = rest[0];
      if (rest.length !== 1 || !want) break;
      const from = one(q, "from");
      if (from !== undefined && from !== "chain" && from !== "events") throw bad(`?from expects chain or events, got ${JSON.stringify(from)}`);
      const { showConversation } = await import("../commands/read.js");
      return showConversation(loc, want, from);
    }
    case "responses": {
      // /api/responses/<session_id>: each counted response of one session (usage_counted), priced.
      const sid = rest[0];
      if (rest.length !== 1 || !sid) break;
      return sessionResponses(loc, sid);
    }
    case "search": {
      // /api/search?q=TEXT&limit=N  = search TEXT --json [--limit N]
      if (rest.length) break;
      const text = (one(q, "q") ?? "").trim();
      if (!text) throw bad("search: expected ?q=TEXT");
      const l = one(q, "limit");
      const limit = l === undefined ? 20 : Number(l);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw bad(`search: ?limit ${JSON.stringify(l)}: expected an integer 1-1000`);
      const { searchFleet } = await import("../commands/search.js");
      const { events, claims } = await searchFleet(loc, text, limit);
      return { query: text, events, claims };
    }
    case "fleet": {
      // /api/fleet  = {roster, leases, intents}: lake-maint's roster/lease/intents list --json (live entries)
      if (rest.length) break;
      return fleetControl(loc);
    }
  }
  throw new ReaderError("NotFound", `/api/${req.path.join("/")}: no such endpoint`);
}

/** One counted response of a session, with its cost (the usage_counted view, priced like the reports). */
export interface ResponseRow {
  stream: string;
  model: string | null;
  ts: string | null;
  input_tokens: number | null;
  cached_input_tokens: number | null;
  cache_write_tokens: number | null;
  output_tokens: number | null;
  reasoning_tokens: number | null;
  cache_write_1h_tokens: number | null;
  total_tokens: number | null;
  cost_usd: number | null;
  unpriced_tokens: number;
  unpriced_models: string[];
  cost_source: "calculated" | "recorded" | "mixed" | null;
}

async function sessionResponses(loc: Locations, sid: string): Promise<{ session_id: string; responses: ResponseRow[] }> {
  const [{ fleetFiles, useReadModel }, { priceUsage, sessionReport }, { fleetPricing }] = await Promise.all([import("../context.js"), import("../usage.js"), import("../pricing.js")]);
  const keys = ["input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens", "cache_write_1h_tokens"] as const;
  const files = await fleetFiles(loc);
  const { rows } = await useReadModel(loc, files, (rm) =>
    rm.query(`SELECT stream, model, strftime(ts, '%Y-%m-%dT%H:%M:%S.%gZ') AS ts, ${keys.join(", ")} FROM usage_counted
      WHERE session_id = ${sqlString(sid)} ORDER BY ts NULLS LAST, stream`),
  );
  const pricing = await fleetPricing(loc, files);
  const responses = rows.map((r) => {
    const usage: Record<string, number> = {};
    for (const k of keys) if (r[k] !== null && r[k] !== undefined) usage[k] = Number(r[k]);
    const model = r.model === null || r.model === undefined ? null : String(r.model);
    const ts = r.ts === null ? null : String(r.ts);
    // Each response priced on its own, as the reports price it (one contribution, one row).
    const one = sessionReport(priceUsage([{ session_id: sid, runtime: "", stream: String(r.stream), model, ts, day: ts?.slice(0, 10) ?? "unknown", usage }], pricing, "calculate"));
    const { session_id: _s, runtime: _r, models: _m, ...n } = one.sessions[0]!;
    return { stream: String(r.stream), model, ts, ...n };
  });
  return { session_id: sid, responses };
}

async function fleetControl(loc: Locations): Promise<{ roster: unknown[]; leases: unknown[]; intents: unknown[] }> {
  const { isLayoutError, listIntents, listLeases, listRoster, openStore, parseStoreUrl } = await import("@lake/layout");
  const parsed = parseStoreUrl(loc.store);
  const { existsSync } = await import("node:fs");
  if (parsed.kind === "file" && !existsSync(parsed.root)) throw new ReaderError("NotFound", `${parsed.root}: fleet store directory does not exist`, { data: { file: parsed.root } });
  const store = openStore(parsed.url);
  try {
    const [roster, leases, intents] = await Promise.all([listRoster(store), listLeases(store, { liveOnly: true }), listIntents(store)]);
    return { roster, leases, intents };
  } catch (e) {
    if (isLayoutError(e)) throw new ReaderError(e.code === "Corrupt" ? "Corrupt" : "Io", `${loc.store}: ${e.message}`, { data: { file: loc.store }, cause: e });
    throw e;
  } finally {
    store.close();
  }
}

// What `usage … --by project|repo|branch|agent|machine` groups by: values the counted contributions
// do not carry, read from the read model (DuckDB over the same followed rows). A contribution
// takes the value its session had at the contribution's time (the latest change of cwd, repo or
// branch at or before it, else the session's first); a response's machine is the agent whose copy
// is read first (the copy countUsage counts, files in read order). `--by machine` also says how
// many responses were seen on more than one machine (counted once).
import type { UsageContribution } from "@lake/events/usage";
import { fleetFiles, useReadModel, type Locations } from "./context.js";
import type { FleetFiles } from "./fleet.js";
import { USAGE_COLS } from "./sql/views.js";

/** The `--by` keys read from the read model. */
export const ROW_BY_KEYS = ["project", "repo", "branch", "agent", "machine"] as const;
export type RowByKey = (typeof ROW_BY_KEYS)[number];

/** Per machine, for `--by machine`. */
export interface MachineShare {
  machine: string;
  /** Responses (distinct ones) with a copy from this machine. */
  responses_seen: number;
  /** Of those, how many have a copy from another machine too. */
  shared_responses: number;
}

/** What `--by` needs: each contribution's value, and for machines the sharing counts. */
export interface Attribution {
  of(c: UsageContribution): string | null;
  machines?: { shared_responses: number; per_machine: MachineShare[] };
}

const reported = USAGE_COLS.map((k) => `${k} IS NOT NULL`).join(" OR ");
/** A response's identity across copies: its usage_key, else its record id, else its content hash. */
const identity = `coalesce('k' || usage_key, 'i' || session_id || chr(31) || stream || chr(31) || record_id, 'h' || session_id || chr(31) || content_hash)`;

/** Change points of one column per session: [ms, value] in time order (a missing time sorts first). */
async function changes(q: (sql: string) => Promise<Record<string, unknown>[]>, col: "cwd" | "repo" | "branch"): Promise<Map<string, [number, string][]>> {
  const rows = await q(`
    SELECT session_id, t, v FROM (
      SELECT session_id, coalesce(CAST(epoch_ms(ts) AS DOUBLE), -1e18) AS t, ${col} AS v, lag(${col}) OVER w AS p, row_number() OVER w AS rn
      FROM events WHERE ${col} IS NOT NULL AND ${col} <> ''
      WINDOW w AS (PARTITION BY session_id ORDER BY ts NULLS FIRST, source_file, file_row))
    WHERE rn = 1 OR p IS DISTINCT FROM v ORDER BY session_id, t`);
  const out = new Map<string, [number, string][]>();
  for (const r of rows) {
    const sid = String(r.session_id);
    (out.get(sid) ?? out.set(sid, []).get(sid)!).push([Number(r.t), String(r.v)]);
  }
  return out;
}

/** The value in force at `ts` (the last change at or before it, else the first). */
function at(list: [number, string][] | undefined, ts: string | null): string | null {
  if (!list || list.length === 0) return null;
  const t = ts ? Date.parse(ts) : -Infinity;
  let v = list[0]![1];
  for (const [when, x] of list) {
    if (when > t) break;
    v = x;
  }
  return v;
}

/** Read what `--by key` needs from the fleet's read model (of `files`, when the caller resolved them). */
export async function attribution(loc: Locations, key: RowByKey, files?: FleetFiles): Promise<Attribution> {
  return useReadModel(loc, files ?? (await fleetFiles(loc)), async (rm) => {
    const q = async (sql: string) => (await rm.query(sql)).rows;
    if (key === "agent" || key === "machine") {
      // The agent of the first copy read of each (session, stream, time) that carries usage, and of each session.
      const byTs = new Map<string, string>();
      for (const r of await q(`SELECT session_id, stream, CAST(epoch_ms(ts) AS DOUBLE) AS t, arg_min(agent, (source_file, file_row)) AS a FROM fleet_rows WHERE ts IS NOT NULL AND NOT coalesce(replayed, false) AND (${reported}) GROUP BY ALL`)) {
        byTs.set(`${String(r.session_id)}\0${String(r.stream)}\0${Number(r.t)}`, String(r.a));
      }
      const bySession = new Map<string, string>();
      for (const r of await q(`SELECT session_id, arg_min(agent, (source_file, file_row)) AS a FROM fleet_rows GROUP BY session_id`)) bySession.set(String(r.session_id), String(r.a));
      const of = (c: UsageContribution) => (c.ts ? byTs.get(`${c.session_id}\0${c.stream}\0${Date.parse(c.ts)}`) : undefined) ?? bySession.get(c.session_id) ?? null;
      if (key === "agent") return { of };
      const ids = `SELECT ${identity} AS id, list(DISTINCT agent) AS agents FROM fleet_rows WHERE NOT coalesce(replayed, false) AND (${reported}) GROUP BY 1`;
      const per = await q(`SELECT a AS machine, count(*) AS seen, count(*) FILTER (WHERE len(agents) > 1) AS shared FROM (SELECT unnest(agents) AS a, agents FROM (${ids})) GROUP BY a ORDER BY a`);
      const [total] = await q(`SELECT count(*) FILTER (WHERE len(agents) > 1) AS n FROM (${ids})`);
      return {
        of,
        machines: { shared_responses: Number(total?.n ?? 0), per_machine: per.map((r) => ({ machine: String(r.machine), responses_seen: Number(r.seen), shared_responses: Number(r.shared) })) },
      };
    }
    const repo = key === "branch" ? undefined : await changes(q, "repo");
    const cwd = key === "project" ? await changes(q, "cwd") : undefined;
    const branch = key === "branch" ? await changes(q, "branch") : undefined;
    // Gemini CLI records no working directory, only the hash of its project root (its directory under ~/.gemini/tmp/).
    const gemini = new Map<string, string>();
    if (key === "project") {
      for (const r of await q(`SELECT session_id, any_value(regexp_extract(source_path, '([0-9a-f]{64})/chats/', 1)) AS h FROM events WHERE runtime = 'gemini' GROUP BY 1`)) {
        if (r.h) gemini.set(String(r.session_id), `gemini:${String(r.h).slice(0, 12)}`);
      }
    }
    if (key === "branch") return { of: (c) => at(branch!.get(c.session_id), c.ts) };
    if (key === "repo") return { of: (c) => at(repo!.get(c.session_id), c.ts) };
    return { of: (c) => at(repo!.get(c.session_id), c.ts) ?? at(cwd!.get(c.session_id), c.ts) ?? gemini.get(c.session_id) ?? null };
  });
}

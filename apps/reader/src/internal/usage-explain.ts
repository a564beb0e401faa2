// `usage explain SESSION|--date D`: why a total is what it is. Every followed row that carries
// usage is read (as `usage blocks` reads them) and counted by countUsage, which names what it did
// with each row (counted, or dropped by which rule); the rows of the session (or the day, in the
// report's zone) are tallied by outcome, so the counts add up: rows = counted + every dropped kind.
// The counted responses are priced as the reports price them. Progress rows that carry a copy of a
// subagent's usage (Claude Code's agent_progress) are never given usage by the adapter: counted
// from the read model, as ccusage counts them and lake does not.
import { totalTokens, type UsageOutcome, type UsageRecord } from "@lake/events/usage";
import { fleetFiles, locations, usageError, withReadModel, type CommonValues } from "./context.js";
import { loadPricing, type CostMode } from "./pricing.js";
import { scanUsage } from "./usage-scan.js";
import { localDay, parseDayArg, resolveTimeZone } from "./time.js";
import type { Damage } from "./fleet.js";
import type { UsageNumbers } from "./usage.js";

/** What each dropped kind means (JSON keys of `dropped`, in order). */
export const DROP_RULES = {
  duplicate_lines: "the same record read again (same session, stream and record id, or content hash): a resumed, copied or re-landed transcript",
  response_copies: "another copy of the same response (same usage key: streamed over several lines, or history copied into a resumed session) is the one counted",
  replayed_history: "history a fork or resume replays (marked replayed by the adapter)",
  voided: "a response whose last copy reports no usage (rewritten in place)",
  unchanged_running_totals: "a running total (Codex) that did not grow",
} as const;
type DropKey = keyof typeof DROP_RULES;

const OUTCOME_KEY: Record<Exclude<UsageOutcome, "counted">, DropKey> = {
  duplicate: "duplicate_lines",
  copy: "response_copies",
  replayed: "replayed_history",
  voided: "voided",
  unchanged: "unchanged_running_totals",
};

/** `usage explain --json`. */
export interface Explanation {
  session_id?: string;
  date?: string;
  timezone: string;
  /** Rows carrying usage in scope (every copy): responses_counted + the dropped counts. */
  rows_with_usage: number;
  responses_counted: number;
  dropped: Record<DropKey, { rows: number; tokens: number }>;
  /** Progress rows holding a copy of a subagent's usage: never counted (the subagent's own rows are). */
  progress_copies_not_counted: number;
  /** The counted responses: their tokens, what is priced, and what is not. */
  totals: UsageNumbers;
  priced_tokens: number;
  rules: typeof DROP_RULES;
}

export interface ExplainValues extends CommonValues {
  date?: string | undefined;
  timezone?: string | undefined;
  "cost-mode"?: string | undefined;
  pricing?: string | undefined;
}

/** Explain one session (a unique prefix is enough) or one day. */
export async function explainUsage(session: string | undefined, values: ExplainValues, env: NodeJS.ProcessEnv, mode: CostMode, damaged?: Damage[]): Promise<Explanation> {
  if ((session === undefined) === (values.date === undefined)) throw usageError("explain: expected a SESSION or --date D (one of them)");
  const timezone = resolveTimeZone(values.timezone, env);
  const date = parseDayArg("--date", values.date, timezone);
  const loc = locations(values, env, damaged);
  const files = await fleetFiles(loc, { mirror: false });
  const pricing = await loadPricing({ cache: loc.cache, file: values.pricing });
  const records = await scanUsage(files, files.bronze, files.partitions.flatMap((p) => p.parts));
  let sid: string | undefined;
  if (session !== undefined) {
    const ids = [...new Set(records.map((r) => r.session_id))];
    const hits = ids.includes(session) ? [session] : ids.filter((i) => i.startsWith(session));
    if (hits.length === 0) throw usageError(`explain: no session with usage matches ${JSON.stringify(session)}`);
    if (hits.length > 1) throw usageError(`explain: ${JSON.stringify(session)} is ambiguous: ${hits.sort().slice(0, 20).join(", ")}`);
    sid = hits[0]!;
  }
  const inScope = (r: Pick<UsageRecord, "session_id" | "ts">) => (sid !== undefined ? r.session_id === sid : localDay(r.ts, timezone) === date);
  const { countUsage } = await import("@lake/events/usage");
  const dropped = Object.fromEntries(Object.keys(DROP_RULES).map((k) => [k, { rows: 0, tokens: 0 }])) as Explanation["dropped"];
  let rows = 0;
  let counted = 0;
  const contributions = countUsage(records, {
    onRecord: (rec, outcome) => {
      if (!inScope(rec)) return;
      rows++;
      if (outcome === "counted") counted++;
      else {
        const d = dropped[OUTCOME_KEY[outcome]];
        d.rows++;
        d.tokens += totalTokens(rec.usage ?? {}) ?? 0;
      }
    },
  });
  const { priceUsage, sessionReport } = await import("./usage.js");
  const mine = contributions.filter((c) => (sid !== undefined ? c.session_id === sid : localDay(c.ts, timezone) === date));
  const totals = sessionReport(priceUsage(mine, pricing, mode)).totals;
  const progress = await withReadModel(loc, async (rm) =>
    (
      await rm.query(
        `SELECT session_id, CAST(epoch_ms(ts) AS DOUBLE) AS t FROM events WHERE vendor_type = 'progress/agent_progress' AND json_extract_string(attrs, '$.inner_type') = 'assistant'${sid !== undefined ? ` AND session_id = '${sid.replace(/'/g, "''")}'` : ""}`,
      )
    ).rows,
  );
  const progressCopies = progress.filter((r) => sid !== undefined || (r.t !== null && localDay(new Date(Number(r.t)).toISOString(), timezone) === date)).length;
  return {
    ...(sid !== undefined ? { session_id: sid } : { date: date! }),
    timezone,
    rows_with_usage: rows,
    responses_counted: counted,
    dropped,
    progress_copies_not_counted: progressCopies,
    totals,
    priced_tokens: (totals.total_tokens ?? 0) - totals.unpriced_tokens,
    rules: DROP_RULES,
  };
}

/** The text `usage explain` prints. */
export function explainText(e: Explanation, fmtInt: (n: number | null) => string, fmtUsd: (n: number | null) => string): string {
  const w = (n: number) => fmtInt(n).padStart(10);
  const lines = [
    `${e.session_id !== undefined ? `session ${e.session_id}` : `${e.date} (${e.timezone})`}: ${fmtInt(e.totals.total_tokens)} tokens, ${e.totals.cost_usd === null ? "unpriced" : fmtUsd(e.totals.cost_usd)}${e.totals.unpriced_tokens ? " + unpriced" : ""}`,
    `${w(e.rows_with_usage)}  rows carrying usage`,
    `${w(e.responses_counted)}  counted (one per response)`,
  ];
  for (const [k, v] of Object.entries(e.dropped) as [DropKey, { rows: number; tokens: number }][]) {
    if (v.rows) lines.push(`${w(v.rows)}  dropped: ${k.replace(/_/g, " ")} (${fmtInt(v.tokens)} tokens not added) — ${DROP_RULES[k]}`);
  }
  if (e.progress_copies_not_counted) lines.push(`${w(e.progress_copies_not_counted)}  subagent progress rows holding a copy of a subagent's usage: not counted (the subagent's own rows are; ccusage counts these too)`);
  lines.push(`tokens: ${fmtInt(e.totals.total_tokens)} = ${fmtInt(e.priced_tokens)} priced + ${fmtInt(e.totals.unpriced_tokens)} unpriced${e.totals.unpriced_models.length ? ` (${e.totals.unpriced_models.join(", ")})` : ""}`);
  return lines.join("\n");
}

import { COMMON_HELP, COMMON_OPTIONS, fleetFiles, locations, usageError, type CommonValues, type Io } from "../context.js";
import { fmtInt, fmtUsd, renderTable, toJson } from "../format.js";
import { PRICING_DATE, PRICING_VERSION } from "../pricing.js";
import { fleetUsage, parseDay } from "../usage-scan.js";
import type { PricingInfo, UsageNumbers } from "../usage.js";
import { parse } from "./parse.js";

export const USAGE_HELP = `lake-reader usage daily|weekly|monthly|session|blocks [options]

Tokens in broca's meaning (input = fresh input, cached = cache reads, cache write, output including
reasoning, reasoning as a subset) and cost in USD from the pricing table shipped with lake-reader
(version ${PRICING_VERSION}, ${PRICING_DATE}). Unknown models are reported as unpriced, never as zero.
Days are UTC; a week starts on Monday (keyed by that day, like ccusage's weekly).

Options:
  --since DATE   first UTC day included (yyyy-mm-dd or yyyymmdd)
  --until DATE   last UTC day included
  --runtime RT   only this runtime (repeatable): claude-code, codex, gemini, broca, hook
  --model TEXT   only models whose id contains TEXT (repeatable)
  --by KEY       daily, weekly and monthly: each row also broken down by model or runtime
  --json         print JSON (documented in the README)
${COMMON_HELP}

Exit codes: 0 ok, 2 bad arguments, 3 malformed store data, 5 store not found, 6 store unreadable.`;

const OPTIONS = {
  ...COMMON_OPTIONS,
  since: { type: "string" },
  until: { type: "string" },
  runtime: { type: "string", multiple: true },
  model: { type: "string", multiple: true },
  by: { type: "string" },
  json: { type: "boolean" },
} as const;

const KEYS = ["input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens", "total_tokens", "cost_usd"] as const;

function pick(n: UsageNumbers): UsageNumbers {
  const out = {} as Record<string, number | null>;
  for (const k of KEYS) out[k] = n[k];
  return out as unknown as UsageNumbers;
}

const HEAD = ["Input", "Cached", "Cache write", "Output", "Reasoning", "Total", "Cost (USD)"];
function cells(n: UsageNumbers): string[] {
  return [fmtInt(n.input_tokens), fmtInt(n.cached_input_tokens), fmtInt(n.cache_write_tokens), fmtInt(n.output_tokens), fmtInt(n.reasoning_tokens), fmtInt(n.total_tokens), fmtUsd(n.cost_usd)];
}

function note(p: PricingInfo): string {
  const lines = [`pricing table ${p.version} (${p.date})`];
  if (p.unpriced_models.length) lines.push(`unpriced models (cost shown as "unpriced"): ${p.unpriced_models.join(", ")}`);
  return lines.join("\n");
}

/** Every usage report, in the order the help lists them. */
export const USAGE_REPORTS = ["daily", "weekly", "monthly", "session", "blocks"] as const;

/** Which usage report. */
export type UsageReportName = (typeof USAGE_REPORTS)[number];

/** The options a usage report takes, as the command line gives them (also the web API's query). */
export interface UsageValues extends CommonValues {
  since?: string | undefined;
  until?: string | undefined;
  runtime?: string[] | undefined;
  model?: string[] | undefined;
  by?: string | undefined;
}

/** A computed usage report. */
export type UsageResult =
  | { readonly report: "session"; readonly r: ReturnType<typeof import("../usage.js").sessionReport> }
  | { readonly report: "blocks"; readonly r: ReturnType<typeof import("../usage.js").blocksReport> }
  | { readonly report: "daily" | "weekly" | "monthly"; readonly r: ReturnType<typeof import("../usage.js").periodReport> };

/** Compute a usage report from the fleet the options name (what `usage REPORT` prints). */
export async function usageReport(report: UsageReportName, values: UsageValues, env: NodeJS.ProcessEnv): Promise<UsageResult> {
  if (values.by !== undefined && values.by !== "model" && values.by !== "runtime") throw usageError(`usage: --by expects model or runtime, got ${JSON.stringify(values.by)}`);
  if (values.by !== undefined && report !== "daily" && report !== "weekly" && report !== "monthly") throw usageError(`usage ${report}: --by is for daily, weekly and monthly`);
  const filters = { since: parseDay("--since", values.since), until: parseDay("--until", values.until), runtimes: values.runtime, models: values.model };
  const loc = locations(values, env);
  // Objects are fetched as they are read: a compacted s3:// fleet mirrors its rollups, not its parts.
  const files = await fleetFiles(loc, { mirror: false });
  // The report code (and @lake/events) loads on the main thread while DuckDB reads the files.
  let reports: typeof import("../usage.js") | undefined;
  const counted = await fleetUsage(files, { runtimes: filters.runtimes, rowsOnly: report === "blocks", meanwhile: async () => (reports = await import("../usage.js")) });
  reports ??= await import("../usage.js");
  const { blocksReport, filterContributions, periodReport, sessionReport } = reports;
  const cs = filterContributions(counted, filters);
  if (report === "session") return { report, r: sessionReport(cs) };
  if (report === "blocks") return { report, r: blocksReport(cs) };
  return { report, r: periodReport(cs, report, values.by as "model" | "runtime" | undefined) };
}

/** The JSON `usage REPORT --json` prints (README, "usage"). */
export function usageJson(u: UsageResult): Record<string, unknown> {
  if (u.report === "session") {
    const r = u.r;
    return { sessions: r.sessions.map((s) => ({ session_id: s.session_id, runtime: s.runtime, models: s.models, ...pick(s) })), totals: pick(r.totals), pricing: r.pricing };
  }
  if (u.report === "blocks") {
    const r = u.r;
    return {
      blocks: r.blocks.map((b) => ({ start: b.start, end: b.end, last_ts: b.last_ts, active: b.active, sessions: b.sessions, models: b.models, ...pick(b) })),
      totals: pick(r.totals),
      untimed_tokens: r.untimed_tokens,
      pricing: r.pricing,
    };
  }
  const keyName = u.report === "daily" ? "date" : u.report === "weekly" ? "week" : "month";
  return { [u.report]: u.r.rows.map((x) => ({ [keyName]: x.key, ...pick(x), ...(x.breakdown ? { breakdown: x.breakdown.map((b) => ({ key: b.key, ...pick(b) })) } : {}) })), totals: pick(u.r.totals), pricing: u.r.pricing };
}

/** `lake-reader usage …`. */
export async function usageCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS);
  if (values.help) {
    io.out(USAGE_HELP + "\n");
    return 0;
  }
  const report = positionals[0] as UsageReportName | undefined;
  if (report === undefined || !USAGE_REPORTS.includes(report)) {
    throw usageError(`usage: expected daily, weekly, monthly, session or blocks${report === undefined ? "" : `, got ${JSON.stringify(report)}`}`);
  }
  if (positionals.length > 1) throw usageError(`usage ${report}: unexpected argument ${JSON.stringify(positionals[1])}`);
  const u = await usageReport(report, values, io.env);
  if (values.json) {
    io.out(toJson(usageJson(u)) + "\n");
    return 0;
  }
  const right = [false, true, true, true, true, true, true, true];
  if (u.report === "session") {
    const r = u.r;
    const rows = r.sessions.map((s) => [s.session_id, s.runtime, s.models.join(", "), ...cells(s)]);
    io.out(`Token usage by session\n${renderTable(["Session", "Runtime", "Models", ...HEAD], rows, [false, false, false, ...right.slice(1)], ["Total", "", "", ...cells(r.totals)])}\n${note(r.pricing)}\n`);
    return 0;
  }
  if (u.report === "blocks") {
    const r = u.r;
    const rows = r.blocks.map((b) => [`${b.start.slice(0, 16).replace("T", " ")}${b.active ? " (active)" : ""}`, b.models.join(", "), ...cells(b)]);
    io.out(`Token usage by 5-hour block (UTC)\n${renderTable(["Block start", "Models", ...HEAD], rows, [false, false, ...right.slice(1)], ["Total", "", ...cells(r.totals)])}\n${note(r.pricing)}\n`);
    return 0;
  }
  const r = u.r;
  const rows = r.rows.map((x) => [x.key, x.models.join(", "), ...cells(x)]);
  io.out(
    `Token usage by ${u.report === "daily" ? "day" : u.report === "weekly" ? "week (Monday)" : "month"} (UTC)\n${renderTable([u.report === "daily" ? "Date" : u.report === "weekly" ? "Week" : "Month", "Models", ...HEAD], rows, [false, false, ...right.slice(1)], ["Total", "", ...cells(r.totals)])}\n${note(r.pricing)}\n`,
  );
  return 0;
}

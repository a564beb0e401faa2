import { RUNTIMES } from "@lake/events/usage";
import { choice, choices, flag, text, texts, type RunContext } from "@lake/cli";
import { COMMON, fleetFiles, keptAnswer, locations, oneOf, usageError, type CommonValues, type Io, type Locations } from "../context.js";
import { STYLE, costCell, fmtInt, fmtUsd, paint, renderTable, shortModel, strWidth, terminalOf, toJson, type Terminal } from "../format.js";
import { COST_MODES, DATASET, fleetPricing, loadPricing, rollupPriceable, type CostMode } from "../pricing.js";
import { fleetUsage } from "../usage-scan.js";
import { WEEK_DAYS, isUtcZone, localDay, localMinute, parseDayArg, resolveTimeZone, type WeekDay } from "../time.js";
import type { Damage } from "../fleet.js";
import type { GroupFields, PricingInfo, UsageNumbers } from "../usage.js";
import type { UsageContribution } from "@lake/events/usage";
import { readerCommand } from "./parse.js";

/** --pricing FILE (usage and pricing). */
const PRICING = text("FILE", 'adds or overrides model prices (README "Pricing": lake\'s format or LiteLLM\'s\nmodel_prices_and_context_window.json)');

const KEYS = ["input_tokens", "cached_input_tokens", "cache_write_tokens", "cache_write_1h_tokens", "output_tokens", "reasoning_tokens", "total_tokens", "cost_usd", "unpriced_tokens", "unpriced_models", "cost_source"] as const;

function pick(n: UsageNumbers): UsageNumbers {
  const out = {} as Record<string, unknown>;
  for (const k of KEYS) out[k] = n[k];
  return out as unknown as UsageNumbers;
}


const HEAD = ["Input", "Cached", "Cache write (1h)", "Output", "Reasoning", "Total", "Cost (USD)"];
/** The compact table's numbers: cache reads, writes and reasoning are in Total. */
const COMPACT_HEAD = ["Input", "Output", "Total", "Cost (USD)"];
function cells(n: UsageNumbers, compact = false): string[] {
  if (compact) return [fmtInt(n.input_tokens), fmtInt(n.output_tokens), fmtInt(n.total_tokens), costCell(n)];
  const write = n.cache_write_1h_tokens === null ? fmtInt(n.cache_write_tokens) : `${fmtInt(n.cache_write_tokens)} (${fmtInt(n.cache_write_1h_tokens)})`;
  return [fmtInt(n.input_tokens), fmtInt(n.cached_input_tokens), write, fmtInt(n.output_tokens), fmtInt(n.reasoning_tokens), fmtInt(n.total_tokens), costCell(n)];
}

/** A row of a usage table: its leading text cells, its numbers, and a style. */
interface Line {
  readonly lead: readonly string[];
  /** The compact table's leading cells (shorter model names), when they differ. */
  readonly short?: readonly string[] | undefined;
  readonly n?: UsageNumbers | undefined;
  readonly style?: string | undefined;
}

/**
 * A usage table that fits the terminal, the first of: the full numbers with full model names
 * (nothing clipped), the full numbers with short names (text columns clipped to no less than `floor`), the compact numbers
 * (also with --compact) clipped to `floor`, the compact numbers with the text columns after the
 * first clipped as far as their headers, without the `drop` column, and headed `Cost`.
 */
function usageTable(t: Terminal, lead: readonly string[], lines: readonly Line[], totals: UsageNumbers, floor: readonly number[], forceCompact: boolean, drop?: number): { table: string; compact: boolean } {
  const render = (compact: boolean, short: boolean, tight: boolean | undefined) => {
    // The tightest table leaves out the `drop` column (a block's end, a session's runtime).
    const keep = (_x: unknown, i: number) => !(tight && i === drop);
    const lh = lead.filter(keep);
    const head = [...lh, ...(compact ? COMPACT_HEAD : HEAD)].map((h) => (tight && h === "Cost (USD)" ? "Cost" : h));
    const nums = (n: UsageNumbers | undefined) => (n ? cells(n, compact) : (compact ? COMPACT_HEAD : HEAD).map(() => ""));
    const rows = lines.map((l) => [...((short && l.short) || l.lead).filter(keep), ...nums(l.n)]);
    const right = head.map((_h, i) => i >= lh.length);
    const floors = floor.filter(keep);
    const shrink = tight === undefined ? undefined : new Map(lh.map((h, i) => [i, tight && i > 0 ? strWidth(h) : Math.max(floors[i] ?? 8, strWidth(h))]));
    return renderTable(head, rows, right, ["Total", ...lh.slice(1).map(() => ""), ...nums(totals)], { terminal: t, shrink, rowStyle: lines.map((l) => l.style) });
  };
  const fits = (table: string) => t.columns === undefined || strWidth(table.slice(0, table.indexOf("\n"))) <= t.columns;
  const tries: [boolean, boolean][] = forceCompact ? [[true, true]] : [[false, false], [false, true], [true, true]];
  for (const [compact, short] of tries) {
    const table = render(compact, short, short ? false : undefined);
    if (fits(table)) return { table, compact };
  }
  return { table: render(true, true, true), compact: true };
}

function note(p: PricingInfo, totals: UsageNumbers): string {
  const lines = [`prices: ${p.dataset.name} ${p.dataset.version} (${p.dataset.date})${p.file ? ` + ${p.file}` : ""}; cost mode ${p.cost_mode}`];
  if (p.unpriced_models.length) lines.push(`unpriced (${fmtInt(totals.unpriced_tokens)} tokens, not in the cost): ${p.unpriced_models.join(", ")}`);
  return lines.join("\n");
}

/** Every usage report, in the order the help lists them. */
export const USAGE_REPORTS = ["hourly", "daily", "weekly", "monthly", "session", "blocks"] as const;

/** Values of `--order`. */
export const ORDERS = ["asc", "desc"] as const;
/** Values of `--by`: on the contributions themselves (model, runtime) or read from the read model (the rest). */
export const BY_KEYS = ["runtime", "model", "project", "repo", "branch", "agent", "machine"] as const;
export type ByKey = (typeof BY_KEYS)[number];

/** Which usage report. */
export type UsageReportName = (typeof USAGE_REPORTS)[number];

/** The options a usage report takes, as the command line gives them (also the web API's query). */
export interface UsageValues extends CommonValues {
  since?: string | undefined;
  until?: string | undefined;
  timezone?: string | undefined;
  order?: string | undefined;
  "start-of-week"?: string | undefined;
  runtime?: string[] | undefined;
  model?: string[] | undefined;
  by?: string | undefined;
  breakdown?: boolean | undefined;
  active?: boolean | undefined;
  "token-limit"?: string | undefined;
  "cost-mode"?: string | undefined;
  pricing?: string | undefined;
}

type Reports = typeof import("../usage.js");

/** A computed usage report. */
export type UsageResult = (
  | { readonly report: "session"; readonly r: ReturnType<Reports["sessionReport"]> }
  | { readonly report: "blocks"; readonly r: ReturnType<Reports["blocksReport"]> }
  | { readonly report: "hourly" | "daily" | "weekly" | "monthly"; readonly r: ReturnType<Reports["periodReport"]> }
) & {
  /** The IANA zone days were counted in. */
  readonly timezone: string;
  /** weekly: the day weeks start on. */
  readonly startOfWeek: WeekDay;
  /** --by: the key rows are split by. */
  readonly by?: ByKey | undefined;
  /** --by machine: responses seen on several machines. */
  readonly machines?: import("../usage-attrs.js").Attribution["machines"];
};

function tokenLimit(v: string | undefined): number | "max" | undefined {
  if (v === undefined) return undefined;
  if (v === "max") return "max";
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n <= 0) throw usageError(`--token-limit ${JSON.stringify(v)}: expected a positive number of tokens or max`);
  return n;
}

/**
 * Compute a usage report from the fleet the options name (what `usage REPORT` prints). A
 * long-running process passes its locations (`kept`, with its kept fleet state): the counted usage
 * and the prices are then built once per fleet state, and each report is computed from them.
 */
export async function usageReport(report: UsageReportName, values: UsageValues, env: NodeJS.ProcessEnv, damaged?: Damage[], kept?: Locations): Promise<UsageResult> {
  const by = values.by === undefined ? undefined : oneOf("--by", values.by, BY_KEYS);
  for (const rt of values.runtime ?? []) oneOf("--runtime", rt, RUNTIMES);
  const order = values.order === undefined ? "asc" : oneOf("--order", values.order, ORDERS);
  const startOfWeek = values["start-of-week"] === undefined ? "monday" : oneOf("--start-of-week", values["start-of-week"].toLowerCase(), WEEK_DAYS);
  const mode = values["cost-mode"] === undefined ? "calculate" : oneOf("--cost-mode", values["cost-mode"], COST_MODES);
  const limit = tokenLimit(values["token-limit"]);
  if (report !== "blocks" && (values.active || limit !== undefined)) throw usageError(`--active and --token-limit are for blocks, not ${report}`);
  const timezone = resolveTimeZone(values.timezone, env);
  const filters = { since: parseDayArg("--since", values.since, timezone), until: parseDayArg("--until", values.until, timezone), runtimes: values.runtime, models: values.model };
  // Rollups are summed per UTC day and session: in another zone a report that counts days reads
  // rows, and so does a split by what only rows carry (project, repo, branch, agent, machine).
  const utc = isUtcZone(timezone);
  const daysMatter = report !== "session" || filters.since !== undefined || filters.until !== undefined;
  const fromRows = by !== undefined && by !== "model" && by !== "runtime";
  const loc = kept ?? locations(values, env, damaged);
  // Objects are fetched as they are read: a compacted s3:// fleet mirrors its rollups, not its parts.
  const files = await fleetFiles(loc, { mirror: false });
  // The prices first (a rollup is added as it is only where its sums price exactly); the report
  // code loads on the main thread while DuckDB reads the files.
  const pricing = await fleetPricing(loc, files, values.pricing);
  let reports: Reports | undefined;
  const rowsOnly = report === "blocks" || report === "hourly" || (!utc && daysMatter) || fromRows;
  const counted = await keptAnswer(loc, files, `usage\0${rowsOnly}\0${values.pricing ?? ""}\0${(filters.runtimes ?? []).join(",")}`, () =>
    fleetUsage(files, {
      runtimes: filters.runtimes,
      rowsOnly,
      priceable: (r) => rollupPriceable(pricing, r),
      meanwhile: async () => (reports = await import("../usage.js")),
    }),
  );
  reports ??= await import("../usage.js");
  const { blocksReport, filterContributions, periodReport, priceUsage, sessionReport } = reports;
  const zoned = utc ? counted : counted.map((c) => ({ ...c, day: localDay(c.ts, timezone) }));
  const cs = priceUsage(filterContributions(zoned, filters), pricing, mode as CostMode);
  // The read model needs every object local: a kept fleet's files are (it mirrors them all), these
  // of one run (mirror: false) may not be, so attribution resolves its own.
  const attr = fromRows ? await keptAnswer(loc, files, `attribution\0${by}`, async () => (await import("../usage-attrs.js")).attribution(loc, by as import("../usage-attrs.js").RowByKey, loc.fleet ? files : undefined)) : undefined;
  const grouping = {
    by: by === undefined ? undefined : { name: by, of: attr ? attr.of : by === "model" ? (c: UsageContribution) => c.model : (c: UsageContribution) => c.runtime },
    breakdown: values.breakdown ?? false,
  };
  const base = { timezone, startOfWeek, by, ...(attr?.machines ? { machines: attr.machines } : {}) };
  if (report === "session") return { ...base, report, r: sessionReport(cs, order, grouping) };
  if (report === "blocks") {
    const r = blocksReport(cs, { ...grouping, active: values.active ?? false, tokenLimit: limit });
    if (order === "desc") {
      r.blocks.reverse();
      r.gaps.reverse();
    }
    return { ...base, report, r };
  }
  return { ...base, report, r: periodReport(cs, report, { ...grouping, startOfWeek, order, timezone }) };
}

/** A row's `--by` value and `--breakdown` parts, as JSON. */
function groupJson(u: UsageResult, x: GroupFields): Record<string, unknown> {
  return { ...(u.by !== undefined ? { [u.by]: x.group ?? null } : {}) };
}
function breakdownJson(x: GroupFields): Record<string, unknown> {
  return x.breakdown ? { breakdown: x.breakdown.map((b) => ({ model: b.model, ...pick(b) })) } : {};
}

/** The JSON `usage REPORT --json` prints (README, "usage"). */
export function usageJson(u: UsageResult): Record<string, unknown> {
  const tail = { timezone: u.timezone, ...(u.by !== undefined ? { by: u.by } : {}), ...(u.machines ? { machines: u.machines } : {}) };
  if (u.report === "session") {
    const r = u.r;
    return {
      sessions: r.sessions.map((s) => ({ session_id: s.session_id, ...groupJson(u, s), runtime: s.runtime, models: s.models, last_ts: s.last_ts, ...pick(s), ...breakdownJson(s) })),
      totals: pick(r.totals),
      ...tail,
      pricing: r.pricing,
    };
  }
  if (u.report === "blocks") {
    const r = u.r;
    return {
      blocks: r.blocks.map((b) => ({
        start: b.start,
        end: b.end,
        ...groupJson(u, b),
        first_ts: b.first_ts,
        last_ts: b.last_ts,
        active: b.active,
        remaining_minutes: b.remaining_minutes,
        burn_rate: b.burn_rate,
        projection: b.projection,
        ...(r.token_limit !== null ? { limit_percent: b.limit_percent ?? null, projected_limit_percent: b.projected_limit_percent ?? null } : {}),
        sessions: b.sessions,
        models: b.models,
        ...pick(b),
        ...breakdownJson(b),
      })),
      gaps: r.gaps,
      totals: pick(r.totals),
      untimed_tokens: r.untimed_tokens,
      token_limit: r.token_limit,
      ...tail,
      pricing: r.pricing,
    };
  }
  const keyName = u.report === "hourly" ? "hour" : u.report === "daily" ? "date" : u.report === "weekly" ? "week" : "month";
  return {
    [u.report]: u.r.rows.map((x) => ({ [keyName]: x.key, ...groupJson(u, x), models: x.models, ...pick(x), ...breakdownJson(x) })),
    totals: pick(u.r.totals),
    ...tail,
    ...(u.report === "weekly" ? { start_of_week: u.startOfWeek } : {}),
    pricing: u.r.pricing,
  };
}

/** Table lines of a report row: the row, then its --breakdown parts indented under it. */
function withParts(first: string[], models: readonly string[], x: UsageNumbers & GroupFields): Line[] {
  const out: Line[] = [{ lead: [...first, models.join(", ")], short: [...first, models.map(shortModel).join(", ")], n: x }];
  const blank = Array<string>(first.length).fill("");
  for (const b of x.breakdown ?? []) out.push({ lead: [`  └ ${b.model ?? "unknown"}`, ...blank], short: [`  └ ${b.model ? shortModel(b.model) : "unknown"}`, ...blank], n: b, style: STYLE.dim });
  return out;
}


function machinesNote(u: UsageResult): string {
  if (!u.machines) return "";
  const per = u.machines.per_machine.map((m) => `${m.machine} ${fmtInt(m.responses_seen)} seen (${fmtInt(m.shared_responses)} also elsewhere)`).join("; ");
  return `\n${fmtInt(u.machines.shared_responses)} responses seen on more than one machine, counted once (per machine: ${per || "none"})`;
}

function blocksNote(u: Extract<UsageResult, { report: "blocks" }>): string {
  const lines: string[] = [];
  const act = u.r.blocks.filter((b) => b.active && (u.by === undefined || true));
  for (const b of act) {
    const left = b.remaining_minutes ?? 0;
    const who = u.by !== undefined ? ` (${u.by} ${b.group ?? "unknown"})` : "";
    lines.push(`active block${who}: ${localMinute(b.start, u.timezone)} – ${localMinute(b.end, u.timezone).slice(11)}, ${Math.floor(left / 60)}h${String(left % 60).padStart(2, "0")}m left`);
    if (b.burn_rate) lines.push(`  burn rate ${fmtInt(b.burn_rate.tokens_per_minute)} tokens/min${b.burn_rate.cost_per_hour === null ? "" : `, ${fmtUsd(b.burn_rate.cost_per_hour)}/h`}`);
    if (b.projection) lines.push(`  projected by the end: ${fmtInt(b.projection.total_tokens)} tokens${b.projection.cost_usd === null ? "" : `, ${fmtUsd(b.projection.cost_usd)}`}${b.projected_limit_percent != null ? ` (${b.projected_limit_percent}% of the limit)` : ""}`);
  }
  if (u.r.token_limit !== null) lines.push(`token limit: ${fmtInt(u.r.token_limit)}`);
  return lines.length ? "\n" + lines.join("\n") : "";
}

const OPTIONS = {
  ...COMMON,
  timezone: text("TZ", 'IANA zone days are counted in (UTC, Europe/Berlin, America/Los_Angeles …);\nthe JSON names it ("timezone")'),
  since: text("DATE", "first day included: yyyy-mm-dd, yyyymmdd, today, yesterday, Nd or Nw (N days or\nweeks before today: --since 7d is the last 7 days and today)"),
  until: text("DATE", "last day included (same forms)"),
  order: choice("O", ORDERS, "asc (oldest first, the default) or desc"),
  "start-of-week": text("D", "weekly: the day weeks start on, monday (ISO weeks, the default) … sunday"),
  runtime: choices("RT", RUNTIMES, `only this runtime (repeatable): ${RUNTIMES.join(", ")}`),
  model: texts("TEXT", "only models whose id contains TEXT (repeatable)"),
  by: choice("KEY", BY_KEYS, "split every row by runtime, model, project, repo, branch, agent or machine\n(project: the repo, else the working directory; machine: the agent id, with the\nresponses seen on more than one)"),
  breakdown: flag("each row's numbers per model under it (JSON: breakdown: [{model, …}])"),
  date: text("D", "explain: the day to explain (in --timezone), instead of a SESSION"),
  active: flag("blocks: only the active block (its burn rate and projection)"),
  "token-limit": text("N|max", "blocks: each block's tokens as a percentage of N (max: the largest past block)"),
  "cost-mode": choice("M", COST_MODES, "calculate (from tokens, the default), recorded (the runtime's own cost, e.g.\nClaude Code's costUSD; unpriced without one), auto (recorded where there is one,\nelse calculated)"),
  pricing: PRICING,
  compact: flag("the narrow table (Input, Output, Total, Cost) even on a wide terminal"),
  json: flag("print JSON (documented in the README)"),
} as const;

async function usage({ values, positionals, io }: RunContext<typeof OPTIONS, Io>): Promise<number> {
  if (positionals[0] === "explain") {
    if (positionals.length > 2) throw usageError(`usage explain: unexpected argument ${JSON.stringify(positionals[2])}`);
    const mode = values["cost-mode"] === undefined ? "calculate" : oneOf("--cost-mode", values["cost-mode"], COST_MODES);
    const { explainText, explainUsage } = await import("../usage-explain.js");
    const e = await explainUsage(positionals[1], values, io.env, mode as CostMode, io.damaged);
    io.out((values.json ? toJson(e) : explainText(e, fmtInt, fmtUsd)) + "\n");
    return 0;
  }
  const report = positionals[0] as UsageReportName | undefined;
  if (report === undefined || !USAGE_REPORTS.includes(report)) {
    throw usageError(`usage: expected hourly, daily, weekly, monthly, session, blocks or explain${report === undefined ? "" : `, got ${JSON.stringify(report)}`}`);
  }
  if (positionals.length > 1) throw usageError(`usage ${report}: unexpected argument ${JSON.stringify(positionals[1])}`);
  const u = await usageReport(report, values, io.env, io.damaged);
  if (values.json) {
    io.out(toJson(usageJson(u)) + "\n");
    return 0;
  }
  const t = terminalOf(io.env, io.stdout ?? {});
  const byHead = u.by !== undefined ? [u.by[0]!.toUpperCase() + u.by.slice(1)] : [];
  const byCell = (x: GroupFields) => (u.by !== undefined ? [x.group ?? "-"] : []);
  const compactNote = (compact: boolean) => (compact ? `\n${paint(t, STYLE.dim, "compact: Total includes cache reads and writes; see them wider or with --json")}` : "");
  const title = (s: string) => paint(t, "1", s);
  if (u.report === "session") {
    const r = u.r;
    const lead = ["Session", ...byHead, "Runtime", "Models"];
    const lines = r.sessions.flatMap((s) => withParts([s.session_id, ...byCell(s), s.runtime], s.models, s));
    const { table, compact } = usageTable(t, lead, lines, r.totals, [8, ...byHead.map(() => 12), 11, 20], values.compact ?? false, 1 + byHead.length);
    io.out(`${title("Token usage by session")}\n${table}\n${note(r.pricing, r.totals)}${compactNote(compact)}${machinesNote(u)}\n`);
    return 0;
  }
  if (u.report === "blocks") {
    const r = u.r;
    const lead = ["Block start", "End", ...byHead, "Models"];
    const gapAt = new Map(r.gaps.map((g) => [u.r.blocks.findIndex((b) => (values.order === "desc" ? b.start < g.start : b.start >= g.end)), g]));
    const lines: Line[] = [];
    r.blocks.forEach((b, i) => {
      const gap = gapAt.get(i);
      if (gap && i > 0) lines.push({ lead: [`(gap ${Math.floor(gap.minutes / 60)}h${String(gap.minutes % 60).padStart(2, "0")}m)`, "", ...byHead.map(() => ""), ""], style: STYLE.dim });
      const end = b.active ? `${localMinute(b.end, u.timezone).slice(11)} (${b.remaining_minutes}m left)` : localMinute(b.last_ts, u.timezone).slice(11);
      const parts = withParts([`${localMinute(b.start, u.timezone)}${b.active ? " (active)" : ""}`, end, ...byCell(b)], b.models, b);
      lines.push(...(b.active ? [{ ...parts[0]!, style: STYLE.good }, ...parts.slice(1)] : parts));
    });
    const { table, compact } = usageTable(t, lead, lines, r.totals, [16, 5, ...byHead.map(() => 12), 20], values.compact ?? false, 1);
    io.out(`${title(`Token usage by 5-hour block (${u.timezone})`)}\n${table}\n${note(r.pricing, r.totals)}${blocksNote(u)}${compactNote(compact)}${machinesNote(u)}\n`);
    return 0;
  }
  const r = u.r;
  const lead = [u.report === "hourly" ? "Hour" : u.report === "daily" ? "Date" : u.report === "weekly" ? "Week" : "Month", ...byHead, "Models"];
  const lines = r.rows.flatMap((x) => withParts([x.key, ...byCell(x)], x.models, x));
  const { table, compact } = usageTable(t, lead, lines, r.totals, [u.report === "hourly" ? 16 : 10, ...byHead.map(() => 12), 20], values.compact ?? false);
  io.out(`${title(`Token usage by ${u.report === "hourly" ? "hour" : u.report === "daily" ? "day" : u.report === "weekly" ? `week (from ${u.startOfWeek})` : "month"} (${u.timezone})`)}\n${table}\n${note(r.pricing, r.totals)}${compactNote(compact)}${machinesNote(u)}\n`);
  return 0;
}
/** `lake-reader usage …`. */
export const usageCommand = readerCommand({
  usage: "daily|weekly|monthly|session|blocks [options]",
  description: `  lake-reader usage explain SESSION|--date D [--json]

Tokens in broca's meaning (input = fresh input, cached = cache reads, cache write (of which
1h = 1-hour writes), output including reasoning, reasoning as a subset) and cost in USD from the
price dataset ${DATASET.name} (bundled, offline), each response priced on its own at the price in
force at its time. Unknown models are unpriced, never priced as zero: a cost is the sum of what is
priced, shown as "$X + unpriced" beside unpriced tokens.
explain: why a session's (or a day's) total is what it is: the rows carrying usage, the ones
counted, and the ones dropped by each rule (duplicates, copies of a response, replayed history …).
Days (and hours) are in --timezone (default: the system's zone, $TZ); a week is keyed by its first day.
A malformed or missing --pricing file is named like store data.

Tables fit the terminal ($COLUMNS, else the TTY's width): the full table when it fits (long text
clipped with …), else the compact one. Colour on a TTY only; NO_COLOR turns it off, FORCE_COLOR on.`,
  options: OPTIONS,
  positionals: { names: "REPORT", min: 0, max: Number.MAX_SAFE_INTEGER },
  run: usage,
});

const PRICING_OPTIONS = {
  ...COMMON,
  pricing: PRICING,
  json: flag("print JSON: {dataset, file, models: [{model, priced, price_model, provider, source,\ntokens, responses}]}"),
} as const;

async function pricingReport({ values, io }: RunContext<typeof PRICING_OPTIONS, Io>): Promise<number> {
  const loc = locations(values, io.env, io.damaged);
  const files = await fleetFiles(loc, { mirror: false });
  const counted = await fleetUsage(files);
  const pricing = await loadPricing({ cache: loc.cache, file: values.pricing });
  const { totalTokens } = await import("@lake/events/usage");
  const seen = new Map<string, { tokens: number; responses: number }>();
  for (const c of counted) {
    const t = totalTokens(c.usage);
    if (!t) continue;
    const k = c.model ?? "(unknown model)";
    const s = seen.get(k) ?? { tokens: 0, responses: 0 };
    s.tokens += t;
    s.responses += c.responses ?? 1;
    seen.set(k, s);
  }
  const models = [...seen].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([model, s]) => {
    const m = model === "(unknown model)" ? undefined : pricing.model(model);
    return { model, priced: m !== undefined, price_model: m?.id ?? null, provider: m?.provider ?? null, source: m?.source ?? null, tokens: s.tokens, responses: s.responses };
  });
  if (values.json) {
    io.out(toJson({ dataset: pricing.dataset, file: pricing.overrides?.file ?? null, models }) + "\n");
    return 0;
  }
  const rows = models.map((m) => [m.model, m.priced ? "yes" : "no", m.price_model ?? "-", m.provider ?? "-", fmtInt(m.tokens)]);
  const unpriced = models.filter((m) => !m.priced);
  io.out(
    `prices: ${pricing.dataset.name} ${pricing.dataset.version} (${pricing.dataset.date})${pricing.overrides ? ` + ${pricing.overrides.file} (${pricing.overrides.models.length} models)` : ""}\n` +
      `${renderTable(["Model (as the fleet names it)", "Priced", "Priced as", "Provider", "Tokens"], rows, [false, false, false, false, true])}\n` +
      (unpriced.length ? `unpriced: ${unpriced.map((m) => m.model).join(", ")} (add them with --pricing FILE)\n` : "every model is priced\n"),
  );
  return 0;
}

/** `lake-reader pricing`. */
export const pricingCommand = readerCommand({
  description: `Where prices come from (the ${DATASET.name} dataset's version and date, and a --pricing FILE), and
which models the fleet's usage names: priced (by which dataset model and provider) or not.`,
  options: PRICING_OPTIONS,
  run: pricingReport,
});

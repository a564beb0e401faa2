// `usage daily|monthly|session|blocks`: reports over the contributions @lake/events countUsage
// counts (usage-scan.ts gathers them), so the reader, the adapters' totals and the tests agree.
// Each contribution is priced on its own (pricing.ts priceContribution: a tiered price depends on
// the response's own prompt, a price on its time); rows and totals add up what is priced and say
// what is not.
import { addUsageInto, totalTokens, type Usage, type UsageContribution } from "@lake/events/usage";
import { priceContribution, toPico, type CostMode, type DatasetInfo, type Pricing } from "./pricing.js";
import type { UsageFilters } from "./usage-scan.js";
import { localMinute, weekStart, type WeekDay } from "./time.js";

/** Row order of a report (`--order`): oldest first (the default) or newest first. */
export type Order = "asc" | "desc";

/** Token and cost keys of every usage row (null = nobody reported it). */
export interface UsageNumbers {
  input_tokens: number | null;
  cached_input_tokens: number | null;
  cache_write_tokens: number | null;
  /** The part of cache_write_tokens written to the 1-hour cache (a subset, never added). */
  cache_write_1h_tokens: number | null;
  output_tokens: number | null;
  reasoning_tokens: number | null;
  total_tokens: number | null;
  /** USD of what is priced (null when there were tokens and none of them is priced). */
  cost_usd: number | null;
  /** Total tokens of the contributions that are not priced (an unknown model; no recorded cost under `recorded`). */
  unpriced_tokens: number;
  /** Models of those contributions. */
  unpriced_models: string[];
  /** How cost_usd was made: `calculated` from tokens, `recorded` by the runtime, `mixed`, or null (nothing priced). */
  cost_source: "calculated" | "recorded" | "mixed" | null;
}

/** Pricing facts written beside a report. */
export interface PricingInfo {
  /** The dataset (`@pydantic/genai-prices`) version and its date. */
  dataset: DatasetInfo;
  /** The `--pricing FILE`, when one was given. */
  file: string | null;
  cost_mode: CostMode;
  /** Models that reported tokens and are not priced (their tokens are in unpriced_tokens, never priced as zero). */
  unpriced_models: string[];
}

/** The contributions that pass the filters (days and models are filtered after counting). */
export function filterContributions(cs: readonly UsageContribution[], f: UsageFilters): UsageContribution[] {
  const models = f.models?.map((m) => m.toLowerCase());
  return cs.filter((c) => {
    if (f.since !== undefined && (c.day === "unknown" || c.day < f.since)) return false;
    if (f.until !== undefined && (c.day === "unknown" || c.day > f.until)) return false;
    if (models && models.length && !models.some((m) => (c.model ?? "").toLowerCase().includes(m))) return false;
    return true;
  });
}

/** A contribution with its price. */
interface Priced {
  readonly c: UsageContribution;
  readonly cost: number | null;
  readonly source: "calculated" | "recorded" | null;
}

/** What reports are made of: the priced contributions and the pricing facts. */
export interface PricedUsage {
  readonly items: readonly Priced[];
  readonly pricing: Pricing;
  readonly mode: CostMode;
}

/**
 * Price every contribution under `mode`. A contribution from a usage rollup sums responses of
 * one prompt-size class: it carries `prompt` (a size inside its class) and `responses`.
 */
export function priceUsage(cs: readonly UsageContribution[], pricing: Pricing, mode: CostMode): PricedUsage {
  const items = cs.map((c) => {
    const p = priceContribution(pricing, c, mode, { ...(c.prompt !== undefined ? { prompt: c.prompt } : {}), ...(c.responses !== undefined ? { responses: c.responses } : {}) });
    return { c, cost: p.cost_usd, source: p.source };
  });
  return { items, pricing, mode };
}

class Acc {
  usage: Usage = {};
  /** pico-USD (integers: exact in any order). */
  cost = 0;
  priced = 0;
  recorded = 0;
  unpricedTokens = 0;
  unpriced = new Set<string>();
  models = new Set<string>();
  count = 0;
  readonly items: Priced[] = [];
  add(p: Priced): void {
    this.items.push(p);
    addUsageInto(this.usage, p.c.usage);
    this.count++;
    if (p.c.model !== null) this.models.add(p.c.model);
    const t = totalTokens(p.c.usage);
    if (p.cost === null) {
      if (t) {
        this.unpricedTokens += t;
        this.unpriced.add(p.c.model ?? "(unknown model)");
      }
      return;
    }
    this.cost += toPico(p.cost);
    this.priced++;
    if (p.source === "recorded") this.recorded++;
  }
  numbers(global: Set<string>): UsageNumbers {
    for (const m of this.unpriced) global.add(m);
    const u = this.usage;
    return {
      input_tokens: u.input_tokens ?? null,
      cached_input_tokens: u.cached_input_tokens ?? null,
      cache_write_tokens: u.cache_write_tokens ?? null,
      cache_write_1h_tokens: u.cache_write_1h_tokens ?? null,
      output_tokens: u.output_tokens ?? null,
      reasoning_tokens: u.reasoning_tokens ?? null,
      total_tokens: totalTokens(u),
      cost_usd: this.priced === 0 && this.unpricedTokens > 0 ? null : Math.round(this.cost / 1e6) / 1e6,
      unpriced_tokens: this.unpricedTokens,
      unpriced_models: [...this.unpriced].sort(),
      cost_source: this.priced === 0 ? null : this.recorded === 0 ? "calculated" : this.recorded === this.priced ? "recorded" : "mixed",
    };
  }
}

function group(items: readonly Priced[], key: (c: UsageContribution) => string): Map<string, Acc> {
  const out = new Map<string, Acc>();
  for (const p of items) {
    const k = key(p.c);
    let a = out.get(k);
    if (!a) out.set(k, (a = new Acc()));
    a.add(p);
  }
  return out;
}

function totalsOf(items: readonly Priced[], unpriced: Set<string>): UsageNumbers {
  const a = new Acc();
  for (const p of items) a.add(p);
  return a.numbers(unpriced);
}

function modelsOf(a: Acc): string[] {
  return [...a.models].sort();
}

function pricingInfo(u: PricedUsage, unpriced: Set<string>): PricingInfo {
  return { dataset: u.pricing.dataset, file: u.pricing.overrides?.file ?? null, cost_mode: u.mode, unpriced_models: [...unpriced].sort() };
}

/** Code-unit order (no locale: ids and ISO dates; and String#localeCompare costs ~15 ms to set up). */
function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** How a report's rows are split (`--by`) and broken down (`--breakdown`). */
export interface Grouping {
  /** Split every row by this value of each contribution (null: not known); `name` is its JSON key. */
  readonly by?: { readonly name: string; readonly of: (c: UsageContribution) => string | null } | undefined;
  /** Add each row's numbers per model (`breakdown: [{model, …}]`). */
  readonly breakdown?: boolean | undefined;
}

/** A row's per-model numbers (`--breakdown`). */
export type ModelPart = { model: string | null } & UsageNumbers;

/** The extra fields of a row made by a Grouping: its `--by` value (under `name`) and its breakdown. */
export interface GroupFields {
  /** The `--by` value of the row (null: not known); absent without `--by`. */
  group?: string | null;
  breakdown?: ModelPart[];
}

const NONE = "\u0000";

function breakdownOf(a: Acc, unpriced: Set<string>): ModelPart[] {
  return [...group(a.items, (c) => c.model ?? NONE)]
    .sort(([x], [y]) => cmp(x, y))
    .map(([m, g]) => ({ model: m === NONE ? null : m, ...g.numbers(unpriced) }));
}

/** Split `a`'s contributions by the grouping (one part without `by`), each with its fields. */
function split(a: Acc, g: Grouping, unpriced: Set<string>): ({ acc: Acc } & GroupFields)[] {
  const parts: [string | null, Acc][] = g.by ? [...group(a.items, (c) => g.by!.of(c) ?? NONE)].sort(([x], [y]) => cmp(x, y)).map(([k, v]) => [k === NONE ? null : k, v]) : [[null, a]];
  return parts.map(([k, acc]) => ({ acc, ...(g.by ? { group: k } : {}), ...(g.breakdown ? { breakdown: breakdownOf(acc, unpriced) } : {}) }));
}

/** `usage session --json`. */
export interface SessionReport {
  sessions: ({ session_id: string; runtime: string; models: string[]; last_ts: string | null } & UsageNumbers & GroupFields)[];
  totals: UsageNumbers;
  pricing: PricingInfo;
}

/** Per-session report, sessions ordered by their last activity. */
export function sessionReport(u: PricedUsage, order: Order = "asc", g: Grouping = {}): SessionReport {
  const unpriced = new Set<string>();
  const runtime = new Map<string, string>();
  const last = new Map<string, string>();
  for (const { c } of u.items) {
    runtime.set(c.session_id, c.runtime);
    if (c.ts && (last.get(c.session_id) ?? "") < c.ts) last.set(c.session_id, c.ts);
  }
  const groups = group(u.items, (c) => c.session_id);
  const sessions = [...groups]
    .sort(([a], [b]) => cmp(last.get(a) ?? "", last.get(b) ?? "") || cmp(a, b))
    .flatMap(([id, a]) => split(a, g, unpriced).map(({ acc, ...f }) => ({ session_id: id, runtime: runtime.get(id) ?? "", models: modelsOf(acc), last_ts: last.get(id) ?? null, ...acc.numbers(unpriced), ...f })));
  if (order === "desc") sessions.reverse();
  return { sessions, totals: totalsOf(u.items, unpriced), pricing: pricingInfo(u, unpriced) };
}

/** A period report's grouping: hour, day, week (keyed by its first day) or month, in the report's zone (contributions' `day`; hours from `ts`). */
export type Period = "hourly" | "daily" | "weekly" | "monthly";

/** `usage daily --json` (and weekly, keyed by `week`; monthly, keyed by `month`). */
export interface PeriodReport {
  rows: ({ key: string; models: string[] } & UsageNumbers & GroupFields)[];
  totals: UsageNumbers;
  pricing: PricingInfo;
}

/** Options of {@link periodReport}. */
export interface PeriodOptions extends Grouping {
  /** The day weeks start on (default monday: ISO weeks). */
  readonly startOfWeek?: WeekDay | undefined;
  readonly order?: Order | undefined;
  /** hourly: the IANA zone hours are counted in (default UTC). */
  readonly timezone?: string | undefined;
}

/**
 * Per-hour (`yyyy-mm-dd HH:00` in the zone), per-day (`yyyy-mm-dd`), per-week (the week's first day, a Monday by default, like ccusage's
 * `weekly --start-of-week monday`) or per-month (`yyyy-mm`) report of the contributions' `day`s;
 * "unknown" collects rows without a time. With `by`, a period has one row per value.
 */
export function periodReport(u: PricedUsage, period: Period, opts: PeriodOptions = {}): PeriodReport {
  const unpriced = new Set<string>();
  const sow = opts.startOfWeek ?? "monday";
  const hour = (c: UsageContribution) => (c.ts && !Number.isNaN(Date.parse(c.ts)) ? `${localMinute(c.ts, opts.timezone ?? "UTC").slice(0, 13)}:00` : "unknown");
  const keyOf = (c: UsageContribution) => (period === "hourly" ? hour(c) : period === "daily" || c.day === "unknown" ? c.day : period === "weekly" ? weekStart(c.day, sow) : c.day.slice(0, 7));
  const rows = [...group(u.items, keyOf)]
    .sort(([a], [b]) => cmp(a, b))
    .flatMap(([key, a]) => split(a, opts, unpriced).map(({ acc, ...f }) => ({ key, models: modelsOf(acc), ...acc.numbers(unpriced), ...f })));
  if (opts.order === "desc") rows.reverse();
  return { rows, totals: totalsOf(u.items, unpriced), pricing: pricingInfo(u, unpriced) };
}

/** Burn rate of a block: tokens per minute and USD per hour between its first and last entry. */
export interface BurnRate {
  tokens_per_minute: number;
  cost_per_hour: number | null;
}

/** Where the active block ends up at its burn rate. */
export interface Projection {
  total_tokens: number;
  cost_usd: number | null;
  remaining_minutes: number;
}

/** One 5-hour billing block. */
export interface BlockRow extends UsageNumbers, GroupFields {
  /** Block start: the first entry's time floored to the hour (ISO). */
  start: string;
  /** start + 5 hours (ISO). */
  end: string;
  /** Time of the block's first entry (ISO). */
  first_ts: string;
  /** Time of the block's last entry (ISO). */
  last_ts: string;
  /** The block is still open: its end is in the future and its last entry less than 5 hours ago. */
  active: boolean;
  /** Minutes left until the end (active block only, else null). */
  remaining_minutes: number | null;
  /** Null when first and last entry are the same minute. */
  burn_rate: BurnRate | null;
  /** The active block's numbers at the end at its burn rate (else null). */
  projection: Projection | null;
  /** With --token-limit: total tokens as a percentage of it (and the projection's, for the active block). */
  limit_percent?: number;
  projected_limit_percent?: number | null;
  models: string[];
  sessions: number;
}

/** Time without activity between two blocks: from the earlier block's last entry + 5 hours to the next one's first entry. */
export interface BlockGap {
  start: string;
  end: string;
  minutes: number;
}

/** `usage blocks --json`. */
export interface BlocksReport {
  blocks: BlockRow[];
  gaps: BlockGap[];
  totals: UsageNumbers;
  untimed_tokens: number | null;
  /** --token-limit: the limit (a number, or the largest past block's total for `max`). */
  token_limit: number | null;
  pricing: PricingInfo;
}

/** Options of {@link blocksReport}. */
export interface BlocksOptions extends Grouping {
  readonly now?: number;
  /** Only the active block (--active). */
  readonly active?: boolean;
  /** --token-limit: a token count, or "max" (the largest total of the blocks before the last). */
  readonly tokenLimit?: number | "max" | undefined;
}

const BLOCK_MS = 5 * 3600_000;
const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

/**
 * 5-hour billing blocks like ccusage's: entries in time order; a block starts at its first entry's
 * time floored to the (UTC) hour, and an entry starts a new block when it falls at or after the
 * block's end or more than 5 hours after the previous entry. Entries without a time are left out
 * (counted in `untimed_tokens`). Burn rate = tokens (USD) over the minutes from the first to the
 * last entry; the active block's projection adds that rate over its remaining minutes.
 */
export function blocksReport(u: PricedUsage, opts: BlocksOptions = {}): BlocksReport {
  const now = opts.now ?? Date.now();
  const unpriced = new Set<string>();
  const timed = u.items.filter((p) => p.c.ts !== null).map((p) => ({ p, t: Date.parse(p.c.ts!) })).sort((a, b) => a.t - b.t);
  const groups: { start: number; first: number; last: number; items: Priced[] }[] = [];
  for (const { p, t } of timed) {
    const cur = groups[groups.length - 1];
    if (!cur || t >= cur.start + BLOCK_MS || t - cur.last > BLOCK_MS) {
      const start = Math.floor(t / 3600_000) * 3600_000;
      groups.push({ start, first: t, last: t, items: [p] });
    } else {
      cur.last = t;
      cur.items.push(p);
    }
  }
  const gaps: BlockGap[] = [];
  for (let i = 1; i < groups.length; i++) {
    const from = groups[i - 1]!.last + BLOCK_MS;
    const to = groups[i]!.first;
    if (to > from) gaps.push({ start: new Date(from).toISOString(), end: new Date(to).toISOString(), minutes: Math.round((to - from) / 60_000) });
  }
  const totalOf = (g: (typeof groups)[number]) => g.items.reduce((a, p) => a + (totalTokens(p.c.usage) ?? 0), 0);
  const limit = opts.tokenLimit === "max" ? (groups.length > 1 ? Math.max(...groups.slice(0, -1).map(totalOf)) : groups.length ? totalOf(groups[0]!) : null) : (opts.tokenLimit ?? null);
  let blocks: BlockRow[] = groups.flatMap((g) => {
    const whole = new Acc();
    for (const p of g.items) whole.add(p);
    const active = now < g.start + BLOCK_MS && now - g.last < BLOCK_MS;
    return split(whole, opts, unpriced).map(({ acc, ...f }) => {
      const n = acc.numbers(unpriced);
      const first = Math.min(...acc.items.map((p) => Date.parse(p.c.ts!)));
      const last = Math.max(...acc.items.map((p) => Date.parse(p.c.ts!)));
      const minutes = (last - first) / 60_000;
      const burn: BurnRate | null = minutes >= 1 ? { tokens_per_minute: round((n.total_tokens ?? 0) / minutes), cost_per_hour: n.cost_usd === null ? null : round((n.cost_usd / minutes) * 60, 4) } : null;
      const remaining = active ? Math.max(0, Math.round((g.start + BLOCK_MS - now) / 60_000)) : null;
      const projection: Projection | null =
        active && remaining !== null
          ? {
              total_tokens: Math.round((n.total_tokens ?? 0) + (burn ? burn.tokens_per_minute * remaining : 0)),
              cost_usd: n.cost_usd === null ? null : round(n.cost_usd + (burn?.cost_per_hour ? (burn.cost_per_hour / 60) * remaining : 0), 4),
              remaining_minutes: remaining,
            }
          : null;
      const row: BlockRow = {
        start: new Date(g.start).toISOString(),
        end: new Date(g.start + BLOCK_MS).toISOString(),
        first_ts: new Date(first).toISOString(),
        last_ts: new Date(last).toISOString(),
        active,
        remaining_minutes: remaining,
        burn_rate: burn,
        projection,
        models: modelsOf(acc),
        sessions: new Set(acc.items.map((p) => p.c.session_id)).size,
        ...n,
        ...f,
      };
      if (limit !== null && limit > 0) {
        row.limit_percent = round(((n.total_tokens ?? 0) / limit) * 100, 1);
        row.projected_limit_percent = projection ? round((projection.total_tokens / limit) * 100, 1) : null;
      }
      return row;
    });
  });
  if (opts.active) blocks = blocks.filter((b) => b.active);
  const counted = opts.active ? groups.filter((g) => now < g.start + BLOCK_MS && now - g.last < BLOCK_MS).flatMap((g) => g.items) : timed.map((x) => x.p);
  const untimed = u.items.filter((p) => p.c.ts === null);
  const ut = untimed.length && !opts.active ? totalsOf(untimed, new Set()).total_tokens : null;
  return { blocks, gaps: opts.active ? [] : gaps, totals: totalsOf(counted, unpriced), untimed_tokens: ut, token_limit: limit, pricing: pricingInfo(u, unpriced) };
}

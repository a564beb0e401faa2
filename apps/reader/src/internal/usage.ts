// `usage daily|monthly|session|blocks`: reports over the contributions @lake/events countUsage
// counts (usage-scan.ts gathers them), so the reader, the adapters' totals and the tests agree.
// Each contribution is priced on its own (pricing.ts priceContribution: a tiered price depends on
// the response's own prompt, a price on its time); rows and totals add up what is priced and say
// what is not.
import { addUsageInto, totalTokens, type Usage, type UsageContribution } from "@lake/events/usage";
import { priceContribution, toPico, type CostMode, type DatasetInfo, type Pricing } from "./pricing.js";
import type { UsageFilters } from "./usage-scan.js";
import { weekStart, type WeekDay } from "./time.js";

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
  add(p: Priced): void {
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

/** `usage session --json`. */
export interface SessionReport {
  sessions: ({ session_id: string; runtime: string; models: string[] } & UsageNumbers)[];
  totals: UsageNumbers;
  pricing: PricingInfo;
}

/** Per-session report, sessions ordered by their last activity. */
export function sessionReport(u: PricedUsage, order: Order = "asc"): SessionReport {
  const unpriced = new Set<string>();
  const runtime = new Map<string, string>();
  const last = new Map<string, string>();
  for (const { c } of u.items) {
    runtime.set(c.session_id, c.runtime);
    if (c.ts && (last.get(c.session_id) ?? "") < c.ts) last.set(c.session_id, c.ts);
  }
  const groups = group(u.items, (c) => c.session_id);
  const sessions = [...groups]
    .map(([id, g]) => ({ session_id: id, runtime: runtime.get(id) ?? "", models: modelsOf(g), ...g.numbers(unpriced) }))
    .sort((a, b) => cmp(last.get(a.session_id) ?? "", last.get(b.session_id) ?? "") || cmp(a.session_id, b.session_id));
  if (order === "desc") sessions.reverse();
  return { sessions, totals: totalsOf(u.items, unpriced), pricing: pricingInfo(u, unpriced) };
}

/** A period report's grouping: day, week (keyed by its first day) or month, in the report's zone (contributions' `day`). */
export type Period = "daily" | "weekly" | "monthly";

/** `usage daily --json` (and weekly, keyed by `week`; monthly, keyed by `month`). */
export interface PeriodReport {
  rows: ({ key: string; models: string[]; breakdown?: ({ key: string } & UsageNumbers)[] } & UsageNumbers)[];
  totals: UsageNumbers;
  pricing: PricingInfo;
}

/** What a period's row can be broken down by (`--by`). */
export type Breakdown = "model" | "runtime";

/** Options of {@link periodReport}. */
export interface PeriodOptions {
  readonly by?: Breakdown | undefined;
  /** The day weeks start on (default monday: ISO weeks). */
  readonly startOfWeek?: WeekDay | undefined;
  readonly order?: Order | undefined;
}

/**
 * Per-day (`yyyy-mm-dd`), per-week (the week's first day, a Monday by default, like ccusage's
 * `weekly --start-of-week monday`) or per-month (`yyyy-mm`) report of the contributions' `day`s;
 * "unknown" collects rows without a time. With `by`, each row also carries its numbers per model
 * (no model: "unknown") or per runtime.
 */
export function periodReport(u: PricedUsage, period: Period, opts: PeriodOptions = {}): PeriodReport {
  const unpriced = new Set<string>();
  const by = opts.by;
  const sow = opts.startOfWeek ?? "monday";
  const keyOf = (c: UsageContribution) => (period === "daily" || c.day === "unknown" ? c.day : period === "weekly" ? weekStart(c.day, sow) : c.day.slice(0, 7));
  const groups = group(u.items, keyOf);
  const parts = new Map<string, ({ key: string } & UsageNumbers)[]>();
  if (by) {
    const sub = (c: UsageContribution) => (by === "model" ? (c.model ?? "unknown") : c.runtime);
    for (const [k, g] of group(u.items, (c) => `${keyOf(c)}\0${sub(c)}`)) {
      const [key, part] = k.split("\0") as [string, string];
      let l = parts.get(key);
      if (!l) parts.set(key, (l = []));
      l.push({ key: part, ...g.numbers(unpriced) });
    }
    for (const l of parts.values()) l.sort((a, b) => cmp(a.key, b.key));
  }
  const rows = [...groups]
    .map(([key, g]) => ({ key, models: modelsOf(g), ...g.numbers(unpriced), ...(by ? { breakdown: parts.get(key) ?? [] } : {}) }))
    .sort((a, b) => cmp(a.key, b.key));
  if (opts.order === "desc") rows.reverse();
  return { rows, totals: totalsOf(u.items, unpriced), pricing: pricingInfo(u, unpriced) };
}

/** One 5-hour billing block. */
export interface BlockRow extends UsageNumbers {
  /** Block start: the first entry's time floored to the hour (ISO). */
  start: string;
  /** start + 5 hours (ISO). */
  end: string;
  /** Time of the block's last entry (ISO). */
  last_ts: string;
  /** The block is still open: its end is in the future and its last entry less than 5 hours ago. */
  active: boolean;
  models: string[];
  sessions: number;
}

const BLOCK_MS = 5 * 3600_000;

/**
 * 5-hour billing blocks like ccusage's: entries in time order; a block starts at its first entry's
 * time floored to the hour, and an entry starts a new block when it falls at or after the block's
 * end or more than 5 hours after the previous entry. Entries without a time are left out (counted
 * in `untimed_tokens`).
 */
export function blocksReport(u: PricedUsage, now: number = Date.now()): { blocks: BlockRow[]; totals: UsageNumbers; untimed_tokens: number | null; pricing: PricingInfo } {
  const unpriced = new Set<string>();
  const timed = u.items.filter((p) => p.c.ts !== null).map((p) => ({ p, t: Date.parse(p.c.ts!) })).sort((a, b) => a.t - b.t);
  const groups: { start: number; last: number; items: Priced[] }[] = [];
  for (const { p, t } of timed) {
    const cur = groups[groups.length - 1];
    if (!cur || t >= cur.start + BLOCK_MS || t - cur.last > BLOCK_MS) {
      const start = Math.floor(t / 3600_000) * 3600_000;
      groups.push({ start, last: t, items: [p] });
    } else {
      cur.last = t;
      cur.items.push(p);
    }
  }
  const blocks = groups.map((g) => {
    const t = new Acc();
    for (const p of g.items) t.add(p);
    return {
      start: new Date(g.start).toISOString(),
      end: new Date(g.start + BLOCK_MS).toISOString(),
      last_ts: new Date(g.last).toISOString(),
      active: now < g.start + BLOCK_MS && now - g.last < BLOCK_MS,
      models: modelsOf(t),
      sessions: new Set(g.items.map((p) => p.c.session_id)).size,
      ...t.numbers(unpriced),
    };
  });
  const untimed = u.items.filter((p) => p.c.ts === null);
  const ut = untimed.length ? totalsOf(untimed, new Set()).total_tokens : null;
  return { blocks, totals: totalsOf(timed.map((x) => x.p), unpriced), untimed_tokens: ut, pricing: pricingInfo(u, unpriced) };
}

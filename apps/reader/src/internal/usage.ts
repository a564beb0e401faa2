// `usage daily|monthly|session|blocks`: reports over the contributions @lake/events countUsage
// counts (usage-scan.ts gathers them), so the reader, the adapters' totals and the tests agree.
import { groupUsage, totalTokens, type UsageContribution, type UsageTotals } from "@lake/events/usage";
import { PRICING_DATE, PRICING_VERSION, costOf, priceOf } from "./pricing.js";
import type { UsageFilters } from "./usage-scan.js";

/** Token and cost keys of every usage row (null = nobody reported it / unpriced). */
export interface UsageNumbers {
  input_tokens: number | null;
  cached_input_tokens: number | null;
  cache_write_tokens: number | null;
  output_tokens: number | null;
  reasoning_tokens: number | null;
  total_tokens: number | null;
  cost_usd: number | null;
}

/** Pricing facts written beside a report. */
export interface PricingInfo {
  version: string;
  date: string;
  /** Models that reported tokens but are not in the table (their rows' cost_usd is null). */
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

/** Token and cost numbers of a group; unpriced models are collected in `unpriced`. */
export function numbers(t: Pick<UsageTotals, "usage" | "by_model">, unpriced: Set<string>): UsageNumbers {
  let cost = 0;
  let priced = true;
  for (const [model, u] of t.by_model) {
    const tt = totalTokens(u);
    if (!tt) continue;
    const price = priceOf(model);
    if (!price) {
      priced = false;
      unpriced.add(model ?? "(unknown model)");
      continue;
    }
    cost += costOf(u, price);
  }
  const u = t.usage;
  return {
    input_tokens: u.input_tokens ?? null,
    cached_input_tokens: u.cached_input_tokens ?? null,
    cache_write_tokens: u.cache_write_tokens ?? null,
    output_tokens: u.output_tokens ?? null,
    reasoning_tokens: u.reasoning_tokens ?? null,
    total_tokens: totalTokens(u),
    cost_usd: priced ? Math.round(cost * 1e6) / 1e6 : null,
  };
}

/** Code-unit order (no locale: ids and ISO dates; and String#localeCompare costs ~15 ms to set up). */
function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function totalsOf(cs: readonly UsageContribution[], unpriced: Set<string>): UsageNumbers {
  const g = groupUsage(cs, () => "all").get("all") ?? { usage: {}, by_model: new Map(), count: 0 };
  return numbers(g, unpriced);
}

function modelsOf(t: UsageTotals): string[] {
  return [...t.by_model.keys()].filter((m): m is string => m !== null).sort();
}

function pricing(unpriced: Set<string>): PricingInfo {
  return { version: PRICING_VERSION, date: PRICING_DATE, unpriced_models: [...unpriced].sort() };
}

/** `usage session --json`. */
export interface SessionReport {
  sessions: ({ session_id: string; runtime: string; models: string[] } & UsageNumbers)[];
  totals: UsageNumbers;
  pricing: PricingInfo;
}

/** Per-session report. */
export function sessionReport(cs: readonly UsageContribution[]): SessionReport {
  const unpriced = new Set<string>();
  const runtime = new Map<string, string>();
  const last = new Map<string, string>();
  for (const c of cs) {
    runtime.set(c.session_id, c.runtime);
    if (c.ts && (last.get(c.session_id) ?? "") < c.ts) last.set(c.session_id, c.ts);
  }
  const groups = groupUsage(cs, (c) => c.session_id);
  const sessions = [...groups]
    .map(([id, g]) => ({ session_id: id, runtime: runtime.get(id) ?? "", models: modelsOf(g), ...numbers(g, unpriced) }))
    .sort((a, b) => cmp(last.get(a.session_id) ?? "", last.get(b.session_id) ?? "") || cmp(a.session_id, b.session_id));
  return { sessions, totals: totalsOf(cs, unpriced), pricing: pricing(unpriced) };
}

/** A period report's grouping: UTC day, ISO week (keyed by its Monday) or month. */
export type Period = "daily" | "weekly" | "monthly";

/** The Monday (yyyy-mm-dd) of the ISO week holding a UTC day; "unknown" stays. */
export function weekOf(day: string): string {
  if (day === "unknown") return day;
  const t = Date.parse(`${day}T00:00:00Z`);
  const monday = t - ((new Date(t).getUTCDay() + 6) % 7) * 86_400_000;
  return new Date(monday).toISOString().slice(0, 10);
}

/** `usage daily --json` (and weekly, keyed by `week`; monthly, keyed by `month`). */
export interface PeriodReport {
  rows: ({ key: string; models: string[]; breakdown?: ({ key: string } & UsageNumbers)[] } & UsageNumbers)[];
  totals: UsageNumbers;
  pricing: PricingInfo;
}

/** What a period's row can be broken down by (`--by`). */
export type Breakdown = "model" | "runtime";

/**
 * Per-day (`yyyy-mm-dd`), per-week (the week's Monday, like ccusage's `weekly`) or per-month
 * (`yyyy-mm`) report; "unknown" collects rows without a time. With `by`, each row also carries its
 * numbers per model (no model: "unknown") or per runtime.
 */
export function periodReport(cs: readonly UsageContribution[], period: Period, by?: Breakdown): PeriodReport {
  const unpriced = new Set<string>();
  const keyOf = (c: UsageContribution) => (period === "daily" || c.day === "unknown" ? c.day : period === "weekly" ? weekOf(c.day) : c.day.slice(0, 7));
  const groups = groupUsage(cs, keyOf);
  const parts = new Map<string, ({ key: string } & UsageNumbers)[]>();
  if (by) {
    const sub = (c: UsageContribution) => (by === "model" ? (c.model ?? "unknown") : c.runtime);
    for (const [k, g] of groupUsage(cs, (c) => `${keyOf(c)}\0${sub(c)}`)) {
      const [key, part] = k.split("\0") as [string, string];
      let l = parts.get(key);
      if (!l) parts.set(key, (l = []));
      l.push({ key: part, ...numbers(g, unpriced) });
    }
    for (const l of parts.values()) l.sort((a, b) => cmp(a.key, b.key));
  }
  const rows = [...groups]
    .map(([key, g]) => ({ key, models: modelsOf(g), ...numbers(g, unpriced), ...(by ? { breakdown: parts.get(key) ?? [] } : {}) }))
    .sort((a, b) => cmp(a.key, b.key));
  return { rows, totals: totalsOf(cs, unpriced), pricing: pricing(unpriced) };
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
export function blocksReport(cs: readonly UsageContribution[], now: number = Date.now()): { blocks: BlockRow[]; totals: UsageNumbers; untimed_tokens: number | null; pricing: PricingInfo } {
  const unpriced = new Set<string>();
  const timed = cs.filter((c) => c.ts !== null).map((c) => ({ c, t: Date.parse(c.ts!) })).sort((a, b) => a.t - b.t);
  const groups: { start: number; last: number; items: UsageContribution[] }[] = [];
  for (const { c, t } of timed) {
    const cur = groups[groups.length - 1];
    if (!cur || t >= cur.start + BLOCK_MS || t - cur.last > BLOCK_MS) {
      const start = Math.floor(t / 3600_000) * 3600_000;
      groups.push({ start, last: t, items: [c] });
    } else {
      cur.last = t;
      cur.items.push(c);
    }
  }
  const blocks = groups.map((g) => {
    const t = groupUsage(g.items, () => "b").get("b")!;
    return {
      start: new Date(g.start).toISOString(),
      end: new Date(g.start + BLOCK_MS).toISOString(),
      last_ts: new Date(g.last).toISOString(),
      active: now < g.start + BLOCK_MS && now - g.last < BLOCK_MS,
      models: modelsOf(t),
      sessions: new Set(g.items.map((c) => c.session_id)).size,
      ...numbers(t, unpriced),
    };
  });
  const untimed = cs.filter((c) => c.ts === null);
  const ut = untimed.length ? totalTokens(groupUsage(untimed, () => "u").get("u")!.usage) : null;
  return { blocks, totals: totalsOf(timed.map((x) => x.c), unpriced), untimed_tokens: ut, pricing: pricing(unpriced) };
}

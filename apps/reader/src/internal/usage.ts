// `usage daily|monthly|session|blocks`: usage-bearing rows are selected with DuckDB and counted by
// @lake/events countUsage, so the reader, the adapters' totals and the tests agree.
import { USAGE_KEYS, countUsage, groupUsage, totalTokens, type UsageContribution, type UsageRecord, type UsageTotals, type Usage } from "@lake/events";
import { ReaderError } from "./errors.js";
import { PRICING_DATE, PRICING_VERSION, costOf, priceOf } from "./pricing.js";
import type { ReadModel } from "./readmodel.js";
import { sqlString } from "./readmodel.js";

/** Filters of a usage report. */
export interface UsageFilters {
  /** First UTC day included, yyyy-mm-dd. */
  readonly since?: string | undefined;
  /** Last UTC day included, yyyy-mm-dd. */
  readonly until?: string | undefined;
  readonly runtimes?: readonly string[] | undefined;
  readonly models?: readonly string[] | undefined;
}

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

/** Normalize a --since/--until value (yyyy-mm-dd or yyyymmdd). */
export function parseDay(flag: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(v);
  const d = m ? `${m[1]}-${m[2]}-${m[3]}` : "";
  if (!m || Number.isNaN(Date.parse(`${d}T00:00:00Z`)) || new Date(`${d}T00:00:00Z`).toISOString().slice(0, 10) !== d) {
    throw new ReaderError("Usage", `${flag} ${JSON.stringify(v)}: expected a date yyyy-mm-dd or yyyymmdd`);
  }
  return d;
}

const USAGE_PRED = USAGE_KEYS.map((k) => `${k} IS NOT NULL`).join(" OR ");

const ORDER = "source_file, file_row";

/**
 * Load the usage-bearing rows of the read model — the rows countUsage reads — in a stable order.
 * DuckDB drops, before the rows reach JS, only rows countUsage would drop itself in the same way:
 * replayed rows (rule 1), second copies of one record (rule 2: same session, stream and record_id,
 * or same session and content hash; the first in order stays), and for a `delta` response sharing
 * a usage_key every copy but the one countUsage keeps (rule 3: the largest output_tokens, a tie
 * preferring the non-sidechain copy, then the first in order). Cumulative rows all stay (rule 4).
 * So countUsage over these rows gives the same totals as over every row.
 */
export async function loadUsageRecords(rm: ReadModel, runtimes?: readonly string[]): Promise<UsageRecord[]> {
  const where = [`(${USAGE_PRED})`, "NOT coalesce(replayed, false)"];
  if (runtimes && runtimes.length) where.push(`runtime IN (${runtimes.map(sqlString).join(", ")})`);
  const res = await rm.conn.run(`
    WITH u AS (
      SELECT session_id, runtime, stream, content_hash, record_id, ts, model, ${USAGE_KEYS.join(", ")}, usage_mode, usage_key, is_sidechain,
        source_path, source_line, source_offset, source_file, file_row
      FROM fleet_rows WHERE ${where.join(" AND ")}
      QUALIFY row_number() OVER (PARTITION BY session_id,
        CASE WHEN record_id IS NOT NULL THEN 'i' || stream || chr(31) || record_id ELSE 'h' || content_hash END ORDER BY ${ORDER}) = 1
    )
    , v AS (
      SELECT * FROM u
      QUALIFY usage_mode = 'cumulative' OR usage_key IS NULL OR row_number() OVER (
        PARTITION BY session_id, CASE WHEN coalesce(usage_mode, 'delta') <> 'cumulative' THEN usage_key END
        ORDER BY coalesce(output_tokens, -1) DESC, coalesce(is_sidechain, false), ${ORDER}) = 1
    )
    SELECT CAST(to_json(coalesce(list([session_id, runtime, stream, content_hash, record_id, CAST(epoch_ms(ts) AS VARCHAR), model,
      CAST(input_tokens AS VARCHAR), CAST(cached_input_tokens AS VARCHAR), CAST(cache_write_tokens AS VARCHAR), CAST(output_tokens AS VARCHAR),
      CAST(reasoning_tokens AS VARCHAR), usage_mode, usage_key, CAST(is_sidechain AS VARCHAR)] ORDER BY ${ORDER}), [])) AS VARCHAR) AS j
    FROM v`);
  // One JSON text for the whole result: far cheaper than converting value by value.
  const text = (await res.getColumnsJS())[0]?.[0];
  const rows = JSON.parse(typeof text === "string" ? text : "[]") as (string | null)[][];
  const out: UsageRecord[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const [sid, rt, st, ch, rid, ts, model, i0, i1, i2, i3, i4, mode, key, side] = rows[i]!;
    const usage: Usage = {};
    const us = [i0, i1, i2, i3, i4];
    for (let k = 0; k < 5; k++) {
      const v = us[k];
      if (v !== null && v !== undefined) usage[USAGE_KEYS[k]!] = Number(v);
    }
    const r: Record<string, unknown> = { session_id: sid, runtime: rt, stream: st, content_hash: ch, usage };
    if (rid !== null) r.record_id = rid;
    if (ts !== null && ts !== undefined) r.ts = new Date(Number(ts)).toISOString();
    if (model !== null) r.model = model;
    if (mode !== null) r.usage_mode = mode;
    if (key !== null) r.usage_key = key;
    if (side !== null && side !== undefined) r.is_sidechain = side === "true";
    out[i] = r as unknown as UsageRecord;
  }
  return out;
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
    .sort((a, b) => (last.get(a.session_id) ?? "").localeCompare(last.get(b.session_id) ?? "") || a.session_id.localeCompare(b.session_id));
  return { sessions, totals: totalsOf(cs, unpriced), pricing: pricing(unpriced) };
}

/** `usage daily --json` (and monthly, keyed by `month`). */
export interface PeriodReport {
  rows: ({ key: string; models: string[] } & UsageNumbers)[];
  totals: UsageNumbers;
  pricing: PricingInfo;
}

/** Per-day (`yyyy-mm-dd`) or per-month (`yyyy-mm`) report; "unknown" collects rows without a time. */
export function periodReport(cs: readonly UsageContribution[], period: "daily" | "monthly"): PeriodReport {
  const unpriced = new Set<string>();
  const groups = groupUsage(cs, (c) => (period === "daily" || c.day === "unknown" ? c.day : c.day.slice(0, 7)));
  const rows = [...groups].map(([key, g]) => ({ key, models: modelsOf(g), ...numbers(g, unpriced) })).sort((a, b) => a.key.localeCompare(b.key));
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

/** Count the usage of the read model's rows and filter it. */
export async function contributions(rm: ReadModel, f: UsageFilters): Promise<UsageContribution[]> {
  const recs = await loadUsageRecords(rm, f.runtimes);
  return filterContributions(countUsage(recs), f);
}

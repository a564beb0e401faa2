import type { CanonicalRecord } from "./record-core.js";
import { addUsageInto, isEmptyUsage, recordDay, usageDelta, usageEquals, type Usage } from "./usage.js";

/** The part of a record usage accounting reads. */
export type UsageRecord = Pick<
  CanonicalRecord,
  "session_id" | "runtime" | "stream" | "content_hash" | "record_id" | "ts" | "model" | "usage" | "usage_mode" | "usage_key" | "is_sidechain" | "replayed" | "cost_usd"
>;

/** One counted piece of usage: what a record adds to its session's total. */
export interface UsageContribution {
  readonly session_id: string;
  readonly runtime: string;
  readonly stream: string;
  readonly model: string | null;
  readonly ts: string | null;
  /** UTC day of ts, or "unknown". */
  readonly day: string;
  readonly usage: Usage;
  /** The cost the runtime recorded for this response (the counted copy's `cost_usd`); absent when none. */
  readonly cost_usd?: number | undefined;
  /**
   * Set on a contribution that sums several responses (a rollup row): how many, and a prompt size
   * inside the prompt-size class they all fall in (a tiered price is chosen by it). Absent on one
   * response, whose prompt is its own input + cache reads + cache writes.
   */
  readonly responses?: number | undefined;
  readonly prompt?: number | undefined;
}

/**
 * What countUsage did with a record that carries usage: `counted` (it made a contribution),
 * `replayed` (rule 1: history a fork or resume replays), `duplicate` (rule 2: the same record seen
 * again), `copy` (rule 3: another copy of the same response counts), `voided` (rule 3: the response's
 * last `latest` copy reports nothing), `unchanged` (rule 4: a running total that did not grow).
 */
export type UsageOutcome = "counted" | "replayed" | "duplicate" | "copy" | "voided" | "unchanged";

/** Options of {@link countUsage}. */
export interface CountUsageOptions {
  /** Called once for every record that carries usage (a `latest` copy without usage too), with what was done with it. */
  readonly onRecord?: ((rec: UsageRecord, outcome: UsageOutcome) => void) | undefined;
}

/**
 * The usage a set of canonical records counts, one contribution per billed response. The one
 * function the reader, the digest and the tests share. Rules:
 * 1. Records without usage, or marked `replayed`, count nothing.
 * 2. The same record seen twice (same session, stream and record_id; or, without a record_id, the
 *    same session and content hash) counts once: a resumed, copied or re-landed transcript adds nothing.
 * 3. Records sharing a `usage_key` are one billed response written several times (keys are provider
 *    ids, unique across sessions, so a resumed session's copied history counts once, for the session
 *    read first). `delta` copies: the largest output_tokens counts (a tie prefers the non-sidechain
 *    copy, then the first read) — a response streamed over several lines. `latest` copies: the last
 *    one read counts — a message rewritten in place, or voided by a later reported-zero copy.
 * 4. `cumulative` records are running totals per (session, stream): each counts its difference
 *    from the previous total in time order; a repeated identical total counts nothing; so the
 *    stream's total is its last cumulative total.
 */
export function countUsage(records: Iterable<UsageRecord>, options: CountUsageOptions = {}): UsageContribution[] {
  const on = options.onRecord;
  const seen = new Set<string>();
  const keyed = new Map<string, { rec: UsageRecord; order: number }>();
  const cumulative = new Map<string, { rec: UsageRecord; order: number }[]>();
  const plain: { rec: UsageRecord; order: number }[] = [];
  let order = 0;
  for (const rec of records) {
    order++;
    // A `latest` copy without usage still counts: it voids the copies read before it.
    const carries = !isEmptyUsage(rec.usage) || (rec.usage_mode === "latest" && rec.usage_key !== undefined);
    if (!carries) continue;
    if (rec.replayed) {
      on?.(rec, "replayed");
      continue;
    }
    const id = rec.record_id !== undefined ? `i\0${rec.session_id}\0${rec.stream}\0${rec.record_id}` : `h\0${rec.session_id}\0${rec.content_hash}`;
    if (seen.has(id)) {
      on?.(rec, "duplicate");
      continue;
    }
    seen.add(id);
    if (rec.usage_mode === "cumulative") {
      const k = `${rec.session_id}\0${rec.stream}`;
      let list = cumulative.get(k);
      if (!list) cumulative.set(k, (list = []));
      list.push({ rec, order });
    } else if (rec.usage_key !== undefined) {
      const latest = rec.usage_mode === "latest";
      const k = `${latest ? "l" : "d"}\0${rec.usage_key}`;
      const cur = keyed.get(k);
      if (!cur || latest || better(rec, cur.rec)) {
        if (cur) on?.(cur.rec, "copy");
        keyed.set(k, { rec, order: cur ? Math.min(cur.order, order) : order });
      } else on?.(rec, "copy");
    } else plain.push({ rec, order });
  }
  const out: { c: UsageContribution; order: number }[] = [];
  const push = (rec: UsageRecord, usage: Usage, o: number, cost: number | undefined) =>
    out.push({
      c: { session_id: rec.session_id, runtime: rec.runtime, stream: rec.stream, model: rec.model ?? null, ts: rec.ts ?? null, day: recordDay(rec), usage, cost_usd: cost },
      order: o,
    });
  for (const { rec, order: o } of plain) {
    on?.(rec, "counted");
    push(rec, { ...rec.usage }, o, rec.cost_usd);
  }
  for (const { rec, order: o } of keyed.values()) {
    if (isEmptyUsage(rec.usage)) on?.(rec, "voided");
    else {
      on?.(rec, "counted");
      push(rec, { ...rec.usage }, o, rec.cost_usd);
    }
  }
  for (const list of cumulative.values()) {
    list.sort((a, b) => cmpTs(a.rec.ts, b.rec.ts) || a.order - b.order);
    let prev: Usage | undefined;
    for (const { rec, order: o } of list) {
      const u = rec.usage!;
      if (prev && usageEquals(u, prev)) {
        on?.(rec, "unchanged");
        continue;
      }
      const d = usageDelta(u, prev);
      prev = u;
      // A running total's recorded cost (if any) is a total too, not this step's: not carried.
      if (!isEmptyUsage(d)) {
        on?.(rec, "counted");
        push(rec, d, o, undefined);
      } else on?.(rec, "unchanged");
    }
  }
  out.sort((a, b) => a.order - b.order);
  return out.map((x) => x.c);
}

function better(a: UsageRecord, b: UsageRecord): boolean {
  const ao = a.usage?.output_tokens ?? -1;
  const bo = b.usage?.output_tokens ?? -1;
  if (ao !== bo) return ao > bo;
  return !a.is_sidechain && !!b.is_sidechain;
}

function cmpTs(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return 1;
  if (b === undefined) return -1;
  return a < b ? -1 : 1;
}

/** Usage totals of one group (a session, a day, a model …). */
export interface UsageTotals {
  usage: Usage;
  /** Per model (null key = model not known). */
  by_model: Map<string | null, Usage>;
  /** Contributions counted. */
  count: number;
}

/** Group contributions by `key` and sum them (absent ≠ zero), keeping a per-model split. */
export function groupUsage(contributions: Iterable<UsageContribution>, key: (c: UsageContribution) => string): Map<string, UsageTotals> {
  const groups = new Map<string, UsageTotals>();
  for (const c of contributions) {
    const k = key(c);
    let g = groups.get(k);
    if (!g) groups.set(k, (g = { usage: {}, by_model: new Map(), count: 0 }));
    addUsageInto(g.usage, c.usage);
    let m = g.by_model.get(c.model);
    if (!m) g.by_model.set(c.model, (m = {}));
    addUsageInto(m, c.usage);
    g.count++;
  }
  return groups;
}

/** Per-session usage of canonical records (keyed by session_id). */
export function usageBySession(records: Iterable<UsageRecord>): Map<string, UsageTotals & { runtime: string }> {
  const contributions = countUsage(records);
  const runtime = new Map<string, string>();
  for (const c of contributions) runtime.set(c.session_id, c.runtime);
  const groups = groupUsage(contributions, (c) => c.session_id);
  const out = new Map<string, UsageTotals & { runtime: string }>();
  for (const [k, g] of groups) out.set(k, { ...g, runtime: runtime.get(k) ?? "" });
  return out;
}

/** Per-UTC-day usage of canonical records (keyed by yyyy-mm-dd, or "unknown"). */
export function usageByDay(records: Iterable<UsageRecord>): Map<string, UsageTotals> {
  return groupUsage(countUsage(records), (c) => c.day);
}

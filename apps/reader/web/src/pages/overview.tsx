// Overview: cost or tokens per day stacked by model or runtime, this week against last, the active
// 5-hour block, the most expensive sessions, and the daily table (equal to `usage daily --json`).
import { useMemo } from "preact/hooks";
import { qs, useApi } from "../api.js";
import { StackedBars, type StackSeries } from "../chart.js";
import { DateRange, Grid, Page, SessionLink, Toggle } from "../controls.js";
import { addDays, fmtClock, fmtCompact, fmtCost, fmtInt, fmtTime, pageZone, zoneDay } from "../format.js";
import { setQuery } from "../router.js";
import type { BlocksJson, DailyJson, SessionUsageJson, UsageNumbers } from "../types.js";

type Metric = "cost" | "tokens";
const valueOf = (n: UsageNumbers, m: Metric) => (m === "cost" ? (n.cost_usd ?? 0) : (n.total_tokens ?? 0));

type Day = DailyJson["daily"][number];

function sum(rows: readonly Day[], from: string, to: string, m: Metric): number {
  return rows.filter((r) => r.date >= from && r.date <= to).reduce((a, r) => a + valueOf(r, m), 0);
}

/** The cost of the days from..to as the reports show it: priced USD "+ unpriced" when some tokens have no price. */
function costOf(rows: readonly Day[], from: string, to: string): string {
  const days = rows.filter((r) => r.date >= from && r.date <= to);
  const priced = days.filter((r) => r.cost_usd !== null);
  const unpriced_tokens = days.reduce((a, r) => a + r.unpriced_tokens, 0);
  return fmtCost({ cost_usd: priced.length || !unpriced_tokens ? priced.reduce((a, r) => a + r.cost_usd!, 0) : null, unpriced_tokens });
}

export function Overview(props: { query: URLSearchParams }) {
  const q = props.query;
  const by = q.get("by") === "runtime" ? "runtime" : "model";
  const metric: Metric = q.get("metric") === "tokens" ? "tokens" : "cost";
  const since = q.get("since") ?? "";
  const until = q.get("until") ?? "";
  // Days counted in the page's zone (?tz=, else the server's), as `usage --timezone` counts them.
  const timezone = pageZone(q.toString());
  const daily = useApi<DailyJson>(`/api/usage/daily${qs({ since, until, timezone })}`);
  // The same days split by model or runtime (`usage daily --by K --json`: one row per day and key).
  const split = useApi<DailyJson>(`/api/usage/daily${qs({ by, since, until, timezone })}`);
  const sessions = useApi<SessionUsageJson>(`/api/usage/session${qs({ since, until, timezone })}`);
  const blocks = useApi<BlocksJson>(`/api/usage/blocks${qs({ timezone })}`);
  const fmt = metric === "cost" ? (n: number) => `$${n < 10 ? n.toFixed(2) : n.toFixed(1)}` : fmtCompact;

  const parts = useMemo(() => (split.data?.daily ?? []).filter((r) => r.date !== "unknown").map((r) => ({ ...r, key: String(r[by] ?? "unknown") })), [split.data, by]);
  const chart = useMemo(() => {
    const labels = [...new Set(parts.map((r) => r.date))].sort();
    const keys = new Map<string, number>();
    for (const r of parts) keys.set(r.key, (keys.get(r.key) ?? 0) + valueOf(r, metric));
    const names = [...keys].sort((a, b) => b[1] - a[1]).map(([k]) => k);
    const unpricedSet = new Set(split.data?.pricing.unpriced_models ?? []);
    const at = new Map(parts.map((r) => [`${r.date}\0${r.key}`, r]));
    const series: StackSeries[] = names.map((name) => ({ name, unpriced: metric === "cost" && unpricedSet.has(name), values: labels.map((d) => valueOf(at.get(`${d}\0${name}`) ?? ({} as UsageNumbers), metric)) }));
    return { labels, series };
  }, [parts, metric, split.data]);

  const rows = daily.data?.daily ?? [];
  // The week ends at the range's end, else at the last day with usage (the card names the day).
  const end = until || rows.filter((r) => r.date !== "unknown").pop()?.date || zoneDay(new Date());
  const thisWeek = sum(rows, addDays(end, -6), end, metric);
  const lastWeek = sum(rows, addDays(end, -13), addDays(end, -7), metric);
  const change = lastWeek > 0 ? ((thisWeek - lastWeek) / lastWeek) * 100 : null;
  const active = blocks.data?.blocks.find((b) => b.active);
  const lastBlock = blocks.data?.blocks[blocks.data.blocks.length - 1];
  const top = [...(sessions.data?.sessions ?? [])].sort((a, b) => (b.cost_usd ?? -1) - (a.cost_usd ?? -1) || (b.total_tokens ?? 0) - (a.total_tokens ?? 0)).slice(0, 8);
  const totals = daily.data?.totals;
  const unpriced = daily.data?.pricing.unpriced_models ?? [];

  return (
    <Page
      name="overview"
      title="Usage"
      head={
        <div class="controls">
          <Toggle label="Show" value={metric} options={[["cost", "Cost"], ["tokens", "Tokens"]]} onChange={(v) => setQuery({ metric: v === "cost" ? undefined : v })} />
          <Toggle label="Stack by" value={by} options={[["model", "Model"], ["runtime", "Runtime"]]} onChange={(v) => setQuery({ by: v === "model" ? undefined : v })} />
          <DateRange since={since} until={until} />
          <span class="tz-note" data-testid="days-zone" title="the zone the days are counted in (usage --timezone); the zone control at the top changes it">
            Days in {daily.data?.timezone ?? timezone}
          </span>
        </div>
      }
      error={daily.error}
    >
      <div class="cards">
        <div class="card" data-testid="card-total">
          <div class="card-label">Total cost</div>
          <div class="card-value">{totals ? fmtCost(totals) : "…"}</div>
          <div class="card-sub">
            {totals ? `${fmtCompact(totals.total_tokens)} tokens` : ""}
            {totals && totals.unpriced_tokens > 0 && ` · ${fmtCompact(totals.unpriced_tokens)} unpriced (${unpriced.length} model${unpriced.length === 1 ? "" : "s"})`}
          </div>
        </div>
        <div class="card" data-testid="card-week">
          <div class="card-label">7 days to {end}</div>
          <div class="card-value">{metric === "cost" ? costOf(rows, addDays(end, -6), end) : fmtCompact(thisWeek)}</div>
          <div class="card-sub">
            previous 7 days {metric === "cost" ? costOf(rows, addDays(end, -13), addDays(end, -7)) : fmtCompact(lastWeek)}
            {change !== null && <span class={change > 0 ? "up" : "down"}> {change > 0 ? "▲" : "▼"} {Math.abs(change).toFixed(0)}%</span>}
          </div>
        </div>
        <div class="card" data-testid="card-block">
          <div class="card-label">5-hour block</div>
          {active ? (
            <>
              <div class="card-value">{fmtCost(active)}</div>
              <div class="card-sub">
                active since {fmtTime(active.start)}, ends {fmtClock(active.end).slice(0, 5)} · {fmtCompact(active.total_tokens)} tokens
              </div>
            </>
          ) : (
            <>
              <div class="card-value muted">none active</div>
              <div class="card-sub">{lastBlock ? `last: ${fmtTime(lastBlock.start)} · ${fmtCost(lastBlock)}` : "no timed usage"}</div>
            </>
          )}
        </div>
        <div class="card">
          <div class="card-label">Sessions with usage</div>
          <div class="card-value">{sessions.data ? fmtInt(sessions.data.sessions.length) : "…"}</div>
          <div class="card-sub">{daily.data?.pricing.dataset ? `prices ${daily.data.pricing.dataset.name} ${daily.data.pricing.dataset.version}` : ""}</div>
        </div>
      </div>
      <section class="panel">
        <h2>
          {metric === "cost" ? "Cost" : "Tokens"} per day, by {by}
        </h2>
        {split.loading && !split.data ? <div class="loading">Loading…</div> : chart.labels.length ? <StackedBars labels={chart.labels} series={chart.series} format={fmt} /> : <div class="empty">No usage in this range.</div>}
        {unpriced.length > 0 && <p class="note">Unpriced models (cost not counted, never as zero): {unpriced.join(", ")}</p>}
      </section>
      <div class="two">
        <section class="panel">
          <h2>Top sessions</h2>
          <Grid testid="top-sessions" columns={["Session", "Models", { num: "Tokens" }, { num: "Cost" }]}>
            <tbody>
              {top.map((s) => (
                <tr>
                  <td>
                    <SessionLink id={s.session_id} />
                  </td>
                  <td class="models" title={s.runtime}>{s.models.join(", ")}</td>
                  <td class="num">{fmtCompact(s.total_tokens)}</td>
                  <td class="num">{fmtCost(s)}</td>
                </tr>
              ))}
            </tbody>
          </Grid>
        </section>
        <section class="panel">
          <h2>Per day</h2>
          <Grid testid="daily" columns={["Date", { num: "Input" }, { num: "Cached" }, { num: "Cache write" }, { num: "Output" }, { num: "Total" }, { num: "Cost" }]}>
            <tbody>
              {[...rows].reverse().map((r) => (
                <tr data-date={r.date}>
                  <td>{r.date}</td>
                  <td class="num">{fmtInt(r.input_tokens)}</td>
                  <td class="num">{fmtInt(r.cached_input_tokens)}</td>
                  <td class="num">{fmtInt(r.cache_write_tokens)}</td>
                  <td class="num">{fmtInt(r.output_tokens)}</td>
                  <td class="num">{fmtInt(r.total_tokens)}</td>
                  <td class="num">{fmtCost(r)}</td>
                </tr>
              ))}
            </tbody>
            {totals && (
              <tfoot>
                <tr data-date="total">
                  <td>Total</td>
                  <td class="num">{fmtInt(totals.input_tokens)}</td>
                  <td class="num">{fmtInt(totals.cached_input_tokens)}</td>
                  <td class="num">{fmtInt(totals.cache_write_tokens)}</td>
                  <td class="num">{fmtInt(totals.output_tokens)}</td>
                  <td class="num">{fmtInt(totals.total_tokens)}</td>
                  <td class="num">{fmtCost(totals)}</td>
                </tr>
              </tfoot>
            )}
          </Grid>
        </section>
      </div>
    </Page>
  );
}

// Sessions: `sessions --json` joined with `usage session --json`, filtered by runtime, agent,
// project, date and text, sorted by cost or last activity. Every filter is in the URL.
import { useMemo } from "preact/hooks";
import { useApi } from "../api.js";
import { DateRange, Grid, Page, SessionLink } from "../controls.js";
import { fmtCompact, fmtCost, fmtDuration, fmtInt, fmtTime, zoneDay } from "../format.js";
import { setQuery } from "../router.js";
import type { SessionRow, SessionUsageJson } from "../types.js";

/** A session's project: its repo, else its working directory. */
export const projectOf = (s: Pick<SessionRow, "repo" | "cwd">): string => s.repo ?? s.cwd ?? "";

const distinct = (xs: readonly string[]) => [...new Set(xs.filter((x) => x !== ""))].sort();

export function Sessions(props: { query: URLSearchParams }) {
  const q = props.query;
  const rows = useApi<SessionRow[]>("/api/sessions");
  const usage = useApi<SessionUsageJson>("/api/usage/session");
  const f = { runtime: q.get("runtime") ?? "", agent: q.get("agent") ?? "", project: q.get("project") ?? "", since: q.get("since") ?? "", until: q.get("until") ?? "", text: q.get("q") ?? "" };
  const sort = q.get("sort") === "cost" ? "cost" : "last";
  const cost = useMemo(() => new Map((usage.data?.sessions ?? []).map((s) => [s.session_id, s])), [usage.data]);
  // Sorted by cost, the rows wait for the costs (or their error): they are not shown in one order, then another.
  const ready = rows.data !== undefined && (sort !== "cost" || usage.data !== undefined || usage.error !== undefined);
  const all = ready ? (rows.data ?? []) : [];
  const shown = useMemo(() => {
    const text = f.text.toLowerCase();
    const out = all.filter((s) => {
      if (f.runtime && s.runtime !== f.runtime) return false;
      if (f.agent && s.agent !== f.agent) return false;
      if (f.project && projectOf(s) !== f.project) return false;
      // Days in the page's zone, as the usage reports count them.
      const last = s.last_ts ? zoneDay(s.last_ts) : "";
      const first = s.first_ts ? zoneDay(s.first_ts) : "";
      if (f.since && (!last || last < f.since)) return false;
      if (f.until && (!first || first > f.until)) return false;
      if (text && ![s.session_id, s.cwd, s.repo, s.branch, s.agent, ...(s.models ?? [])].some((x) => x?.toLowerCase().includes(text))) return false;
      return true;
    });
    return out.sort((a, b) =>
      sort === "cost" ? (cost.get(b.session_id)?.cost_usd ?? -1) - (cost.get(a.session_id)?.cost_usd ?? -1) : (b.last_ts ?? "").localeCompare(a.last_ts ?? ""),
    );
  }, [all, cost, f.runtime, f.agent, f.project, f.since, f.until, f.text, sort]);

  const select = (name: keyof typeof f, label: string, options: string[]) => (
    <label class="field">
      {label}
      <select name={name} value={f[name]} onChange={(e) => setQuery({ [name]: (e.target as HTMLSelectElement).value })}>
        <option value="">all</option>
        {options.map((o) => (
          <option value={o}>{o}</option>
        ))}
      </select>
    </label>
  );

  return (
    <Page
      name="sessions"
      title="Sessions"
      head={
        <span class="count" data-testid="session-count">
          {ready ? `${shown.length} of ${all.length}` : "…"}
        </span>
      }
      tools={
        <div class="filters">
          <label class="field grow">
            Text
            <input type="search" name="q" placeholder="id, project, branch, model…" value={f.text} onInput={(e) => setQuery({ q: (e.target as HTMLInputElement).value })} />
          </label>
          {select("runtime", "Runtime", distinct(all.map((s) => s.runtime)))}
          {select("agent", "Agent", distinct(all.map((s) => s.agent)))}
          {select("project", "Project", distinct(all.map(projectOf)))}
          <DateRange since={f.since} until={f.until} />
          <label class="field">
            Sort
            <select name="sort" value={sort} onChange={(e) => setQuery({ sort: (e.target as HTMLSelectElement).value === "cost" ? "cost" : undefined })}>
              <option value="last">last activity</option>
              <option value="cost">cost</option>
            </select>
          </label>
        </div>
      }
      error={rows.error}
    >
      <section class="panel flush">
        <Grid testid="sessions" columns={["Session", "Runtime", "Agent", "Project", "Last activity", { num: "Duration" }, { num: "Turns" }, { num: "Tools" }, "Models", { num: "Tokens" }, { num: "Cost" }]}>
          <tbody>
            {shown.map((s) => {
              const u = cost.get(s.session_id);
              return (
                <tr data-session={s.session_id}>
                  <td>
                    <SessionLink id={s.session_id} />
                    {!s.sealed && <span class="badge live">open</span>}
                  </td>
                  <td class="nowrap">{s.runtime}</td>
                  <td class="nowrap">{s.agent}</td>
                  <td class="path" title={s.cwd ?? ""}>
                    {projectOf(s).split("/").slice(-2).join("/")}
                    {s.branch && <span class="branch">{s.branch}</span>}
                  </td>
                  <td class="nowrap">{fmtTime(s.last_ts)}</td>
                  <td class="num">{fmtDuration(s.duration_s)}</td>
                  <td class="num">{fmtInt(s.user_turns)}</td>
                  <td class="num">
                    {fmtInt(s.tool_calls)}
                    {s.tool_errors > 0 && <span class="err-count"> ({s.tool_errors}✗)</span>}
                  </td>
                  <td class="models">{(s.models ?? []).join(", ")}</td>
                  <td class="num">{u ? fmtCompact(u.total_tokens) : "–"}</td>
                  <td class="num">{u ? fmtCost(u) : "–"}</td>
                </tr>
              );
            })}
          </tbody>
        </Grid>
        {ready && shown.length === 0 && <div class="empty">No session matches.</div>}
      </section>
    </Page>
  );
}

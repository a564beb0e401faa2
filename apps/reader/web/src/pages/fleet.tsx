// Fleet: the live control plane — roster (agents and their heartbeats), leases, intents.
import { useEffect, useState } from "preact/hooks";
import { useApi } from "../api.js";
import { Grid, Page } from "../controls.js";
import { fmtAge, fmtTime } from "../format.js";
import type { IntentRecord, LeaseListEntry, RosterEntry } from "../types.js";

type FleetJson = { roster: (RosterEntry & { live: boolean })[]; leases: LeaseListEntry[]; intents: (IntentRecord & { live: boolean })[] };

export function Fleet() {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), 15_000);
    return () => clearInterval(t);
  }, []);
  const res = useApi<FleetJson>(`/api/fleet${tick ? `?t=${tick}` : ""}`);
  const d = res.data;
  return (
    <Page name="fleet" title="Fleet" head={<span class="count">refreshes every 15 s</span>} error={res.error}>
      <section class="panel flush">
        <h2>
          Roster <span class="count">{d?.roster.length ?? "…"}</span>
        </h2>
        <Grid testid="roster" columns={["Agent", "Runtime", "Repo", "Branch", "Current tool", "Heartbeat", "Up since"]}>
          <tbody>
            {d?.roster.map((a) => (
              <tr>
                <td class="mono">{a.agent_id}</td>
                <td>{a.runtime}</td>
                <td>{a.repo || "–"}</td>
                <td>{a.branch || "–"}</td>
                <td>{a.tool ? <span class="badge live">{a.tool}</span> : <span class="muted">idle</span>}</td>
                <td title={a.updated_at}>{fmtAge(a.updated_at)}</td>
                <td>{fmtTime(a.started_at)}</td>
              </tr>
            ))}
          </tbody>
        </Grid>
        {d && d.roster.length === 0 && <div class="empty">No agent has a live heartbeat.</div>}
      </section>
      <div class="two">
        <section class="panel flush">
          <h2>
            Leases <span class="count">{d?.leases.length ?? "…"}</span>
          </h2>
          <Grid testid="leases" columns={["Repo", "Resource", "Owner", { num: "Epoch" }, "Expires"]}>
            <tbody>
              {d?.leases.map((l) => (
                <tr>
                  <td>{l.repo}</td>
                  <td class="mono">{l.resource}</td>
                  <td>{l.owner}</td>
                  <td class="num">{l.epoch}</td>
                  <td title={l.expires_at}>{fmtTime(l.expires_at)}</td>
                </tr>
              ))}
            </tbody>
          </Grid>
          {d && d.leases.length === 0 && <div class="empty">No lease is held.</div>}
        </section>
        <section class="panel flush">
          <h2>
            Intents <span class="count">{d?.intents.length ?? "…"}</span>
          </h2>
          <Grid testid="intents" columns={["Agent", "Resources", "Note", "Declared"]}>
            <tbody>
              {d?.intents.map((i) => (
                <tr>
                  <td class="mono">{i.agent_id}</td>
                  <td>
                    {i.intents.map((x) => (
                      <div class="mono">
                        {x.repo}:{x.resource}
                      </div>
                    ))}
                  </td>
                  <td>{i.note || "–"}</td>
                  <td title={i.declared_at}>{fmtAge(i.declared_at)}</td>
                </tr>
              ))}
            </tbody>
          </Grid>
          {d && d.intents.length === 0 && <div class="empty">No intent declared.</div>}
        </section>
      </div>
    </Page>
  );
}

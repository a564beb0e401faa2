// Search: `search TEXT --json` — event hits link into the transcript at the hit, then claims.
import { useState } from "preact/hooks";
import { qs, useApi } from "../api.js";
import { Page } from "../controls.js";
import { fmtTime, shortId } from "../format.js";
import { navigate } from "../router.js";
import type { ClaimHit, EventHit } from "../types.js";

/** An FTS5 snippet (matches between [ and ]) with the matches marked. */
function Snippet(props: { text: string }) {
  const parts = props.text.split(/(\[[^\]]*\])/g);
  return (
    <span class="snippet">
      {parts.map((p) => (p.startsWith("[") && p.endsWith("]") && p.length > 2 ? <mark>{p.slice(1, -1)}</mark> : p))}
    </span>
  );
}

/** Where an event hit opens: its session, at its time and stream. */
export const hitHref = (e: EventHit): string => `/session/${encodeURIComponent(e.session_id)}${qs({ at: e.ts ?? undefined, stream: e.stream })}`;

export function Search(props: { query: URLSearchParams }) {
  const q = props.query.get("q") ?? "";
  const [text, setText] = useState(q);
  const res = useApi<{ query: string; events: EventHit[]; claims: ClaimHit[] }>(q ? `/api/search${qs({ q, limit: "50" })}` : undefined);
  return (
    <Page
      name="search"
      title="Search"
      tools={
        <form
          class="search-form"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            navigate(`/search${qs({ q: text.trim() })}`);
          }}
        >
          <input type="search" name="q" placeholder="words that must all appear (events and claims)" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
          <button type="submit">Search</button>
        </form>
      }
      error={res.error}
    >
      {res.loading && <div class="loading">Searching…</div>}
      {res.data && (
        <>
          <section class="panel">
            <h2>
              Events <span class="count">{res.data.events.length}</span>
            </h2>
            {res.data.events.length === 0 && <div class="empty">No event matches “{res.data.query}”.</div>}
            <ol class="hits" data-testid="event-hits">
              {res.data.events.map((e) => (
                <li>
                  <a href={hitHref(e)} class="hit-link">
                    <span class="mono">{shortId(e.session_id)}</span>
                    <span class="hit-meta">
                      {e.stream !== "main" && <span class="badge">agent {e.stream}</span>}
                      {e.kind}
                      {e.tool_name ? ` · ${e.tool_name}` : ""} · {fmtTime(e.ts)}
                    </span>
                  </a>
                  <Snippet text={e.snippet} />
                </li>
              ))}
            </ol>
          </section>
          <section class="panel">
            <h2>
              Claims <span class="count">{res.data.claims.length}</span>
            </h2>
            {res.data.claims.length === 0 && <div class="empty">No claim matches.</div>}
            <ol class="hits" data-testid="claim-hits">
              {res.data.claims.map((c) => (
                <li>
                  <span class="hit-link">
                    <span class="mono">{c.claim_id}</span>
                    <span class="hit-meta">
                      {c.agent}
                      {c.repo ? ` · ${c.repo}` : ""}
                      {c.subject ? ` · ${c.subject}` : ""}
                    </span>
                  </span>
                  <Snippet text={c.snippet} />
                </li>
              ))}
            </ol>
          </section>
        </>
      )}
    </Page>
  );
}

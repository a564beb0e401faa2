// Session: the conversation as `show --json` folds it — turns, each tool call beside its result,
// child agents nested (collapsible), thinking collapsed, masks shown as masks, quarantined records
// marked — with the usage counted in each turn. `?at=TS&stream=S` opens it at that record.
import type { ComponentChildren } from "preact";
import { useEffect, useMemo } from "preact/hooks";
import { MASK_PATTERN } from "@lake/redact";
import { useApi } from "../api.js";
import { fmtClock, fmtCompact, fmtCost, fmtInt, fmtTime, pageZone } from "../format.js";
import type { ResponseRow, ShowConversation, ShowItem } from "../types.js";

/** Text with each mask (`[REDACTED:rule:hash]`, @lake/redact's MASK_PATTERN) shown as a mask chip. */
export function Masked(props: { text: string }) {
  const out: ComponentChildren[] = [];
  let last = 0;
  for (const m of props.text.matchAll(MASK_PATTERN)) {
    if (m.index > last) out.push(props.text.slice(last, m.index));
    const rule = m[1] ?? "";
    out.push(
      <span class="mask" title={m[0]}>
        masked · {rule}
      </span>,
    );
    last = m.index + m[0].length;
  }
  out.push(props.text.slice(last));
  return <>{out}</>;
}

function Rules(props: { rules?: string[] | undefined }) {
  if (!props.rules?.length) return null;
  return <span class="badge mask-rules" title="redaction rules that fired">masked: {props.rules.join(", ")}</span>;
}

/** Pretty JSON input when it parses, else as it is. */
function pretty(input: string | null): string {
  if (input === null) return "";
  try {
    return JSON.stringify(JSON.parse(input), null, 2);
  } catch {
    return input;
  }
}

function Long(props: { text: string; cls?: string; limit?: number }) {
  const limit = props.limit ?? 1600;
  if (props.text.length <= limit) return <pre class={props.cls}><Masked text={props.text} /></pre>;
  return (
    <details class="long">
      <summary>
        <pre class={props.cls}>
          <Masked text={props.text.slice(0, limit)} />…
        </pre>
        <span class="more">show all {fmtInt(props.text.length)} characters</span>
      </summary>
      <pre class={props.cls}>
        <Masked text={props.text} />
      </pre>
    </details>
  );
}

function Item(props: { it: ShowItem }) {
  const it = props.it;
  const common = { "data-ts": it.ts ?? "", "data-stream": it.stream, "data-kind": it.kind };
  if (it.quarantined) {
    return (
      <div class="item quarantined" {...common}>
        <span class="when">{fmtClock(it.ts)}</span>
        <div class="body">
          <b>Quarantined {it.kind} record</b> — withheld whole by the collector ({it.quarantined.rules.join(", ") || "rule"}); only its place is kept.
        </div>
      </div>
    );
  }
  if (it.tool) {
    const t = it.tool;
    const r = t.result;
    return (
      <div class={`item tool${r?.is_error ? " failed" : ""}`} {...common} data-testid="tool-call" data-call-id={t.call_id ?? ""}>
        <span class="when">{fmtClock(it.ts)}</span>
        <div class="tool-pair">
          <div class="call">
            <div class="tool-name">
              ⚙ {t.name ?? "tool"} <Rules rules={it.redaction_rules} />
            </div>
            <Long text={pretty(t.input)} cls="code" limit={1200} />
          </div>
          <div class="result" data-testid="tool-result">
            {r ? (
              <>
                <div class="tool-status">
                  {r.is_error ? <span class="bad">✗ error</span> : <span class="ok">✓ result</span>}
                  {r.exit_code !== null && <span class="exit"> exit {r.exit_code}</span>}
                  <Rules rules={r.redaction_rules} />
                </div>
                <Long text={r.text ?? ""} cls="code" limit={1200} />
              </>
            ) : (
              <div class="no-result">no result</div>
            )}
          </div>
        </div>
        {t.child && (
          <details class="child" data-child={t.child.stream}>
            <summary>
              ↳ agent <b>{t.child.stream}</b> · {t.child.items.length} records
            </summary>
            <Items items={t.child.items} />
          </details>
        )}
      </div>
    );
  }
  if (it.compaction) {
    return (
      <div class="item marker" {...common}>
        <span class="when">{fmtClock(it.ts)}</span>
        <details class="body">
          <summary>── context compacted ──</summary>
          <pre>{it.text}</pre>
        </details>
      </div>
    );
  }
  if (it.gone) {
    return (
      <div class="item marker gone" {...common}>
        <span class="when">{fmtClock(it.ts)}</span>
        <div class="body">✂ record of landed file seq {it.gone.seq} is gone</div>
      </div>
    );
  }
  if (it.thinking) {
    return (
      <div class="item thinking" {...common}>
        <span class="when">{fmtClock(it.ts)}</span>
        <details class="body">
          <summary>thinking{it.model ? ` · ${it.model}` : ""}</summary>
          <Long text={it.text ?? ""} />
        </details>
      </div>
    );
  }
  const who = it.kind === "user" ? "user" : it.kind === "assistant" ? "assistant" : it.kind;
  return (
    <div class={`item ${it.kind}`} {...common}>
      <span class="when">{fmtClock(it.ts)}</span>
      <div class="body">
        <div class="who">
          {who}
          {it.model && <span class="model">{it.model}</span>}
          {it.message && <span class="badge">{it.message}</span>}
          <Rules rules={it.redaction_rules} />
        </div>
        {(it.text ?? "").trim() === "" ? <span class="muted small">(no text)</span> : <Long text={it.text ?? ""} cls="text" />}
      </div>
    </div>
  );
}

function Items(props: { items: readonly ShowItem[] }) {
  return (
    <div class="items">
      {props.items.map((it) => (
        <Item it={it} />
      ))}
    </div>
  );
}

interface TurnUsage {
  tokens: number;
  /** USD of the priced responses (null while none is priced), and the tokens of the unpriced ones, as `usage` counts them. */
  cost_usd: number | null;
  unpriced_tokens: number;
  responses: number;
}

/** Add a response's usage to a total. */
function add(u: TurnUsage, r: ResponseRow): void {
  u.tokens += r.total_tokens ?? 0;
  if (r.cost_usd !== null) u.cost_usd = (u.cost_usd ?? 0) + r.cost_usd;
  u.unpriced_tokens += r.unpriced_tokens;
  u.responses++;
}

const noUsage = (): TurnUsage => ({ tokens: 0, cost_usd: null, unpriced_tokens: 0, responses: 0 });

/** Group a stream's items into turns, and count each response into the turn it fell in (by time). */
function turnsOf(items: readonly ShowItem[], responses: readonly ResponseRow[]) {
  const turns: { turn: number; start: string | null; items: ShowItem[]; usage: TurnUsage }[] = [];
  for (const it of items) {
    const cur = turns[turns.length - 1];
    if (!cur || cur.turn !== it.turn) turns.push({ turn: it.turn, start: it.ts, items: [it], usage: noUsage() });
    else cur.items.push(it);
  }
  for (const r of responses) {
    let at = turns[0];
    for (const t of turns) if (t.start !== null && r.ts !== null && t.start <= r.ts) at = t;
    if (!at) continue;
    add(at.usage, r);
  }
  return turns;
}

/** Open the record a search hit names: the last record of its stream at or before its time. */
function focus(at: string, stream: string): void {
  const els = [...document.querySelectorAll<HTMLElement>(".item[data-stream]")].filter((e) => e.dataset.stream === stream && (e.dataset.ts ?? "") !== "" && e.dataset.ts! <= at);
  const el = els.reduce<HTMLElement | undefined>((best, e) => (!best || e.dataset.ts! >= best.dataset.ts! ? e : best), undefined);
  if (!el) return;
  for (let p: HTMLElement | null = el.parentElement; p; p = p.parentElement) if (p instanceof HTMLDetailsElement) p.open = true;
  document.querySelectorAll(".item.hit").forEach((e) => e.classList.remove("hit"));
  el.classList.add("hit");
  el.scrollIntoView({ block: "center" });
}

export function Session(props: { id: string; query: URLSearchParams }) {
  const conv = useApi<ShowConversation>(`/api/show/${encodeURIComponent(props.id)}`);
  const sid = conv.data?.session_id;
  const usage = useApi<{ session_id: string; responses: ResponseRow[] }>(sid ? `/api/responses/${encodeURIComponent(sid)}` : undefined);
  const responses = usage.data?.responses ?? [];
  const turns = useMemo(() => (conv.data ? turnsOf(conv.data.items, responses) : []), [conv.data, usage.data]);
  const at = props.query.get("at");
  const stream = props.query.get("stream") ?? "main";
  useEffect(() => {
    if (conv.data && at) focus(at, stream);
  }, [conv.data, at, stream]);

  if (conv.error) return <div class="page"><div class="error">{conv.error}</div></div>;
  const c = conv.data;
  if (!c) return <div class="page"><div class="loading">Loading session…</div></div>;
  const total = noUsage();
  for (const r of responses) add(total, r);
  return (
    <div class="page session">
      <div class="page-head">
        <h1 class="mono">{c.session_id}</h1>
      </div>
      <div class="meta">
        <span><b>{c.runtime}</b></span>
        <span>{c.agent === null ? "local root" : `agent ${c.agent}`}</span>
        <span>
          {fmtTime(c.first_ts)} → {fmtTime(c.last_ts)} {pageZone()}
        </span>
        <span>from {c.source === "chain" ? "the round chain" : "events"}</span>
        <span data-testid="session-usage">
          {fmtCompact(total.tokens)} tokens · {fmtCost(total)} · {responses.length} responses
        </span>
        {c.chain && c.chain.tombstones.length > 0 && <span class="badge">{c.chain.tombstones.length} landed file(s) gone</span>}
      </div>
      {turns.map((t) => (
        <section class="turn" data-turn={t.turn}>
          <div class="turn-head">
            <span class="turn-no">Turn {t.turn}</span>
            <span class="turn-time">{fmtTime(t.start)}</span>
            <span class="turn-usage" data-testid="turn-usage">
              {t.usage.responses ? `${fmtCompact(t.usage.tokens)} tokens · ${fmtCost(t.usage)} · ${t.usage.responses} response${t.usage.responses === 1 ? "" : "s"}` : "no usage"}
            </span>
          </div>
          <Items items={t.items} />
        </section>
      ))}
      {c.other_streams.map((o) => (
        <section class="turn other">
          <details>
            <summary class="turn-head">
              <span class="turn-no">agent {o.stream}</span>
              <span class="turn-time">{o.launched_by ? `also launched by call ${o.launched_by}` : "not attached to a call"} · {o.items.length} records</span>
            </summary>
            <Items items={o.items} />
          </details>
        </section>
      ))}
    </div>
  );
}

// secrets: the leak report — what was masked where, per rule, for the person who rotates keys.
import { flag, text, type RunContext } from "@lake/cli";
import { COMMON, locations, usageError, withReadModel, type Io } from "../context.js";
import { renderTable, toJson } from "../format.js";
import { sqlString } from "../sqltext.js";
import { readerCommand } from "./parse.js";

/** One distinct secret (a rule and a keyed hash). */
export interface SecretSeen {
  hash: string;
  seen: number;
  sessions: string[];
  runtimes: string[];
  agents: string[];
  first_seen: string | null;
  last_seen: string | null;
}

/** One rule of the report: what its secrets add up to (seen, where, when), and them. */
export interface SecretRule extends Omit<SecretSeen, "hash"> {
  rule: string;
  secrets: number;
  quarantined_records: number;
  quarantined_sessions: string[];
  items: SecretSeen[];
}

const MASK_SQL = "\\[REDACTED:[a-z0-9][a-z0-9-]*:[0-9a-f]{8}\\]";

function iso(v: unknown): string | null {
  return v instanceof Date ? v.toISOString() : v === null || v === undefined ? null : String(v);
}

const minTs = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : a < b ? a : b);
const maxTs = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : a > b ? a : b);

/** The report, from the read model's events (deduplicated records of the fleet). */
export function secretsReport(masks: readonly Record<string, unknown>[], quarantined: readonly Record<string, unknown>[]): SecretRule[] {
  const rules = new Map<string, { items: Map<string, SecretSeen & { _s: Set<string>; _r: Set<string>; _a: Set<string> }>; q: number; qs: Set<string> }>();
  const ruleOf = (id: string) => {
    let r = rules.get(id);
    if (!r) rules.set(id, (r = { items: new Map(), q: 0, qs: new Set() }));
    return r;
  };
  for (const m of masks) {
    const r = ruleOf(String(m.rule));
    const hash = String(m.hash);
    let it = r.items.get(hash);
    if (!it) r.items.set(hash, (it = { hash, seen: 0, sessions: [], runtimes: [], agents: [], first_seen: null, last_seen: null, _s: new Set(), _r: new Set(), _a: new Set() }));
    it.seen += Number(m.records);
    it._s.add(String(m.session_id));
    it._r.add(String(m.runtime));
    it._a.add(String(m.agent));
    it.first_seen = minTs(it.first_seen, iso(m.first_ts));
    it.last_seen = maxTs(it.last_seen, iso(m.last_ts));
  }
  for (const q of quarantined) {
    const r = ruleOf(String(q.rule));
    r.q += Number(q.records);
    r.qs.add(String(q.session_id));
  }
  const sorted = (s: Iterable<string>) => [...s].sort();
  return [...rules]
    .map(([rule, r]) => {
      const items: SecretSeen[] = [...r.items.values()]
        .map(({ _s, _r, _a, ...x }) => ({ ...x, sessions: sorted(_s), runtimes: sorted(_r), agents: sorted(_a) }))
        .sort((a, b) => b.seen - a.seen || (a.hash < b.hash ? -1 : 1));
      const all = (f: (x: SecretSeen) => string[]) => sorted(new Set(items.flatMap(f)));
      return {
        rule,
        secrets: items.length,
        seen: items.reduce((a, x) => a + x.seen, 0),
        sessions: sorted(new Set([...all((x) => x.sessions), ...r.qs])),
        runtimes: all((x) => x.runtimes),
        agents: all((x) => x.agents),
        first_seen: items.reduce<string | null>((a, x) => minTs(a, x.first_seen), null),
        last_seen: items.reduce<string | null>((a, x) => maxTs(a, x.last_seen), null),
        quarantined_records: r.q,
        quarantined_sessions: sorted(r.qs),
        items,
      };
    })
    .sort((a, b) => b.secrets - a.secrets || b.quarantined_records - a.quarantined_records || (a.rule < b.rule ? -1 : 1));
}

const SECRETS_OPTIONS = {
  ...COMMON,
  since: text("DATE", "only records at or after DATE (ISO date or time, UTC)"),
  json: flag('print {"since", "rules": [...]}'),
} as const;

async function secrets({ values, io }: RunContext<typeof SECRETS_OPTIONS, Io>): Promise<number> {
  let since: string | undefined;
  if (values.since !== undefined) {
    const t = Date.parse(values.since);
    if (!Number.isFinite(t)) throw usageError(`secrets: --since expects an ISO date or time, got ${JSON.stringify(values.since)}`);
    since = new Date(t).toISOString();
  }
  const when = since === undefined ? "" : ` AND ts >= CAST(${sqlString(since.replace("T", " ").replace("Z", ""))} AS TIMESTAMP)`;
  const { masks, quarantined } = await withReadModel(locations(values, io.env, io.damaged), async (rm) => {
    const masks = await rm.query(`
      WITH m AS (
        SELECT session_id, runtime, agent, ts, unnest(regexp_extract_all(
          concat_ws(chr(10), text, tool_input, raw, attrs), '${MASK_SQL}')) AS mask
        FROM events WHERE len(redaction_rules) > 0${when}
      )
      SELECT regexp_extract(mask, '^\\[REDACTED:([a-z0-9-]+):', 1) AS rule, regexp_extract(mask, ':([0-9a-f]{8})\\]$', 1) AS hash,
             session_id, runtime, agent, count(*) AS records, min(ts) AS first_ts, max(ts) AS last_ts
      FROM (SELECT DISTINCT * FROM m) GROUP BY ALL`);
    const quarantined = await rm.query(`
      SELECT rule, session_id, count(*) AS records FROM (
        SELECT unnest(redaction_rules) AS rule, session_id FROM events WHERE vendor_type = 'lake/quarantined'${when}
      ) GROUP BY ALL`);
    return { masks: masks.rows, quarantined: quarantined.rows };
  });
  const rules = secretsReport(masks, quarantined);
  if (values.json) {
    io.out(toJson({ since: since ?? null, rules }) + "\n");
    return 0;
  }
  const table = rules.map((r) => [
    r.rule,
    String(r.secrets),
    String(r.seen),
    String(r.sessions.length),
    r.runtimes.join(", "),
    r.agents.join(", "),
    r.first_seen?.slice(0, 16).replace("T", " ") ?? "-",
    r.last_seen?.slice(0, 16).replace("T", " ") ?? "-",
    String(r.quarantined_records),
  ]);
  io.out(
    renderTable(["Rule", "Secrets", "Seen", "Sessions", "Runtimes", "Agents", "First seen (UTC)", "Last seen (UTC)", "Quarantined"], table, [false, true, true, true, false, false, false, false, true]) +
      `\n${rules.reduce((a, r) => a + r.secrets, 0)} distinct secret(s) under ${rules.length} rule(s)${since ? ` since ${since}` : ""}\n`,
  );
  return 0;
}

/** `lake-reader secrets`. */
export const secretsCommand = readerCommand({
  description: `The leak report: every secret the collectors masked, per rule. Masks carry a keyed hash
([REDACTED:<rule>:<hash>]), so the same secret counts once however often it was seen: one row per
rule with how many distinct secrets, how many records showed them, the sessions, runtimes and
fleet agents (machines) that exposed them, first and last seen, and how many records of the rule
were quarantined (withheld whole; a quarantined record carries no per-secret hash). With --json,
each rule also lists its secrets ({hash, seen, sessions, runtimes, agents, first_seen, last_seen}).
Hashes correlate only between machines that share one redact.key. Nothing masked is not an error.`,
  options: SECRETS_OPTIONS,
  run: secrets,
});

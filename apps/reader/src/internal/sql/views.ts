// The read model: DuckDB views compiled into the binary. `fleet_rows` (every row of the files the
// reader follows, built per run by readmodel.ts) and `_sealed`, `_labels_raw` are the inputs; the
// views below are the public read model, each documented with its columns in the README.

/** Usage keys in broca's meaning, as columns. */
export const USAGE_COLS = ["input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens", "cache_write_1h_tokens"] as const;

const usageReported = USAGE_COLS.map((k) => `${k} IS NOT NULL`).join(" OR ");

/**
 * `events`: the fleet's canonical records, deduplicated on (session_id, stream, record_id), or on
 * (session_id, content_hash) for records without a record_id (never on an empty content hash).
 */
export const EVENTS_VIEW = `
CREATE OR REPLACE VIEW events AS
SELECT * EXCLUDE (_dedupe_rank) FROM (
  SELECT *,
    CASE WHEN ts IS NULL THEN 'unknown' ELSE strftime(ts, '%Y-%m-%d') END AS day,
    row_number() OVER (
      PARTITION BY session_id,
        CASE WHEN record_id IS NOT NULL THEN 'i' || stream || chr(31) || record_id
             WHEN content_hash <> '' THEN 'h' || content_hash
             ELSE 'u' || source_file || chr(31) || CAST(file_row AS VARCHAR) END
      ORDER BY source_file, file_row) AS _dedupe_rank
  FROM fleet_rows
) WHERE _dedupe_rank = 1`;

/** `sessions`: one row per session. */
export const SESSIONS_VIEW = `
CREATE OR REPLACE VIEW sessions AS
SELECT
  session_id,
  arg_min(runtime, coalesce(ts, TIMESTAMP '9999-12-31')) AS runtime,
  arg_min(agent, coalesce(ts, TIMESTAMP '9999-12-31')) AS agent,
  arg_min(fleet, coalesce(ts, TIMESTAMP '9999-12-31')) AS fleet,
  min(ts) AS first_ts,
  max(ts) AS last_ts,
  CAST(date_diff('millisecond', min(ts), max(ts)) AS DOUBLE) / 1000 AS duration_s,
  count(*) AS events,
  count(DISTINCT stream) AS streams,
  count(*) FILTER (WHERE kind = 'user' AND stream = 'main' AND NOT coalesce(replayed, false)) AS user_turns,
  count(*) FILTER (WHERE kind = 'assistant' AND NOT coalesce(replayed, false)) AS assistant_turns,
  count(*) FILTER (WHERE kind = 'tool_call' AND NOT coalesce(replayed, false)) AS tool_calls,
  count(*) FILTER (WHERE kind = 'tool_result' AND coalesce(is_error, false) AND NOT coalesce(replayed, false)) AS tool_errors,
  list_sort(list(DISTINCT model) FILTER (WHERE model IS NOT NULL)) AS models,
  arg_min(cwd, coalesce(ts, TIMESTAMP '9999-12-31')) FILTER (WHERE cwd IS NOT NULL) AS cwd,
  arg_min(repo, coalesce(ts, TIMESTAMP '9999-12-31')) FILTER (WHERE repo IS NOT NULL) AS repo,
  arg_min(branch, coalesce(ts, TIMESTAMP '9999-12-31')) FILTER (WHERE branch IS NOT NULL) AS branch,
  coalesce(
    arg_min(repo, coalesce(ts, TIMESTAMP '9999-12-31')) FILTER (WHERE repo IS NOT NULL),
    arg_min(cwd, coalesce(ts, TIMESTAMP '9999-12-31')) FILTER (WHERE cwd IS NOT NULL),
    'gemini:' || left(nullif(any_value(regexp_extract(source_path, '([0-9a-f]{64})/chats/', 1)) FILTER (WHERE runtime = 'gemini'), ''), 12)
  ) AS project,
  session_id IN (SELECT session_id FROM _sealed) AS sealed
FROM events
GROUP BY session_id`;

/**
 * \`interrupted_sessions\`: sessions that stopped mid-turn — the user interrupted (Claude Code's
 * "[Request interrupted by user" marker, or a turn_aborted event), or a sealed session whose main
 * stream ends on a user turn or on a tool call that never got its result.
 */
export const INTERRUPTED_VIEW = `
CREATE OR REPLACE VIEW interrupted_sessions AS
WITH main AS (
  SELECT * FROM events WHERE stream = 'main' AND NOT coalesce(replayed, false) AND kind IN ('user', 'assistant', 'tool_call', 'tool_result')
),
last_row AS (
  SELECT session_id, arg_max(kind, (coalesce(ts, TIMESTAMP '0001-01-01'), coalesce(source_line, 0), file_row)) AS last_kind,
         arg_max(tool_call_id, (coalesce(ts, TIMESTAMP '0001-01-01'), coalesce(source_line, 0), file_row)) AS last_call,
         max(ts) AS last_ts
  FROM main GROUP BY session_id
),
marked AS (
  SELECT session_id, max(ts) AS marked_ts FROM events
  WHERE text LIKE '%[Request interrupted by user%' OR vendor_type LIKE '%turn_aborted%'
  GROUP BY session_id
)
SELECT s.session_id, s.runtime, s.agent, l.last_ts, l.last_kind,
  CASE WHEN m.session_id IS NOT NULL THEN 'interrupted_by_user'
       WHEN l.last_kind = 'user' THEN 'ended_on_user_turn'
       ELSE 'ended_on_tool_call' END AS reason,
  s.sealed
FROM sessions s
JOIN last_row l USING (session_id)
LEFT JOIN marked m USING (session_id)
WHERE m.session_id IS NOT NULL
   OR (s.sealed AND (l.last_kind = 'user'
       OR (l.last_kind = 'tool_call' AND NOT EXISTS (
             SELECT 1 FROM events r WHERE r.session_id = l.session_id AND r.kind = 'tool_result' AND r.tool_call_id = l.last_call))))`;

/** `tools_daily`: tool calls per UTC day, runtime and tool, with results and errors. */
export const TOOLS_DAILY_VIEW = `
CREATE OR REPLACE VIEW tools_daily AS
WITH calls AS (
  SELECT session_id, tool_call_id, tool_name, runtime, day FROM events
  WHERE kind = 'tool_call' AND NOT coalesce(replayed, false)
),
results AS (
  SELECT r.session_id, r.tool_call_id, coalesce(r.tool_name, c.tool_name) AS tool_name, r.runtime, r.day, coalesce(r.is_error, false) AS is_error
  FROM events r LEFT JOIN calls c ON c.session_id = r.session_id AND c.tool_call_id = r.tool_call_id
  WHERE r.kind = 'tool_result' AND NOT coalesce(r.replayed, false)
),
c AS (SELECT day, runtime, coalesce(tool_name, '(unknown)') AS tool_name, count(*) AS calls, count(DISTINCT session_id) AS sessions FROM calls GROUP BY ALL),
r AS (SELECT day, runtime, coalesce(tool_name, '(unknown)') AS tool_name, count(*) AS results, count(*) FILTER (WHERE is_error) AS errors FROM results GROUP BY ALL)
SELECT day, runtime, tool_name, coalesce(c.calls, 0) AS calls, coalesce(r.results, 0) AS results, coalesce(r.errors, 0) AS errors, coalesce(c.sessions, 0) AS sessions
FROM c FULL OUTER JOIN r USING (day, runtime, tool_name)
ORDER BY day, runtime, tool_name`;

const sums = USAGE_COLS.map((k) => `sum(${k}) AS ${k}`).join(", ");
const lagDelta = (k: string) =>
  `CASE WHEN ${k} IS NULL THEN NULL WHEN ${k} >= coalesce(lag(${k}) OVER w, 0) THEN ${k} - coalesce(lag(${k}) OVER w, 0) ELSE ${k} END AS ${k}`;
const sameAsLag = USAGE_COLS.map((k) => `${k} IS NOT DISTINCT FROM lag(${k}) OVER w`).join(" AND ");

/**
 * `usage_counted`: one row per counted piece of usage — the rules of @lake/events countUsage in
 * SQL (replayed rows count nothing; copies sharing a usage_key are one response, across sessions:
 * for `delta` copies the largest counts, for `latest` copies the last one read — which counts
 * nothing when it reports nothing; cumulative totals count their growth). `usage` reports use
 * countUsage itself; this view backs `tokens_daily` and agrees with it (tested). Read order is
 * (source_file, file_row): files are named so that they sort as their store keys do.
 */
export const USAGE_COUNTED_VIEW = `
CREATE OR REPLACE VIEW usage_counted AS
WITH u AS (
  SELECT * FROM events WHERE NOT coalesce(replayed, false) AND (${usageReported})
),
keyed AS (
  SELECT * EXCLUDE (_k) FROM (
    SELECT *, row_number() OVER (PARTITION BY usage_key
      ORDER BY coalesce(output_tokens, -1) DESC, coalesce(is_sidechain, false), source_file, file_row) AS _k
    FROM u WHERE coalesce(usage_mode, 'delta') NOT IN ('cumulative', 'latest') AND usage_key IS NOT NULL
  ) WHERE _k = 1
),
latest AS (
  SELECT * EXCLUDE (_k) FROM (
    SELECT *, row_number() OVER (PARTITION BY usage_key ORDER BY source_file DESC, file_row DESC) AS _k
    FROM events WHERE NOT coalesce(replayed, false) AND usage_mode = 'latest' AND usage_key IS NOT NULL
  ) WHERE _k = 1 AND (${usageReported})
),
plain AS (
  SELECT * FROM u WHERE coalesce(usage_mode, 'delta') <> 'cumulative' AND usage_key IS NULL
),
cum AS (
  SELECT session_id, runtime, stream, model, ts, day, ${USAGE_COLS.map(lagDelta).join(", ")}, (${sameAsLag}) AS _same
  FROM u WHERE usage_mode = 'cumulative'
  WINDOW w AS (PARTITION BY session_id, stream ORDER BY ts NULLS LAST, source_file, file_row)
)
SELECT session_id, runtime, stream, model, ts, day, ${USAGE_COLS.join(", ")} FROM keyed
UNION ALL SELECT session_id, runtime, stream, model, ts, day, ${USAGE_COLS.join(", ")} FROM latest
UNION ALL SELECT session_id, runtime, stream, model, ts, day, ${USAGE_COLS.join(", ")} FROM plain
UNION ALL SELECT session_id, runtime, stream, model, ts, day, ${USAGE_COLS.join(", ")} FROM cum WHERE NOT coalesce(_same, false)`;

/** `tokens_daily`: counted tokens per UTC day, runtime and model (NULL = nobody reported the key). */
export const TOKENS_DAILY_VIEW = `
CREATE OR REPLACE VIEW tokens_daily AS
SELECT day, runtime, model, ${sums},
  CASE WHEN count(input_tokens) + count(cached_input_tokens) + count(cache_write_tokens) + count(output_tokens) = 0 THEN NULL
       ELSE coalesce(sum(input_tokens), 0) + coalesce(sum(cached_input_tokens), 0) + coalesce(sum(cache_write_tokens), 0) + coalesce(sum(output_tokens), 0) END AS total_tokens,
  count(*) AS responses
FROM usage_counted GROUP BY ALL ORDER BY day, runtime, model`;

/**
 * `hook_decisions`: decisions the hooks took (records of the `hook` runtime, or hook records of a
 * runtime's own transcript): decision and reason come from \`attrs\`.
 */
export const HOOK_DECISIONS_VIEW = `
CREATE OR REPLACE VIEW hook_decisions AS
SELECT ts, day, session_id, runtime, agent,
  coalesce(json_extract_string(attrs, '$.hook_event'), vendor_type) AS hook,
  coalesce(json_extract_string(attrs, '$.hook_name'), json_extract_string(attrs, '$.hook')) AS hook_name,
  tool_name,
  lower(coalesce(json_extract_string(attrs, '$.decision'), json_extract_string(attrs, '$.permission_decision'), json_extract_string(attrs, '$.permissionDecision'))) AS decision,
  coalesce(json_extract_string(attrs, '$.reason'), json_extract_string(attrs, '$.decision_reason')) AS reason,
  exit_code, is_error
FROM events
WHERE runtime = 'hook' OR json_extract_string(attrs, '$.hook_event') IS NOT NULL OR json_extract_string(attrs, '$.decision') IS NOT NULL`;

/** `blocks_by_hook`: per UTC day and hook, how many decisions blocked or denied. */
export const BLOCKS_BY_HOOK_VIEW = `
CREATE OR REPLACE VIEW blocks_by_hook AS
SELECT day, hook, coalesce(hook_name, '') AS hook_name,
  count(*) AS decisions,
  count(*) FILTER (WHERE decision IN ('block', 'deny') OR exit_code = 2) AS blocks,
  count(DISTINCT session_id) FILTER (WHERE decision IN ('block', 'deny') OR exit_code = 2) AS sessions_blocked
FROM hook_decisions GROUP BY ALL ORDER BY day, hook, hook_name`;

/** `labels`: the operator labels (append-only, not masked). */
export const LABELS_VIEW = `
CREATE OR REPLACE VIEW labels AS
SELECT CAST(ts AS TIMESTAMP) AS ts, session_id, runtime, aspect, value, note, source FROM _labels_raw`;

/** The public views, in creation order. */
export const VIEWS: readonly string[] = [
  EVENTS_VIEW,
  SESSIONS_VIEW,
  INTERRUPTED_VIEW,
  TOOLS_DAILY_VIEW,
  USAGE_COUNTED_VIEW,
  TOKENS_DAILY_VIEW,
  HOOK_DECISIONS_VIEW,
  BLOCKS_BY_HOOK_VIEW,
  LABELS_VIEW,
];

/** Names of the public views. */
export const VIEW_NAMES = ["events", "sessions", "interrupted_sessions", "tools_daily", "usage_counted", "tokens_daily", "hook_decisions", "blocks_by_hook", "labels"] as const;

// `lake-reader statusline`: one line for Claude Code's status line, from the JSON Claude Code
// writes on stdin (session_id, model.display_name, context_window …) and the LOCAL ROOT's landed
// files (no push or maint needed, no DuckDB): the model, this session's cost, today's cost, the
// active 5-hour block's cost and time left, the context used. Claude Code reruns it on every
// update (up to several times a second), so answers are coalesced through a small cache:
// a result younger than --ttl is printed as it is; one process at a time recomputes (an
// O_EXCL lock) while the others print the last result; a session whose landed files did not
// change is not read again. Imports are kept small and lazy: start-up is most of its time.
import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultCache, defaultRoot } from "../paths.js";
import { ReaderError } from "../errors.js";
import { localDay, resolveTimeZone, systemDay } from "../time.js";
import { count, text, type RunContext } from "@lake/cli";
import type { Io } from "../context.js";
import { readerCommand } from "./parse.js";

const OPTIONS = {
  root: text("DIR", "local root (default $LAKE_ROOT, $XDG_DATA_HOME/lake, ~/.local/share/lake)"),
  cache: text("DIR", "where the coalescing cache lives (default the reader cache)"),
  timezone: text("TZ", 'the zone "today" is in (default the process\'s: $TZ, else the system\'s)'),
  ttl: count("MS", "reuse a result younger than this (default 2000)", { default: 2000 }),
} as const;

/** One priced response: [time ms, total tokens, USD or null]. */
type Entry = [number, number, number | null];

/** Per local session: a signature of its landed files, its whole cost, its recent responses. */
interface SessionSummary {
  sig: string;
  cost: number;
  unpriced: boolean;
  recent: Entry[];
}

/** The cache file (statusline/state.json). */
interface State {
  format: "lake.statusline";
  computed_at: number;
  sessions: Record<string, SessionSummary>;
}

const FORMAT = "lake.statusline";
const BLOCK_MS = 5 * 3600_000;
/** Responses older than this cannot be in today or the active block. */
const RECENT_MS = 30 * 3600_000;
const LOCK_STALE_MS = 30_000;

function readState(file: string): State | undefined {
  try {
    const s = JSON.parse(readFileSync(file, "utf8")) as State;
    return s.format === FORMAT && typeof s.computed_at === "number" && s.sessions && typeof s.sessions === "object" ? s : undefined;
  } catch {
    return undefined;
  }
}

/** The landed-file directories of a session and their signature (names and mtimes of its stream directories). */
function sessionDirs(root: string, sid: string): { dirs: string[]; sig: string; newest: number } | undefined {
  const streams = join(root, sid, "streams");
  let names: string[];
  try {
    names = readdirSync(streams).sort();
  } catch {
    return undefined;
  }
  const parts: string[] = [];
  const dirs: string[] = [];
  let newest = 0;
  for (const n of names) {
    const d = join(streams, n);
    try {
      const st = statSync(d);
      if (!st.isDirectory()) continue;
      parts.push(`${n}:${st.mtimeMs}`);
      dirs.push(d);
      newest = Math.max(newest, st.mtimeMs);
    } catch {
      // gone meanwhile
    }
  }
  return { dirs, sig: parts.join("|"), newest };
}

/** Count and price one session's landed records (its .sd files; header line skipped). */
async function summarize(dirs: readonly string[], sig: string, now: number, cache: string): Promise<SessionSummary> {
  const [{ countUsage, totalTokens }, { loadPricing, priceContribution }] = await Promise.all([import("@lake/events/usage"), import("../pricing.js")]);
  const recs: import("@lake/events/usage").UsageRecord[] = [];
  for (const d of dirs) {
    let files: string[];
    try {
      files = readdirSync(d).filter((f) => f.endsWith(".sd")).sort();
    } catch {
      continue;
    }
    for (const f of files) {
      let text: string;
      try {
        text = readFileSync(join(d, f), "utf8");
      } catch {
        continue;
      }
      const lines = text.split("\n");
      for (let i = 1; i < lines.length; i++) {
        const l = lines[i]!;
        if (!l.includes('"usage"')) continue;
        try {
          recs.push(JSON.parse(l) as import("@lake/events/usage").UsageRecord);
        } catch {
          // a torn last line: the collector rewrites nothing, skip it
        }
      }
    }
  }
  const pricing = await loadPricing({ cache });
  let cost = 0;
  let unpriced = false;
  const recent: Entry[] = [];
  for (const c of countUsage(recs)) {
    const p = priceContribution(pricing, c, "calculate");
    const t = totalTokens(c.usage) ?? 0;
    if (p.cost_usd === null) unpriced ||= t > 0;
    else cost += p.cost_usd;
    const ts = c.ts ? Date.parse(c.ts) : NaN;
    if (!Number.isNaN(ts) && now - ts < RECENT_MS) recent.push([ts, t, p.cost_usd]);
  }
  return { sig, cost, unpriced, recent };
}

/** Recompute the state: sessions whose files changed (or are new) are read, the others reused. */
async function compute(root: string, cache: string, prev: State | undefined, current: string | undefined, now: number): Promise<State> {
  const sessions: Record<string, SessionSummary> = {};
  let ids: string[] = [];
  try {
    ids = readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith("_") && !e.name.startsWith(".") && e.name !== "labels" && e.name !== "fleet")
      .map((e) => e.name);
  } catch {
    // no local root yet: nothing collected
  }
  for (const sid of ids) {
    const found = sessionDirs(root, sid);
    if (!found) continue;
    // Old sessions matter only as the current one (its whole cost); the rest only when recent.
    if (sid !== current && now - found.newest > RECENT_MS) continue;
    const old = prev?.sessions[sid];
    sessions[sid] = old && old.sig === found.sig ? old : await summarize(found.dirs, found.sig, now, cache);
  }
  return { format: FORMAT, computed_at: now, sessions };
}

function usd(n: number, unpriced: boolean): string {
  return `$${n.toFixed(2)}${unpriced ? "+?" : ""}`;
}

/** The line, from the state and Claude Code's JSON. */
export function statusLine(state: State | undefined, input: Record<string, unknown>, zone: string | undefined, now: number): string {
  // Without --timezone, "today" is the process's local day (no Intl: it costs more than the rest).
  const dayOf = zone === undefined ? systemDay : (t: number) => localDay(new Date(t).toISOString(), zone);
  const model = input.model as { display_name?: unknown; id?: unknown } | undefined;
  const name = typeof model?.display_name === "string" ? model.display_name : typeof model?.id === "string" ? model.id : "?";
  const sid = typeof input.session_id === "string" ? input.session_id : undefined;
  const parts = [name];
  const mine = sid ? state?.sessions[sid] : undefined;
  parts.push(`session ${mine ? usd(mine.cost, mine.unpriced) : "–"}`);
  const entries = Object.values(state?.sessions ?? {})
    .flatMap((s) => s.recent)
    .sort((a, b) => a[0] - b[0]);
  const today = dayOf(now);
  let day = 0;
  let dayUnpriced = false;
  for (const [t, tok, c] of entries) {
    if (dayOf(t) !== today) continue;
    if (c === null) dayUnpriced ||= tok > 0;
    else day += c;
  }
  parts.push(`today ${usd(day, dayUnpriced)}`);
  // 5-hour blocks as the usage report makes them; the last one, when still open.
  let start = -Infinity;
  let last = -Infinity;
  let cost = 0;
  let unpriced = false;
  for (const [t, tok, c] of entries) {
    if (t >= start + BLOCK_MS || t - last > BLOCK_MS) {
      start = Math.floor(t / 3600_000) * 3600_000;
      cost = 0;
      unpriced = false;
    }
    last = t;
    if (c === null) unpriced ||= tok > 0;
    else cost += c;
  }
  if (now < start + BLOCK_MS && now - last < BLOCK_MS) {
    const left = Math.max(0, Math.round((start + BLOCK_MS - now) / 60_000));
    parts.push(`block ${usd(cost, unpriced)} (${Math.floor(left / 60)}h${String(left % 60).padStart(2, "0")}m left)`);
  } else parts.push("no active block");
  const ctx = input.context_window as { used_percentage?: unknown; context_window_size?: unknown; current_usage?: Record<string, unknown> | null } | undefined;
  let pct: number | undefined = typeof ctx?.used_percentage === "number" ? ctx.used_percentage : undefined;
  if (pct === undefined && ctx?.current_usage && typeof ctx.context_window_size === "number" && ctx.context_window_size > 0) {
    const u = ctx.current_usage;
    const n = (k: string) => (typeof u[k] === "number" ? (u[k] as number) : 0);
    pct = ((n("input_tokens") + n("cache_creation_input_tokens") + n("cache_read_input_tokens")) / ctx.context_window_size) * 100;
  }
  if (pct !== undefined) parts.push(`ctx ${Math.round(pct)}%`);
  return parts.join(" · ");
}

async function statusline({ values, io }: RunContext<typeof OPTIONS, Io>): Promise<number> {
  const ttl = values.ttl;
  const zone = values.timezone === undefined ? undefined : resolveTimeZone(values.timezone, io.env);
  const text = io.stdin ? io.stdin() : readFileSync(0, "utf8");
  let input: Record<string, unknown>;
  try {
    const v = JSON.parse(text) as unknown;
    if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error("not an object");
    input = v as Record<string, unknown>;
  } catch (e) {
    throw new ReaderError("Corrupt", `stdin: not Claude Code's status line JSON (${(e as Error).message.split("\n")[0]})`);
  }
  const root = values.root ?? defaultRoot(io.env);
  const cache = values.cache ?? defaultCache(io.env);
  const dir = join(cache, "statusline");
  const file = join(dir, "state.json");
  const sid = typeof input.session_id === "string" ? input.session_id : undefined;
  const now = Date.now();
  let state = readState(file);
  const fresh = state !== undefined && now - state.computed_at >= 0 && now - state.computed_at < ttl;
  if (!fresh) {
    mkdirSync(dir, { recursive: true });
    const lock = join(dir, "lock");
    let fd: number | undefined;
    try {
      fd = openSync(lock, "wx");
    } catch {
      // Another process recomputes: print the last result (a lock left by a crash expires).
      try {
        if (now - statSync(lock).mtimeMs > LOCK_STALE_MS) unlinkSync(lock);
      } catch {
        // removed meanwhile
      }
    }
    if (fd !== undefined) {
      try {
        state = await compute(root, cache, state, sid, now);
        const tmp = `${file}.tmp-${process.pid}`;
        writeFileSync(tmp, JSON.stringify(state));
        renameSync(tmp, file);
      } finally {
        closeSync(fd);
        unlinkSync(lock);
      }
    }
  }
  io.out(statusLine(state, input, zone, now) + "\n");
  return 0;
}

/** `lake-reader statusline`. */
export const statuslineCommand = readerCommand({
  description: `Reads Claude Code's status line JSON on stdin and prints one line:
  <model> · session $X · today $Y · block $Z (2h13m left) · ctx 42%
Costs are lake's (tokens from the local root's landed files, priced like lake-reader usage), not
Claude Code's own estimate. Set it up in ~/.claude/settings.json:
  "statusLine": {"type": "command", "command": "lake-reader statusline"}
stdin that is not JSON is malformed data.`,
  options: OPTIONS,
  run: statusline,
});

// The statusline's answer: Claude Code's status line JSON (stdin) and the LOCAL ROOT's landed
// files (no push or maint needed, no DuckDB) make one line: the model, this session's cost, today's
// cost, the active 5-hour block's cost and time left, the context used. Claude Code reruns it on
// every update (up to several times a second), so answers are coalesced through a small cache: a
// result younger than --ttl is printed as it is; one process at a time recomputes (@lake/durable's
// lock file) while the others print the last result; a session whose landed files did not change is not read
// again.
//
// Start-up is most of its time, so this module is also the bin's own entry for `statusline`
// ({@link runStatusline}), bundled by the build with @lake/layout/defaults into one file
// (dist/internal/statusline.bundle.js: one file to load, no package to resolve), nothing of the
// command-line framework; zone.ts only for --timezone, the events and pricing code and @lake/durable
// only when a session changed. Anything it does not take as is (--help, an unknown or malformed option, stdin
// that is not JSON, a --timezone that names no zone, a failure) goes to the full command
// (commands/statusline.ts, the same answer), whose parsing and errors are every other command's.
import { createRequire } from "node:module";
import { join } from "node:path";
import { defaultLocalRoot, defaultReaderCache } from "@lake/layout/defaults";

// Required, not imported: an ESM `import … from "node:fs"` reads every export of fs, loading its
// stream and promise modules (a fifth of this command's start-up).
const { mkdirSync, readFileSync, readdirSync, statSync, writeSync } = createRequire(import.meta.url)("node:fs") as typeof import("node:fs");

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
/** --ttl's default. */
export const DEFAULT_TTL_MS = 2000;

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
  const [{ countUsage, totalTokens }, { loadPricing, priceContribution }] = await Promise.all([import("@lake/events/usage"), import("./pricing.js")]);
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

/** The sessions that count now (their directories and signatures): recent ones, and the current one however old. */
function scan(root: string, current: string | undefined, now: number): Map<string, { dirs: string[]; sig: string }> {
  const out = new Map<string, { dirs: string[]; sig: string }>();
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
    out.set(sid, found);
  }
  return out;
}

/** Whether the state holds exactly these sessions with these signatures (then it is still the answer). */
function unchanged(state: State, found: ReadonlyMap<string, { sig: string }>): boolean {
  const ids = Object.keys(state.sessions);
  return ids.length === found.size && ids.every((sid) => found.get(sid)?.sig === state.sessions[sid]!.sig);
}

/** Recompute the state: sessions whose files changed (or are new) are read, the others reused. */
async function compute(found: ReadonlyMap<string, { dirs: string[]; sig: string }>, cache: string, prev: State | undefined, now: number): Promise<State> {
  const sessions: Record<string, SessionSummary> = {};
  for (const [sid, f] of found) {
    const old = prev?.sessions[sid];
    sessions[sid] = old && old.sig === f.sig ? old : await summarize(f.dirs, f.sig, now, cache);
  }
  return { format: FORMAT, computed_at: now, sessions };
}

function usd(n: number, unpriced: boolean): string {
  return `$${n.toFixed(2)}${unpriced ? "+?" : ""}`;
}

/**
 * The day (yyyy-mm-dd) of instant `t` (ms) in the process's own zone (`$TZ` at start, else the
 * OS's), through Date's local fields: no Intl, whose first use costs ~100 ms of start-up (so without
 * --timezone neither zone.ts nor Intl is loaded).
 */
function systemDay(t: number): string {
  const d = new Date(t);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

/** The line, from the state and Claude Code's JSON; `dayOf`: the day of an instant in the zone "today" is in. */
function statusLine(state: State | undefined, input: Record<string, unknown>, dayOf: (t: number) => string, now: number): string {
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

/** Claude Code's status line JSON, or why `text` is not it. */
export function parseStatuslineInput(text: string): { input: Record<string, unknown> } | { reason: string } {
  try {
    const v = JSON.parse(text) as unknown;
    if (!v || typeof v !== "object" || Array.isArray(v)) return { reason: "not an object" };
    return { input: v as Record<string, unknown> };
  } catch (e) {
    return { reason: (e as Error).message.split("\n")[0]! };
  }
}

/** Where and how the statusline answers. */
export interface StatuslineOptions {
  readonly root: string;
  readonly cache: string;
  /** The zone "today" is in (an IANA name); undefined: the process's own, without Intl. */
  readonly zone: string | undefined;
  /** Reuse a result younger than this many milliseconds. */
  readonly ttl: number;
}

/** The line for Claude Code's `input` (without its newline), through the coalescing cache. */
export async function statuslineAnswer(input: Record<string, unknown>, o: StatuslineOptions, now: number = Date.now()): Promise<string> {
  const dir = join(o.cache, "statusline");
  const file = join(dir, "state.json");
  const sid = typeof input.session_id === "string" ? input.session_id : undefined;
  let state = readState(file);
  const fresh = state !== undefined && now - state.computed_at >= 0 && now - state.computed_at < o.ttl;
  // Older than --ttl: the root's directories are looked at; when no session changed, the state is
  // still the answer (nothing written, no lock taken: a status line over an idle root stats only).
  const found = fresh ? undefined : scan(o.root, sid, now);
  if (found && !(state && unchanged(state, found))) {
    mkdirSync(dir, { recursive: true });
    // @lake/durable's lock file and atomic replace (not bundled: loaded only when a session changed).
    const { tryLock, writeAtomic } = await import("@lake/durable");
    let lock: ReturnType<typeof tryLock> | undefined;
    try {
      // A lock whose holder died is broken at once; one older than LOCK_STALE_MS too (a cache shared between hosts).
      lock = tryLock(join(dir, "lock"), { staleAfterMs: LOCK_STALE_MS });
    } catch {
      // A cache that cannot be written: the last result
    }
    // Not held: another process recomputes, this one prints the last result.
    if (lock?.held) {
      try {
        state = await compute(found, o.cache, state, now);
        // A cache, recomputed whenever it is missing or unreadable: replaced atomically, not fsynced
        // (@lake/durable's policy for rebuildable caches).
        writeAtomic(file, JSON.stringify(state), { sync: false });
      } finally {
        lock.release();
      }
    }
  }
  let dayOf = systemDay;
  const zone = o.zone;
  if (zone !== undefined) {
    const { localDay } = await import("./zone.js");
    dayOf = (t) => localDay(new Date(t).toISOString(), zone);
  }
  return statusLine(state, input, dayOf, now);
}

/** This command's options as the full command line takes them, when they are nothing but those; else undefined. */
function simpleOptions(argv: readonly string[]): Partial<Record<"root" | "cache" | "timezone" | "ttl", string>> | undefined {
  const out: Partial<Record<"root" | "cache" | "timezone" | "ttl", string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf("=");
    const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
    if (!a.startsWith("--") || (name !== "root" && name !== "cache" && name !== "timezone" && name !== "ttl") || out[name] !== undefined) return undefined;
    const v = eq < 0 ? argv[++i] : a.slice(eq + 1);
    if (v === undefined || v === "" || (eq < 0 && v.startsWith("--"))) return undefined;
    if (name === "ttl" && !/^\d+$/.test(v)) return undefined;
    out[name] = v;
  }
  return out;
}

/**
 * `lake-reader statusline …` as the bin runs it (argv without the node and script paths): the
 * exit code. What it does not take as is, the full command line runs, with the stdin already read.
 */
export async function runStatusline(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const full = async (stdin?: string): Promise<number> => {
    const { main } = await import("../cli.js");
    return main(argv, stdin === undefined ? { env } : { env, stdin: () => stdin });
  };
  const opts = argv[0] === "statusline" ? simpleOptions(argv.slice(1)) : undefined;
  if (!opts) return full();
  const text = readFileSync(0, "utf8");
  const parsed = parseStatuslineInput(text);
  const zone = opts.timezone === undefined ? undefined : (await import("./zone.js")).validZone(opts.timezone);
  if (!("input" in parsed) || (opts.timezone !== undefined && zone === undefined)) return full(text);
  let line: string;
  try {
    line = await statuslineAnswer(parsed.input, {
      root: opts.root ?? defaultLocalRoot(env),
      cache: opts.cache ?? defaultReaderCache(env),
      zone,
      ttl: opts.ttl === undefined ? DEFAULT_TTL_MS : Number(opts.ttl),
    });
  } catch {
    // A bad config file, an unwritable cache …: the full command meets it again and says it as every command does.
    return full(text);
  }
  // Straight to fd 1: process.stdout would load the stream modules.
  try {
    writeSync(1, line + "\n");
  } catch {
    process.stdout.write(line + "\n"); // a non-blocking pipe that is full (EAGAIN)
  }
  return 0;
}

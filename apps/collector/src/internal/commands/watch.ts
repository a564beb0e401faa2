import { watch as fsWatch, type FSWatcher, existsSync, mkdirSync, readdirSync } from "node:fs";
import { join, resolve as resolvePath } from "node:path";
import { collect, runtimeRoots, type CollectSummary, type Discovered, type PassCache } from "../collect.js";
import { acquireRootLease } from "../root-lease.js";
import { writeLastPass, writeWatchStatus } from "../state.js";
import { CollectorError } from "../errors.js";
import { formatSummary } from "./collect.js";
import { exitCodeOf, interruptedLine } from "../interrupt.js";
import type { PushBacklog } from "../backlog.js";
import { startOtlpReceiver, type OtlpReceiver } from "../otlp-receiver.js";
import type { WatchMetrics } from "../metrics-endpoint.js";
import { defineCommand, jsonLine, text, type RunContext } from "@lake/cli";
import { ROOT, JSON_FLAG, resolveRoot } from "../options.js";
import { SOURCE, SOURCES_ONLY, parseSources } from "../sources.js";

const DESCRIPTION = `Installs native file watches (recursive: inotify on Linux, FSEvents on macOS) on every source root,
then runs a full pass (discovery + every session; a session unchanged since its last pass costs
one cursor read per source). After that, the file events name what changed: a pass reads only the
sessions of the changed files. A new or removed file, an event without a name, a failed watch or
an overflowing event queue (more than 10,000 changed files waiting) runs a full pass instead, and
a full pass also runs every --interval seconds (default 600) to catch what events miss (network
file systems, a store moved into place). Bursts are coalesced: a session is read at most once per
--read-interval seconds (default 1), so a fast writer cannot cause a pass per line. Where
recursive watching is not available, watch says so (state degraded, with the reason) and watches
each directory of the tree by itself (at most 4,096 per root; one that appears is watched from the
full pass its event asks for), with the full pass every --interval seconds behind it.

One writer per root: <root>/watch.lock/owner.json names the owner (host, pid, start time, token);
a live owner means refusal (exit 4), a dead one is removed after a liveness check.
<root>/watch.status (and "lake-collector status") shows the state — catching-up, running,
degraded (with the reason: a pass failed or left sources pending or in conflict, a watch failed
or is not recursive) or stopped —, the last pass and what it read, the last full pass and why,
event-queue overflows, pending and conflicted sources and the push backlog. It logs one line per
pass that landed something or met a problem (with --json, one JSON object per pass on stdout:
{ts, kind, detail}). SIGTERM stops it at the pass's next safe point (exit 0); Ctrl-C (SIGINT) too,
then prints "interrupted; N passes done, run again to continue" and exits 130.

--otlp-listen HOST:PORT (e.g. 127.0.0.1:4318) also receives OTLP/HTTP metrics on /v1/metrics
(application/x-protobuf or application/json, gzip allowed): each request is written to
<root>/_metrics/metrics-<received-at>-<seq>-otlp.pb, fsynced, before the 200; a request that does not
decode is answered 400 and kept out. It listens before the first pass.

--metrics-port PORT (on 127.0.0.1) or HOST:PORT serves the metrics lake derives from the landed
files in the Prometheus text format on /metrics: after every pass each newly landed file is
derived (a receipt under <root>/<session>/metrics/, then _metrics/metrics-<session>-<seq>-local.pb)
and the scrape returns every session's counters — lake_usage_tokens_total{session_id, runtime,
gen_ai_response_model, gen_ai_token_type}, lake_usage_cost_usd_total (cost the runtime recorded),
lake_usage_responses_total, lake_session_count_total, lake_tool_calls_total, lake_tool_failures_total.`;

/** How long a burst of events may keep arriving before its pass starts (ms). */
const SETTLE_MS = 100;
/** The least time between two full passes that events asked for (a writer of new files cannot cause one per file). */
const FULL_GAP_MS = 2000;
/** Changed files waiting for a pass before the queue counts as overflowed (LAKE_WATCH_QUEUE_LIMIT overrides). */
const QUEUE_LIMIT = 10_000;

function seconds(flag: string, v: unknown, dflt: number): number {
  if (v === undefined) return dflt * 1000;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new CollectorError("Usage", `--${flag} ${String(v)}: expected a positive number of seconds`);
  return n * 1000;
}

/** Directories watched one by one at most, per root, where recursive watching is not available. */
const MAX_DIR_WATCHES = 4096;

/** One root's watch: the directory, whether it is recursive, and why it failed when it did. */
interface RootWatch {
  readonly dir: string;
  watcher?: FSWatcher | undefined;
  /** Without recursive watching: one watch per directory of the tree (the root's own included). */
  subs?: Map<string, FSWatcher>;
  recursive: boolean;
  failed?: string | undefined;
}

/** A recursive watch, or the error a platform without one gives (LAKE_TEST_NO_RECURSIVE_WATCH=1 plays one, for tests). */
function watchRecursive(dir: string, on: (ev: string, name: string | Buffer | null) => void): FSWatcher {
  if (process.env.LAKE_TEST_NO_RECURSIVE_WATCH === "1") throw Object.assign(new Error("recursive watching is not available"), { code: "ERR_FEATURE_UNAVAILABLE_ON_PLATFORM" });
  return fsWatch(dir, { recursive: true, persistent: true }, on);
}

/**
 * Watch every directory of `w`'s tree one by one (breadth first, at most MAX_DIR_WATCHES), adding
 * the ones that appeared since and dropping the ones gone; returns how many were left unwatched.
 */
function watchTree(w: RootWatch, on: (dir: string, ev: string, name: string | Buffer | null) => void, failed: (dir: string) => void): number {
  const subs = (w.subs ??= new Map());
  for (const [d, fw] of subs) {
    if (!existsSync(d)) {
      fw.close();
      subs.delete(d);
    }
  }
  let left = 0;
  const queue = [w.dir];
  for (let d = queue.shift(); d !== undefined; d = queue.shift()) {
    if (!subs.has(d)) {
      if (subs.size >= MAX_DIR_WATCHES) {
        left++;
        continue;
      }
      try {
        const fw = fsWatch(d, { persistent: true }, (ev, name) => on(d!, ev, name));
        const dir = d;
        fw.on("error", () => {
          fw.close();
          subs.delete(dir);
          failed(dir);
        });
        subs.set(d, fw);
      } catch {
        continue; // gone or unreadable: the full pass covers it
      }
    }
    try {
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) queue.push(join(d, e.name));
    } catch {
      /* gone meanwhile */
    }
  }
  return left;
}

const OPTIONS = { root: ROOT, source: SOURCE, "sources-only": SOURCES_ONLY, interval: text("SECONDS", "a full rescan at least this often (default 600)"), "read-interval": text("SECONDS", "read changed files at most this often (default 1)"), "max-passes": text("N", "stop after N passes"), json: JSON_FLAG, "otlp-listen": text("HOST:PORT", "also receive OTLP/HTTP metrics on /v1/metrics (e.g. 127.0.0.1:4318)"), "metrics-port": text("PORT", "serve the derived metrics for Prometheus on /metrics (PORT on 127.0.0.1, or HOST:PORT)") } as const;

async function run({ values, io }: RunContext<typeof OPTIONS>): Promise<number> {
  const root = resolveRoot(values.root);
  mkdirSync(root, { recursive: true });
  const sources = { roots: parseSources(values.source), only: Boolean(values["sources-only"]) };
  const rescanMs = seconds("interval", values.interval, 600);
  const readMs = seconds("read-interval", values["read-interval"], 1);
  const maxPasses = values["max-passes"] === undefined ? Infinity : Number(values["max-passes"]);
  const envLimit = Number(process.env.LAKE_WATCH_QUEUE_LIMIT);
  const queueLimit = Number.isInteger(envLimit) && envLimit > 0 ? envLimit : QUEUE_LIMIT;
  const lease = acquireRootLease(root);
  const startedAt = new Date().toISOString();

  let stopping = false;
  let wake: (() => void) | undefined;
  const poke = () => wake?.();
  /** Sessions whose files changed, with when the first event came. */
  const pending = new Map<string, number>();
  /** Why the next full pass runs (undefined: none asked for). */
  let rescan: string | undefined = "start";
  let discovered: Discovered | undefined;
  const lastRead = new Map<string, number>();
  let overflows = 0;
  let lastOverflow: { at: string; queued: number } | undefined;

  const requestRescan = (why: string) => {
    rescan ??= why;
    poke();
  };
  const onEvent = (dir: string, event: string, name: string | Buffer | null) => {
    if (stopping) return;
    if (name === null || name === undefined) return requestRescan("an event without a file name");
    const path = join(dir, name.toString());
    const sid = discovered?.bySource.get(path);
    if (sid === undefined || event !== "change") {
      // A file discovery does not know yet (or one renamed or removed): discovery decides.
      return requestRescan(sid === undefined ? "a new file" : "a file renamed or removed");
    }
    if (rescan !== undefined || pending.has(sid)) return poke();
    if (pending.size >= queueLimit) {
      // The queue overflowed: drop it, a full pass finds everything.
      overflows++;
      lastOverflow = { at: new Date().toISOString(), queued: pending.size + 1 };
      pending.clear();
      return requestRescan("event queue overflow");
    }
    pending.set(sid, Date.now());
    poke();
  };

  const watches = new Map<string, RootWatch>();
  const perDirectory = (w: RootWatch, why: string) => {
    const base = why.replace(/: watching \d+ directories.*$/, "");
    const left = watchTree(w, onEvent, () => requestRescan("a watch failed"));
    w.failed = `${base}: watching ${w.subs!.size} directories one by one${left ? ` (${left} more are found by the full pass)` : ""}, new ones from the next full pass, and a full pass every ${rescanMs / 1000} s`;
  };
  const installWatches = () => {
    for (const dirs of runtimeRoots(root, sources).values()) {
      for (const d of dirs) {
        const dir = resolvePath(d);
        const w = watches.get(dir) ?? { dir, recursive: true };
        watches.set(dir, w);
        if (!existsSync(dir)) continue;
        if (w.subs) {
          perDirectory(w, w.failed ?? "");
          continue;
        }
        if (w.watcher) continue;
        try {
          w.watcher = watchRecursive(dir, (ev, name) => onEvent(dir, ev, name));
          w.recursive = true;
          w.failed = undefined;
        } catch (e) {
          // No recursive watching here: each directory watched by itself (the ones that appear
          // from the next full pass on), and the full pass every --interval.
          w.recursive = false;
          perDirectory(w, `recursive file watching is not available (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
          continue;
        }
        w.watcher.on("error", (err) => {
          w.watcher?.close();
          w.watcher = undefined;
          w.failed = `watch failed (${(err as NodeJS.ErrnoException).code ?? err.message}); watched again at the next full pass`;
          requestRescan("a watch failed");
        });
      }
    }
  };

  let signal: NodeJS.Signals | undefined;
  const stop = (sig: NodeJS.Signals) => {
    if (stopping && sig === "SIGINT") process.exit(exitCodeOf(sig)); // a second Ctrl-C: at once
    stopping = true;
    signal = sig;
    poke();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const log = (kind: string, detail: unknown) => {
    if (values.json) io.out(jsonLine({ ts: new Date().toISOString(), kind, detail }));
    else io.out(`${new Date().toISOString()} watch ${kind} ${typeof detail === "string" ? detail : JSON.stringify(detail)}\n`);
  };
  let receiver: OtlpReceiver | undefined;
  const otlpListen = values["otlp-listen"];
  if (typeof otlpListen === "string") {
    try {
      receiver = await startOtlpReceiver(root, otlpListen, (l) => log("otlp", l));
    } catch (e) {
      lease.release();
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      throw e;
    }
    log("otlp", `listening on http://${receiver.address}/v1/metrics`);
  }
  let metrics: WatchMetrics | undefined;
  if (typeof values["metrics-port"] === "string") {
    try {
      const { startWatchMetrics } = await import("../metrics-endpoint.js");
      metrics = await startWatchMetrics(root, values["metrics-port"], (l) => log("metrics", l));
    } catch (e) {
      await receiver?.close();
      lease.release();
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      throw e;
    }
    log("metrics", `serving http://${metrics.address}/metrics`);
  }

  const cache: PassCache = {};
  let passes = 0;
  let state: "catching-up" | "running" | "degraded" = "catching-up";
  let lastPass: Record<string, unknown> | undefined;
  let lastRescan: { at: string; reason: string } | undefined;
  let rescans = 0;
  let passError: string | undefined;
  /** Sources pending and in conflict per session, as its last pass left them. */
  const pendingBy = new Map<string, number>();
  const conflictsBy = new Map<string, number>();
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const onSession = (sid: string, r: { pending: number; conflicts: number }) => {
    if (r.pending) pendingBy.set(sid, r.pending);
    else pendingBy.delete(sid);
    if (r.conflicts) conflictsBy.set(sid, r.conflicts);
    else conflictsBy.delete(sid);
  };
  let backlog: PushBacklog | undefined;
  const reasons = (): string[] => {
    const out: string[] = [];
    if (passError) out.push(passError);
    const pendingSources = total(pendingBy);
    const conflicts = total(conflictsBy);
    if (pendingSources) out.push(`${pendingSources} sources pending`);
    if (conflicts) out.push(`${conflicts} sources in conflict (lake-collector conflicts lists them)`);
    for (const w of watches.values()) if (w.failed) out.push(`${w.dir}: ${w.failed}`);
    return out;
  };
  const status = (s: string) =>
    writeWatchStatus(root, {
      state: s,
      pid: process.pid,
      started_at: startedAt,
      passes,
      ...(s === "degraded" ? { reason: reasons().join("; ") } : {}),
      watching: [...watches.values()].map((w) => ({ dir: w.dir, recursive: w.recursive, active: w.watcher !== undefined || (w.subs?.size ?? 0) > 0, ...(w.subs ? { directories: w.subs.size } : {}), ...(w.failed ? { problem: w.failed } : {}) })),
      ...(lastPass ? { last_pass: lastPass } : {}),
      ...(lastRescan ? { last_full_pass: lastRescan } : {}),
      full_passes: rescans,
      overflows,
      ...(lastOverflow ? { last_overflow: lastOverflow } : {}),
      queued: pending.size,
      pending: total(pendingBy),
      conflicts: total(conflictsBy),
      ...(conflictsBy.size ? { conflicted_sessions: [...conflictsBy.keys()].sort() } : {}),
      ...(pendingBy.size ? { pending_sessions: [...pendingBy.keys()].sort() } : {}),
      ...(backlog ? { push_backlog: backlog } : {}),
    });

  installWatches();
  status(state);
  let nextRescanAt = Date.now() + rescanMs;
  let lastFullAt = 0;
  try {
    while (!stopping && passes < maxPasses) {
      const now = Date.now();
      if (rescan === undefined && now >= nextRescanAt) rescan = "interval";
      let due: Set<string> | undefined;
      let why: string | undefined;
      // A full pass events asked for waits FULL_GAP_MS after the last one; meanwhile nothing else runs.
      const fullAt = rescan === undefined || rescan === "start" || rescan === "interval" ? now : lastFullAt + Math.max(readMs, FULL_GAP_MS);
      if (rescan !== undefined) {
        if (now >= fullAt) why = rescan;
      } else {
        for (const [sid, since] of pending) {
          if (now - since >= SETTLE_MS && now - (lastRead.get(sid) ?? 0) >= readMs) (due ??= new Set()).add(sid);
        }
      }
      if (why === undefined && !due) {
        // Sleep until the next session is due, the next full pass, or an event.
        let until = rescan !== undefined ? fullAt : nextRescanAt;
        if (rescan === undefined) for (const [sid, since] of pending) until = Math.min(until, Math.max(since + SETTLE_MS, (lastRead.get(sid) ?? 0) + readMs));
        await new Promise<void>((res) => {
          const t = setTimeout(res, Math.max(1, until - Date.now()));
          wake = () => {
            clearTimeout(t);
            // Let a burst settle before looking.
            setTimeout(res, SETTLE_MS);
          };
        });
        wake = undefined;
        continue;
      }
      const full = why !== undefined;
      if (full) {
        lastFullAt = now;
        rescan = undefined;
        pending.clear();
        installWatches(); // roots that appeared since, watches that failed
      } else for (const sid of due!) pending.delete(sid);
      const t0 = Date.now();
      const cpu0 = process.cpuUsage();
      let summary: CollectSummary | undefined;
      try {
        summary = await collect({
          root, sources, logger: (l) => log("conflict", l), shouldStop: () => stopping, onSession, cache,
          ...(full ? { onDiscovered: (d: Discovered) => (discovered = d) } : { only: { discovered: discovered!, sessions: due! } }),
        });
        writeLastPass(root, summary);
        passError = undefined;
        if (summary.failed && summary.problems.length > 0) passError = `the last pass met ${summary.problems.length} problems`;
      } catch (e) {
        passError = `the last pass failed: ${(e as Error).message}`;
        log("error", (e as Error).message);
      }
      const read = full ? undefined : due;
      await metrics?.afterPass(read);
      for (const sid of read ?? discovered?.bySource.values() ?? []) lastRead.set(sid, t0);
      passes++;
      if (full) {
        rescans++;
        lastRescan = { at: new Date(t0).toISOString(), reason: why! };
        nextRescanAt = t0 + rescanMs;
        try {
          const { pushBacklog } = await import("../backlog.js");
          backlog = pushBacklog(root);
        } catch {
          backlog = undefined; // a damaged push.state: push names it
        }
      }
      if (summary) {
        const cpu = process.cpuUsage(cpu0);
        lastPass = {
          at: new Date(t0).toISOString(), kind: full ? "full" : "events", ...(full ? { reason: why } : {}), ms: Date.now() - t0, cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
          sessions: summary.sessions, unchanged_sessions: summary.unchanged_sessions, sources: summary.sources, landed_files: summary.landed_files, records: summary.records,
          bytes_read: summary.bytes_read, rounds: summary.rounds, problems: summary.problems.length, locked: summary.locked.length,
        };
        if (summary.landed_files > 0) backlog = backlog ? { ...backlog, files: backlog.files + summary.landed_files } : undefined;
        if (values.json || summary.landed_files > 0 || summary.problems.length > 0 || passes === 1) {
          log("pass", values.json ? { ...summary, kind: full ? "full" : "events" } : `${full ? `full (${why})` : "events"}: ${formatSummary(summary).trim()}`);
        }
        // More to read (window limit) or a session locked by another collector: look again.
        if (summary.pending > 0 || summary.locked.length > 0) {
          if (full) rescan ??= "sources pending";
          else for (const sid of [...due!]) pending.set(sid, Date.now());
        }
      }
      state = reasons().length > 0 ? "degraded" : "running";
      status(state);
    }
  } finally {
    for (const w of watches.values()) {
      w.watcher?.close();
      for (const fw of w.subs?.values() ?? []) fw.close();
    }
    await receiver?.close();
    await metrics?.close();
    status("stopped");
    lease.release();
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
  if (signal === "SIGINT") {
    io.err(`lake-collector: ${interruptedLine(passes, "passes")}\n`);
    return exitCodeOf(signal);
  }
  return 0;
}

/** `lake-collector watch`. */
export const command = defineCommand({
  summary: "collect continuously, costing what changes",
  description: DESCRIPTION,
  options: OPTIONS,
  run,
});

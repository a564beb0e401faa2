import { watch as fsWatch, type FSWatcher, existsSync, mkdirSync } from "node:fs";
import { LostSessionTracker } from "@lake/store";
import { collect, runtimeRoots, type CollectSummary } from "../collect.js";
import { acquireRootLease } from "../root-lease.js";
import { writeLastPass, writeWatchStatus } from "../state.js";
import { parse, parseSources, resolveRoot } from "../options.js";
import { formatSummary } from "./collect.js";
import { exitCodeOf, interruptedLine } from "../interrupt.js";
import { startOtlpReceiver, type OtlpReceiver } from "../otlp-receiver.js";

export const help = `lake-collector watch — collect continuously

Usage: lake-collector watch [--root DIR] [--source RUNTIME=PATH]... [--sources-only]
                            [--interval SECONDS] [--max-passes N] [--json]
                            [--otlp-listen HOST:PORT]

Installs native file watches on every source root first, then catches up, then runs a pass
whenever a watched file changes (debounced) and at least every --interval seconds (default 60).
One writer per root: <root>/watch.lock/owner.json names the owner (host, pid, start time, token);
a live owner means refusal (exit 4), a dead one is removed after a liveness check.
<root>/watch.status moves through catching-up, running, degraded (a pass failed or left sources
pending/in conflict) and stopped. SIGTERM stops it at the pass's next safe point (exit 0); Ctrl-C
(SIGINT) too, then prints "interrupted; N passes done, run again to continue" and exits 130. With --json, one JSON object per
pass on stdout ({ts, kind, detail}).

--otlp-listen HOST:PORT (e.g. 127.0.0.1:4318) also receives OTLP/HTTP metrics on /v1/metrics
(application/x-protobuf or application/json, gzip allowed): each request is written to
<root>/_metrics/metrics-<received-at>-<seq>-otlp.pb, fsynced, before the 200; a request that does not
decode is answered 400 and kept out. It listens before the first pass.
`;

export async function run(args: string[]): Promise<number> {
  const { values } = parse(args, {
    root: { type: "string" },
    source: { type: "string", multiple: true },
    "sources-only": { type: "boolean" },
    interval: { type: "string" },
    "max-passes": { type: "string" },
    json: { type: "boolean" },
    "otlp-listen": { type: "string" },
  });
  const root = resolveRoot(values.root);
  mkdirSync(root, { recursive: true });
  const sources = { roots: parseSources(values.source), only: Boolean(values["sources-only"]) };
  const intervalMs = (values.interval === undefined ? 60 : Number(values.interval)) * 1000;
  const maxPasses = values["max-passes"] === undefined ? Infinity : Number(values["max-passes"]);
  const lease = acquireRootLease(root);
  let dirty = true;
  let stopping = false;
  let wake: (() => void) | undefined;
  const poke = () => {
    dirty = true;
    wake?.();
  };
  const watchers: FSWatcher[] = [];
  for (const dirs of runtimeRoots(root, sources).values()) {
    for (const d of dirs) {
      if (!existsSync(d)) continue;
      try {
        watchers.push(fsWatch(d, { recursive: true, persistent: true }, poke));
      } catch {
        watchers.push(fsWatch(d, { persistent: true }, poke));
      }
    }
  }
  let signal: NodeJS.Signals | undefined;
  const stop = (sig: NodeJS.Signals) => {
    if (stopping && sig === "SIGINT") process.exit(exitCodeOf(sig)); // a second Ctrl-C: at once
    stopping = true;
    signal = sig;
    wake?.();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const log = (kind: string, detail: unknown) => {
    if (values.json) process.stdout.write(JSON.stringify({ ts: new Date().toISOString(), kind, detail }) + "\n");
    else process.stdout.write(`${new Date().toISOString()} watch ${kind} ${typeof detail === "string" ? detail : JSON.stringify(detail)}\n`);
  };
  let receiver: OtlpReceiver | undefined;
  const otlpListen = values["otlp-listen"];
  if (typeof otlpListen === "string") {
    try {
      receiver = await startOtlpReceiver(root, otlpListen, (l) => log("otlp", l));
    } catch (e) {
      for (const w of watchers) w.close();
      lease.release();
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      throw e;
    }
    log("otlp", `listening on http://${receiver.address}/v1/metrics`);
  }
  const tracker = new LostSessionTracker();
  let passes = 0;
  let state: "catching-up" | "running" | "degraded" = "catching-up";
  writeWatchStatus(root, { state, pid: process.pid });
  try {
    while (!stopping && passes < maxPasses) {
      if (dirty) {
        dirty = false;
        let summary: CollectSummary | undefined;
        try {
          summary = await collect({ root, sources, tracker, logger: (l) => log("conflict", l), shouldStop: () => stopping });
          writeLastPass(root, summary);
          state = summary.failed ? "degraded" : "running";
          log("pass", values.json ? summary : formatSummary(summary).trim());
          if (summary.pending > 0) dirty = true;
        } catch (e) {
          state = "degraded";
          log("error", (e as Error).message);
        }
        passes++;
        writeWatchStatus(root, { state, pid: process.pid, passes, ...(summary ? { conflicts: summary.conflicts, pending: summary.pending } : {}) });
        continue;
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          dirty = true;
          resolve();
        }, intervalMs);
        wake = () => {
          clearTimeout(t);
          // debounce: let a burst of writes settle
          setTimeout(resolve, 200);
        };
      });
      wake = undefined;
    }
  } finally {
    for (const w of watchers) w.close();
    await receiver?.close();
    writeWatchStatus(root, { state: "stopped", pid: process.pid, passes });
    lease.release();
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
  if (signal === "SIGINT") {
    process.stderr.write(`lake-collector: ${interruptedLine(passes, "passes")}\n`);
    return exitCodeOf(signal);
  }
  return 0;
}

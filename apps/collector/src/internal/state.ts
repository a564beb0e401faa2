// Small state files of the collector in the root: collector.state (the last pass) and
// watch.status (a watching collector's state), each replaced atomically.
import { join } from "node:path";
import { randomHex, writeAtomic } from "@lake/durable";
import type { CollectSummary } from "./collect.js";

/**
 * Temp file, rename (@lake/durable), not fsynced: these are status for `status` to show, not state a
 * pass relies on, and a damaged or lost one reads as absent (a crash of the machine can at most show
 * an older pass); the fsyncs cost every pass of 1,000 unchanged sessions some 3 % of its time.
 */
function replace(file: string, value: unknown): void {
  writeAtomic(file, JSON.stringify(value) + "\n", { temp: `${file}.tmp-${process.pid}-${randomHex(4)}`, mode: 0o644, sync: false });
}

/** Record the last collect pass in <root>/collector.state. */
export function writeLastPass(root: string, s: CollectSummary): void {
  replace(join(root, "collector.state"), {
    finished_at: new Date().toISOString(),
    sessions: s.sessions,
    landed_files: s.landed_files,
    records: s.records,
    pending: s.pending,
    conflicts: s.conflicts,
    failed: s.failed,
    ...(s.interrupted ? { interrupted: true } : {}),
  });
}

/** Write <root>/watch.status: catching-up, running, degraded or stopped. */
export function writeWatchStatus(root: string, status: { state: string; pid: number } & Record<string, unknown>): void {
  replace(join(root, "watch.status"), { ...status, updated_at: new Date().toISOString() });
}

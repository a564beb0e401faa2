import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { status } from "@lake/store";
import { runtimeRoots, sourceResolver } from "../collect.js";
import { rootOwner } from "../root-lease.js";
import { pushBacklog, type PushBacklog } from "../backlog.js";
import { defineCommand, jsonLine, type RunContext } from "@lake/cli";
import { ROOT, JSON_FLAG, resolveRoot } from "../options.js";
import { SOURCE, SOURCES_ONLY, parseSources } from "../sources.js";

const DESCRIPTION = `Sessions, streams, landed files, cursors by state (active, conflict, source_gone), pending sources
(active cursors whose source has grown past them; sources are found as collect finds them, so pass
the same --source flags), each named with why (bytes not collected yet, or only a last line
without its newline), conflicts, locked sessions, the last pass (from collector.state), the
watcher (from watch.status: running, degraded with the reason, or stopped — a watcher whose
process is gone is shown stopped —, its last pass and what it read, its last full pass and why,
event-queue overflows) and the push backlog (landed files not sent yet, per fleet store in
push.state). --json prints one object, keys in snake_case.`;

/** Why a source is pending, in words. */
const PENDING_WHY = {
  "new-lines": (n: number) => `${n} bytes not collected yet (run collect)`,
  "partial-line": (n: number) => `a last line of ${n} bytes without its newline (a write in progress or a torn line: collected once a line follows)`,
} as const;

function readJson(file: string): Record<string, unknown> | null {
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** watch.status, with a watcher whose process is gone shown as stopped. */
function watchState(root: string): Record<string, unknown> | null {
  const w = readJson(join(root, "watch.status"));
  if (!w || w.state === "stopped") return w;
  const owner = rootOwner(root);
  if (!owner || owner.pid !== w.pid || owner.liveness === "dead") return { ...w, state: "stopped", reason: `the watcher (pid ${String(w.pid)}) is gone; it last wrote at ${String(w.updated_at)}` };
  return w;
}

function watchLines(w: Record<string, unknown> | null): string {
  if (!w) return "  watch: not running (no watch.status)\n";
  const lp = w.last_pass as Record<string, unknown> | undefined;
  const lf = w.last_full_pass as { at: string; reason: string } | undefined;
  const lo = w.last_overflow as { at: string; queued: number } | undefined;
  let out = `  watch: ${String(w.state)}${w.reason ? ` (${String(w.reason)})` : ""}, pid ${String(w.pid)}, ${String(w.passes ?? 0)} passes\n`;
  if (lp) out += `    last pass ${String(lp.at)} (${String(lp.kind)}): ${String(lp.sessions)} sessions (${String(lp.unchanged_sessions)} unchanged), ${String(lp.landed_files)} files landed, ${String(lp.records)} records, ${(Number(lp.bytes_read) / 1e6).toFixed(1)} MB read, ${String(lp.ms)} ms\n`;
  if (lf) out += `    last full pass ${lf.at} (${lf.reason}), ${String(w.full_passes ?? 0)} in all\n`;
  if (lo) out += `    event queue overflowed ${String(w.overflows)} times, last at ${lo.at} (${lo.queued} files queued): recovered by a full pass\n`;
  return out;
}

const OPTIONS = { root: ROOT, source: SOURCE, "sources-only": SOURCES_ONLY, json: JSON_FLAG } as const;

async function run({ values, io }: RunContext<typeof OPTIONS>): Promise<number> {
  const root = resolveRoot(values.root);
  const roots = runtimeRoots(root, { roots: parseSources(values.source), only: Boolean(values["sources-only"]) });
  const s = status(root, { resolve: sourceResolver(roots) });
  const last = readJson(join(root, "collector.state"));
  const watch = watchState(root);
  let backlog: PushBacklog | { error: string };
  try {
    backlog = pushBacklog(root);
  } catch (e) {
    backlog = { error: (e as Error).message };
  }
  const out = {
    root, sessions: s.sessions, streams: s.streams, landed_files: s.landedFiles, cursors: s.cursors, pending: s.pending, pending_sources: s.pendingSources,
    conflicts: s.conflicts, locked: s.locked, last_pass: last, watch, push_backlog: backlog,
  };
  if (values.json) io.out(jsonLine(out));
  else {
    const b = "error" in backlog ? `  push backlog: unknown (${backlog.error})\n` : `  push backlog: ${backlog.files} of ${backlog.landed_files} landed files not pushed${backlog.receivers.map((r) => `\n    ${r.store}: ${r.files} files of ${r.sessions} sessions`).join("")}\n`;
    io.out(
      `${root}\n  sessions ${s.sessions}, streams ${s.streams}, landed files ${s.landedFiles}\n  cursors: ${s.cursors.active} active, ${s.cursors.conflict} conflict, ${s.cursors.source_gone} source_gone\n  pending ${s.pending}, conflicts ${s.conflicts}, locked ${s.locked}\n${s.pendingSources.map((p) => `    pending ${p.path}: ${PENDING_WHY[p.reason](p.bytes)}\n`).join("")}  last pass: ${last ? `${String(last.finished_at)} (${String(last.landed_files)} files landed)` : "none"}\n${watchLines(watch)}${b}`,
    );
  }
  return 0;
}

/** `lake-collector status`. */
export const command = defineCommand({
  summary: "what the root holds, and how its watcher is doing",
  description: DESCRIPTION,
  options: OPTIONS,
  run,
});

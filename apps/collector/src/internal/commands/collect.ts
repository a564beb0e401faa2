import { MAX_JOBS, collect, restoreHeapFlags, type CollectSummary } from "../collect.js";
import { writeLastPass } from "../state.js";
import { exitCodeOf, interruptedLine, trapInterrupts } from "../interrupt.js";
import { defineCommand, jsonLine, count, flag, seconds, texts, type RunContext } from "@lake/cli";
import { ROOT, JSON_FLAG, resolveRoot } from "../options.js";
import { SOURCE, SOURCES_ONLY, parseSources } from "../sources.js";

const DESCRIPTION = `Reads Claude Code (~/.claude/projects), Codex (~/.codex), Gemini CLI (~/.gemini/tmp) and broca
sources whose roots exist, and the hook spool of the root. --source RUNTIME=PATH replaces that
runtime's roots (repeatable); --sources-only reads only the --source roots. Per session, under its
lock: read new lines, convert, mask secrets, land, commit cursors, update the index, publish
rounds. Vendor stores are never written. --max-delta-bytes sets the read budget of each landed
file (default 2 MiB; a file is cut once, so a new budget applies to new files only).

Records of Claude Code sources are converted and masked in worker threads once a pass has 4 MiB
to convert; --jobs N (or LAKE_COLLECT_JOBS=N) sets their number (default: the cores) and starts
them at once; --jobs 1 converts everything on the main thread. Landing stays on the main thread,
one writer per session in seq order: the landed files are the same either way.

A source that cannot be taken (unreadable, a FIFO, socket or device — never opened —, a dangling
link, not a transcript of its runtime, in conflict) is named on stderr in one line and listed in
--json "problems"; the pass goes on with every other source.

Ctrl-C (SIGINT, or SIGTERM) stops the pass at the next safe point — after the source being read
has its cursor saved — releases the session's lock, prints "interrupted; N sessions done, run
again to continue" and exits 130 (143 for SIGTERM); a second Ctrl-C exits at once.

Exit codes: 0 done · 3 completed with problems (a source unreadable, refused or in conflict, or
pending after 65 windows: the rest landed) · 4 a session was locked by another collector (after
--wait) · 7 I/O error on the root (read-only, full, permission denied: nothing landed is changed)
· 2 usage error · 1 internal error · 130 interrupted.`;

function progress(p: { sessions: number; totalSessions: number; bytes: number; totalBytes: number }): void {
  const width = 24;
  const frac = p.totalBytes > 0 ? p.bytes / p.totalBytes : p.totalSessions > 0 ? p.sessions / p.totalSessions : 1;
  const bar = "#".repeat(Math.round(frac * width)).padEnd(width, ".");
  const mb = (n: number) => (n / 1e6).toFixed(1);
  // The progress bar is drawn only on a terminal (stderr a TTY), so it writes to the terminal itself.
  process.stderr.write(`\r[${bar}] ${p.sessions}/${p.totalSessions} sessions  ${mb(p.bytes)}/${mb(p.totalBytes)} MB`);
}

export function formatSummary(s: CollectSummary): string {
  const lines = [
    `${s.root}: ${s.sessions} sessions, ${s.sources} sources, ${s.landed_files} files landed (${s.records} records, ${(s.bytes_read / 1e6).toFixed(1)} MB read), ${s.rounds} rounds published`,
  ];
  if (s.pending) lines.push(`${s.pending} sources pending: run collect again`);
  if (s.conflicts) lines.push(`${s.conflicts} sources in conflict (lake-collector conflicts lists them; resolve decides)`);
  if (s.gone) lines.push(`${s.gone} sources gone`);
  if (s.locked.length) lines.push(`${s.locked.length} sessions locked by another collector: ${s.locked.join(", ")}`);
  if (s.problems.length) lines.push(`${s.problems.length} problems (each named above): the rest landed`);
  return lines.join("\n") + "\n";
}

const OPTIONS = { root: ROOT, source: SOURCE, "sources-only": SOURCES_ONLY, include: texts("GLOB", "only sources matching GLOB (repeatable)"), exclude: texts("GLOB", "skip sources matching GLOB (repeatable)"), wait: seconds("wait this long for a session locked by another collector (default 0)", { default: 0 }), "no-parse": flag("land only; publish no rounds"), "max-delta-bytes": count("N", "read budget of each landed file (default 2 MiB)", { min: 1 }), jobs: count("N", "convert worker threads (default: the cores, once a pass has 4 MiB to convert; 1: none)", { min: 1, max: MAX_JOBS }), json: JSON_FLAG } as const;

async function run({ values, io }: RunContext<typeof OPTIONS>): Promise<number> {
  const budget = values["max-delta-bytes"];
  const root = resolveRoot(values.root);
  const tty = !values.json && process.stderr.isTTY;
  const traps = trapInterrupts();
  let summary: CollectSummary;
  try {
    summary = await collect({
      root,
      sources: { roots: parseSources(values.source), only: Boolean(values["sources-only"]) },
      ...(values.include.length ? { include: values.include } : {}),
      ...(values.exclude.length ? { exclude: values.exclude } : {}),
      waitMs: values.wait * 1000,
      parse: !values["no-parse"],
      ...(budget ? { maxDeltaBytes: budget } : {}),
      ...(values.jobs !== undefined ? { jobs: values.jobs } : {}),
      ...(tty ? { onProgress: progress } : {}),
      // Its warnings the way its summary and errors go (@lake/cli's processIo), so they keep their order.
      logger: (line: string) => io.err(line + "\n"),
      shouldStop: () => traps.signal() !== undefined,
    });
  } finally {
    traps.release();
    restoreHeapFlags();
  }
  if (tty) io.err("\n");
  writeLastPass(root, summary);
  io.out(values.json ? jsonLine(summary) : formatSummary(summary));
  const sig = traps.signal();
  if (summary.interrupted && sig) {
    io.err(`lake-collector: ${interruptedLine(summary.sessions, "sessions")}\n`);
    return exitCodeOf(sig);
  }
  if (summary.failed) return 3;
  if (summary.locked.length > 0) return 4;
  return 0;
}

/** `lake-collector collect`. */
export const command = defineCommand({
  summary: "one pass over every discovered source",
  description: DESCRIPTION,
  options: OPTIONS,
  run,
});

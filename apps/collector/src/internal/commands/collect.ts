import { collect, type CollectSummary } from "../collect.js";
import { parse, parseSources, resolveRoot } from "../options.js";
import { writeLastPass } from "../state.js";
import { CollectorError } from "../errors.js";
import { exitCodeOf, interruptedLine, trapInterrupts } from "../interrupt.js";

export const help = `lake-collector collect — one pass over every discovered source

Usage: lake-collector collect [--root DIR] [--source RUNTIME=PATH]... [--sources-only]
                              [--include GLOB]... [--exclude GLOB]... [--wait SECONDS] [--no-parse]
                              [--max-delta-bytes N] [--json]

Reads Claude Code (~/.claude/projects), Codex (~/.codex), Gemini CLI (~/.gemini/tmp) and broca
sources whose roots exist, and the hook spool of the root. --source RUNTIME=PATH replaces that
runtime's roots (repeatable); --sources-only reads only the --source roots. Per session, under its
lock: read new lines, convert, mask secrets, land, commit cursors, update the index, publish
rounds. Vendor stores are never written. --max-delta-bytes sets the read budget of each landed
file (default 2 MiB; a file is cut once, so a new budget applies to new files only).

A source that cannot be taken (unreadable, a FIFO, socket or device — never opened —, a dangling
link, not a transcript of its runtime, in conflict) is named on stderr in one line and listed in
--json "problems"; the pass goes on with every other source.

Ctrl-C (SIGINT, or SIGTERM) stops the pass at the next safe point — after the source being read
has its cursor saved — releases the session's lock, prints "interrupted; N sessions done, run
again to continue" and exits 130 (143 for SIGTERM); a second Ctrl-C exits at once.

Exit codes: 0 done · 3 completed with problems (a source unreadable, refused or in conflict, or
pending after 65 windows: the rest landed) · 4 a session was locked by another collector (after
--wait) · 7 I/O error on the root (read-only, full, permission denied: nothing landed is changed)
· 2 usage error · 1 internal error · 130 interrupted.
`;

function progress(p: { sessions: number; totalSessions: number; bytes: number; totalBytes: number }): void {
  const width = 24;
  const frac = p.totalBytes > 0 ? p.bytes / p.totalBytes : p.totalSessions > 0 ? p.sessions / p.totalSessions : 1;
  const bar = "#".repeat(Math.round(frac * width)).padEnd(width, ".");
  const mb = (n: number) => (n / 1e6).toFixed(1);
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

export async function run(args: string[]): Promise<number> {
  const { values } = parse(args, {
    root: { type: "string" },
    source: { type: "string", multiple: true },
    "sources-only": { type: "boolean" },
    include: { type: "string", multiple: true },
    exclude: { type: "string", multiple: true },
    wait: { type: "string" },
    "no-parse": { type: "boolean" },
    "max-delta-bytes": { type: "string" },
    json: { type: "boolean" },
  });
  const budget = values["max-delta-bytes"] === undefined ? undefined : Number(values["max-delta-bytes"]);
  if (budget !== undefined && (!Number.isInteger(budget) || budget <= 0)) throw new CollectorError("Usage", `--max-delta-bytes ${String(values["max-delta-bytes"])}: expected a positive integer`);
  const root = resolveRoot(values.root);
  const tty = !values.json && process.stderr.isTTY;
  const traps = trapInterrupts();
  let summary: CollectSummary;
  try {
    summary = await collect({
      root,
      sources: { roots: parseSources(values.source), only: Boolean(values["sources-only"]) },
      ...(values.include ? { include: values.include as string[] } : {}),
      ...(values.exclude ? { exclude: values.exclude as string[] } : {}),
      waitMs: values.wait ? Number(values.wait) * 1000 : 0,
      parse: !values["no-parse"],
      ...(budget ? { maxDeltaBytes: budget } : {}),
      ...(tty ? { onProgress: progress } : {}),
      shouldStop: () => traps.signal() !== undefined,
    });
  } finally {
    traps.release();
  }
  if (tty) process.stderr.write("\n");
  writeLastPass(root, summary);
  process.stdout.write(values.json ? JSON.stringify(summary) + "\n" : formatSummary(summary));
  const sig = traps.signal();
  if (summary.interrupted && sig) {
    process.stderr.write(`lake-collector: ${interruptedLine(summary.sessions, "sessions")}\n`);
    return exitCodeOf(sig);
  }
  if (summary.failed) return 3;
  if (summary.locked.length > 0) return 4;
  return 0;
}

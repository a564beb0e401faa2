// Tier 0 structural digest of one sealed session, from its own segments only: files touched,
// commands with exit codes, token usage (countUsage, broca's meaning), friction signals.
import { USAGE_KEYS, totalTokens, usageBySession, type Usage } from "@lake/events";
import type { FleetRow } from "@lake/segments";
import { DIGEST_VERSION, type Digest, type DigestCommand, type DigestFile, type FrictionSignal, type SessionPartition } from "@lake/layout";

export { DIGEST_VERSION };
export type { Digest, DigestCommand, DigestFile, FrictionSignal };

/** Friction thresholds (documented in the README; recorded inside every digest). */
export const DIGEST_THRESHOLDS = {
  /** The same command head failing at least this many times is `repeated_failure`. */
  repeated_failures: 3,
  /** A file modified (edit or write calls) at least this many times is `file_churn`. */
  file_modifications: 5,
  /** A session whose last tool results are at least this many failures in a row is `abandoned_after_failures`. */
  abandon_run: 3,
} as const;

/** Longest command text kept in a digest (characters); longer ones end in "…". */
export const MAX_COMMAND_CHARS = 1000;

const SHELL_TOOLS = new Set(["Bash", "bash", "shell", "local_shell", "exec_command", "run_shell_command", "shell_command"]);
const READ_TOOLS = new Set(["Read", "NotebookRead", "read_file", "view"]);
const EDIT_TOOLS = new Set(["Edit", "MultiEdit", "NotebookEdit", "replace", "edit_file"]);
const WRITE_TOOLS = new Set(["Write", "write_file", "create_file"]);

function inputObject(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The command text of a shell tool call's input (string, or an argv array joined by spaces). */
export function commandText(input: Record<string, unknown> | undefined): string | undefined {
  const c = input?.command ?? input?.cmd;
  if (typeof c === "string") return c;
  if (Array.isArray(c) && c.every((x) => typeof x === "string")) return c.join(" ");
  return undefined;
}

/**
 * The head of a command, the unit `repeated_failure` groups by: its first word (after leading
 * `NAME=value` assignments), plus the second word when that is a plain subcommand
 * (`[A-Za-z][A-Za-z0-9:_.-]*`): `mix test test/x.exs` → `mix test`, `ls -la` → `ls`.
 */
export function commandHead(command: string): string {
  const words = command.trim().split(/\s+/).filter((w) => w !== "");
  while (words.length > 1 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) words.shift();
  const first = words[0] ?? "";
  const second = words[1];
  return second !== undefined && /^[A-Za-z][A-Za-z0-9:_.-]*$/.test(second) ? `${first} ${second}` : first;
}

/** The exit code a tool result reports (see {@link DigestCommand.exit_code}). */
export function resultExitCode(r: FleetRow): number | null {
  if (r.exit_code !== undefined) return r.exit_code;
  if (r.is_error === true && r.text !== undefined) {
    const m = /^Exit code (-?\d+)/.exec(r.text);
    if (m) return Number(m[1]);
  }
  return null;
}

function failed(r: FleetRow): boolean {
  const code = resultExitCode(r);
  return r.is_error === true || (code !== null && code !== 0);
}

function bump(m: Map<string, number>, k: string, by = 1): void {
  m.set(k, (m.get(k) ?? 0) + by);
}

function sortedRecord(m: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of [...m.keys()].sort()) out[k] = m.get(k)!;
  return out;
}

function pickUsage(u: Usage): Usage {
  const out: Record<string, number> = {};
  for (const k of USAGE_KEYS) if (u[k] !== undefined) out[k] = u[k]!;
  return out as Usage;
}

/**
 * The digest of one session from its rows, in segment order. Deterministic: the same rows give the
 * same digest (no wall-clock time inside; every time comes from the records).
 */
export function computeDigest(part: SessionPartition, segments: number, rows: readonly FleetRow[]): Digest {
  const kinds = new Map<string, number>();
  const streams = new Set<string>();
  const models = new Set<string>();
  const sessionIds = new Set<string>();
  let first: string | null = null;
  let last: string | null = null;
  // Tool calls once per (stream, tool_call_id) — a resumed transcript repeats rows; results first seen per call id.
  const calls: FleetRow[] = [];
  const seenCalls = new Set<string>();
  const results = new Map<string, FleetRow>();
  const resultOrder: FleetRow[] = [];
  for (const r of rows) {
    bump(kinds, r.kind);
    streams.add(r.stream);
    sessionIds.add(r.session_id);
    if (r.model !== undefined && r.model !== "<synthetic>") models.add(r.model);
    if (r.ts !== undefined) {
      if (first === null || r.ts < first) first = r.ts;
      if (last === null || r.ts > last) last = r.ts;
    }
    if (r.kind === "tool_call" && r.tool_name !== undefined) {
      const id = r.tool_call_id !== undefined ? `c\0${r.stream}\0${r.tool_call_id}` : `r\0${r.stream}\0${r.record_id ?? ""}\0${r.content_hash}`;
      if (!seenCalls.has(id)) {
        seenCalls.add(id);
        calls.push(r);
      }
    } else if (r.kind === "tool_result" && r.tool_call_id !== undefined && !results.has(r.tool_call_id)) {
      results.set(r.tool_call_id, r);
      resultOrder.push(r);
    }
  }

  const tools = new Map<string, number>();
  const files = new Map<string, { reads: number; edits: number; writes: number }>();
  const commands: DigestCommand[] = [];
  const failuresByHead = new Map<string, (number | null)[]>();
  for (const c of calls) {
    const name = c.tool_name!;
    bump(tools, name);
    const input = inputObject(c.tool_input);
    const path = input?.file_path ?? input?.notebook_path ?? input?.absolute_path ?? (READ_TOOLS.has(name) || EDIT_TOOLS.has(name) || WRITE_TOOLS.has(name) ? input?.path : undefined);
    if (typeof path === "string" && path !== "") {
      const kind = READ_TOOLS.has(name) ? "reads" : EDIT_TOOLS.has(name) ? "edits" : WRITE_TOOLS.has(name) ? "writes" : undefined;
      if (kind !== undefined) {
        let f = files.get(path);
        if (!f) files.set(path, (f = { reads: 0, edits: 0, writes: 0 }));
        f[kind]++;
      }
    }
    if (SHELL_TOOLS.has(name)) {
      const text = commandText(input);
      if (text === undefined) continue;
      const res = c.tool_call_id !== undefined ? results.get(c.tool_call_id) : undefined;
      const exit = res ? resultExitCode(res) : null;
      const status = res === undefined ? "no_result" : failed(res) ? "failed" : "ok";
      commands.push({
        ts: c.ts ?? null,
        tool_call_id: c.tool_call_id ?? null,
        command: text.length > MAX_COMMAND_CHARS ? text.slice(0, MAX_COMMAND_CHARS) + "…" : text,
        status,
        exit_code: exit,
      });
      if (status === "failed") {
        const head = commandHead(text);
        const list = failuresByHead.get(head) ?? [];
        list.push(exit);
        failuresByHead.set(head, list);
      }
    }
  }

  const friction: FrictionSignal[] = [];
  for (const [head, codes] of [...failuresByHead.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (codes.length >= DIGEST_THRESHOLDS.repeated_failures) friction.push({ kind: "repeated_failure", command_head: head, failures: codes.length, exit_codes: codes });
  }
  const fileList = [...files.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([path, f]) => ({ path, ...f }));
  for (const f of fileList) {
    const mods = f.edits + f.writes;
    if (mods >= DIGEST_THRESHOLDS.file_modifications) friction.push({ kind: "file_churn", path: f.path, modifications: mods });
  }
  let run = 0;
  for (let i = resultOrder.length - 1; i >= 0 && failed(resultOrder[i]!); i--) run++;
  if (run >= DIGEST_THRESHOLDS.abandon_run) friction.push({ kind: "abandoned_after_failures", failures: run, last_ts: resultOrder[resultOrder.length - 1]!.ts ?? null });

  const totals = [...usageBySession(rows).values()];
  const usage: Usage = {};
  const byModel: Record<string, Usage> = {};
  let responses = 0;
  for (const t of totals) {
    for (const k of USAGE_KEYS) if (t.usage[k] !== undefined) usage[k] = (usage[k] ?? 0) + t.usage[k]!;
    responses += t.count;
    for (const [m, u] of t.by_model) {
      const name = m ?? "unknown";
      const cur: Usage = byModel[name] ?? {};
      for (const k of USAGE_KEYS) if (u[k] !== undefined) cur[k] = (cur[k] ?? 0) + u[k]!;
      byModel[name] = cur;
    }
  }
  const byModelSorted: Record<string, Usage> = {};
  for (const k of Object.keys(byModel).sort()) byModelSorted[k] = pickUsage(byModel[k]!);

  return {
    digest_version: DIGEST_VERSION,
    dt: part.dt,
    fleet: part.fleet,
    runtime: part.runtime,
    agent: part.agent,
    session: part.session,
    session_ids: [...sessionIds].sort(),
    segments,
    rows: rows.length,
    first_ts: first,
    last_ts: last,
    kinds: sortedRecord(kinds),
    streams: [...streams].sort(),
    models: [...models].sort(),
    tools: sortedRecord(tools),
    files: fileList,
    commands,
    usage: { ...pickUsage(usage), total_tokens: totalTokens(usage), responses, by_model: byModelSorted },
    friction,
    thresholds: DIGEST_THRESHOLDS,
  };
}

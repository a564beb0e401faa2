// Land the Claude Code fixture through the real @lake/store (cursors, landed files, index).
import { appendFileSync, copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Convert } from "@lake/store";
import { landRoot } from "@lake/store/testing";
import { claudeCodeAdapter } from "@lake/adapters";
import { canonicalize } from "@lake/events";
import { fixture } from "@lake/testdata";

export const SESSION = "258c7280-ae70-4798-800f-63464d01a85d";
/**
 * The fixture directory: the one holding the real session with subagents (@lake/testdata
 * `claude-code/marot-spotter/<session>.jsonl` and `<session>/subagents/`), which samples/ holds:
 * read in place, never written.
 */
export const FIXTURE = dirname(fixture(`claude-code/marot-spotter/${SESSION}.jsonl`));

/** The fixture's source files: main transcript and each subagent transcript, with their streams. */
export function fixtureSources(dir = FIXTURE): { path: string; stream: string; rel: string }[] {
  const subDir = join(dir, SESSION, "subagents");
  const subs = readdirSync(subDir).filter((n) => n.startsWith("agent-") && n.endsWith(".jsonl")).sort();
  return [
    { path: join(dir, `${SESSION}.jsonl`), stream: "main", rel: `${SESSION}.jsonl` },
    ...subs.map((n) => ({ path: join(subDir, n), stream: n.slice("agent-".length, -".jsonl".length), rel: `${SESSION}/subagents/${n}` })),
  ];
}

/** The real Claude Code adapter as the store's converter (unmasked: the fixture is already sanitized). */
function adapterConvert(s: { path: string; stream: string; rel: string }): Convert {
  const source = { runtime: "claude-code", path: s.path, rel: s.rel, session_id: SESSION, stream: s.stream, kind: "transcript", mode: "append" as const };
  const state = claudeCodeAdapter.initialState(source);
  return (lines) => claudeCodeAdapter.parseLines(source, lines.map((l) => ({ bytes: l.bytes, offset: l.offset, line: l.line })), state).map((r) => canonicalize(r));
}

/** One collect pass of every source in `sourceDir` into `root`, indexing at the end. */
export async function collect(root: string, sourceDir = FIXTURE, maxDeltaBytes = 512 * 1024): Promise<void> {
  const sources = fixtureSources(sourceDir).map((src) => ({
    session: SESSION, path: src.path, source: src.rel, stream: src.stream, runtime: "claude-code",
    adapter: claudeCodeAdapter.name, adapterVersion: claudeCodeAdapter.version, convert: adapterConvert(src),
  }));
  await landRoot(root, sources, { maxDeltaBytes });
}

/** A copy of the fixture tree in `dir` where the main transcript holds only its first `lines` lines. */
export function partialSource(dir: string, lines: number): void {
  mkdirSync(join(dir, SESSION, "subagents"), { recursive: true });
  const all = readFileSync(join(FIXTURE, `${SESSION}.jsonl`), "utf8").split(/(?<=\n)/);
  writeFileSync(join(dir, `${SESSION}.jsonl`), all.slice(0, lines).join(""));
  for (const s of fixtureSources().slice(1)) copyFileSync(s.path, join(dir, s.rel));
}

/** Append the main transcript's lines from `lines` (to `end`, default the end) to a partial copy. */
export function completeSource(dir: string, lines: number, end?: number): void {
  const all = readFileSync(join(FIXTURE, `${SESSION}.jsonl`), "utf8").split(/(?<=\n)/);
  appendFileSync(join(dir, `${SESSION}.jsonl`), all.slice(lines, end).join(""));
}

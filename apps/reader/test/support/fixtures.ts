// The Claude Code fixtures (@lake/testdata claude-code/) as canonical records, through the real
// adapter: @lake/adapters discover → parseFile → canonicalize (unmasked), as the collector lands them.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { claudeCodeAdapter, codexAdapter, geminiAdapter, parseFile } from "@lake/adapters";
import { canonicalize, type CanonicalRecord } from "@lake/events";
import { fixture } from "@lake/testdata";

/** The real Claude Code transcripts: @lake/testdata claude-code/ (SOURCES.md there). */
export const CLAUDE_FIXTURES = fixture("claude-code");

/** Every file under a directory whose name ends with `suffix`, sorted. */
export function filesUnder(dir: string, suffix = ""): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (e.endsWith(suffix)) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** Every .jsonl file under a directory, sorted. */
export function jsonlFiles(dir: string): string[] {
  return filesUnder(dir, ".jsonl");
}

/** The canonical records of every Claude Code source the adapter discovers under `root` (default: the fixtures). */
export async function claudeRecords(root: string = CLAUDE_FIXTURES): Promise<CanonicalRecord[]> {
  const found = await claudeCodeAdapter.discover({ roots: [root] });
  const out: CanonicalRecord[] = [];
  for (const s of found.sources) for await (const r of parseFile(s.path, { source: s })) out.push(canonicalize(r));
  return out;
}

/** The repository's samples/ (real Claude Code, Codex and Gemini CLI transcripts, SOURCES.md). */
export const SAMPLES = fileURLToPath(new URL("../../../../samples", import.meta.url));

/** The canonical records of every source in samples/: Claude Code, Codex (running totals) and Gemini CLI. */
export async function sampleRecords(): Promise<CanonicalRecord[]> {
  const out: CanonicalRecord[] = [];
  for (const [adapter, root] of [
    [claudeCodeAdapter, join(SAMPLES, "claude", "projects")],
    [codexAdapter, join(SAMPLES, "codex")],
    [geminiAdapter, join(SAMPLES, "gemini", "tmp")],
  ] as const) {
    const found = await adapter.discover({ roots: [root] });
    for (const s of found.sources) for await (const r of parseFile(s.path, { source: s })) out.push(canonicalize(r));
  }
  return out;
}

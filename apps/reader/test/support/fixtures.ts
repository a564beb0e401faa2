// The Claude Code fixtures (@lake/testdata claude-code/) as canonical records, through the real
// adapter: @lake/adapters discover → parseFile → canonicalize (unmasked), as the collector lands them.
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claudeCodeAdapter, codexAdapter, geminiAdapter, parseFile } from "@lake/adapters";
import { canonicalize, type CanonicalRecord } from "@lake/events";
import { copyFixture, fixtureFiles, SAMPLES } from "@lake/testdata";

export { SAMPLES };

/** The real Claude Code transcripts' .jsonl files where they are read (here or in samples/), sorted by their path in the tree. */
export function claudeFixtureFiles(): string[] {
  return fixtureFiles("claude-code")
    .filter((f) => f.rel.endsWith(".jsonl"))
    .map((f) => f.path);
}

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

/**
 * The canonical records of every Claude Code source the adapter discovers under `root` (default: the
 * fixtures, copied whole into a temporary directory removed before this returns).
 */
export async function claudeRecords(root?: string): Promise<CanonicalRecord[]> {
  if (root === undefined) {
    const dir = mkdtempSync(join(tmpdir(), "reader-claude-fixtures-"));
    try {
      return await claudeRecords(copyFixture("claude-code", join(dir, "projects")));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const found = await claudeCodeAdapter.discover({ roots: [root] });
  const out: CanonicalRecord[] = [];
  for (const s of found.sources) for await (const r of parseFile(s.path, { source: s })) out.push(canonicalize(r));
  return out;
}

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

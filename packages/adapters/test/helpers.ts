// Test helpers: fixture paths, reading a file's records, usage totals per session.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { copyFixture, fixtureFiles as listFixture } from "@lake/testdata";
import { tempDir } from "@lake/tooling/tmp";
import { canonicalize, usageBySession, type CanonicalRecord, type Usage } from "@lake/events";
import { parseFile } from "../src/index.js";

const RUNTIMES = ["claude-code", "codex", "gemini"];

/**
 * The real transcripts, one directory per runtime (`claude-code/`, `codex/`, `gemini/`): @lake/testdata's
 * trees copied whole (the files samples/ holds in their places), so every file is under its runtime's
 * root. A temporary directory: a test file importing this removes it with `afterAll(cleanupTempDirs)`.
 */
export const FIXTURES = tempDir("adapters-fixtures");
for (const runtime of RUNTIMES) copyFixture(runtime, join(FIXTURES, runtime));

/** Every fixture file (not SOURCES.md), with its runtime and runtime root. */
export function fixtureFiles(): { path: string; runtime: string; root: string }[] {
  return RUNTIMES.flatMap((runtime) =>
    listFixture(runtime)
      .filter((f) => f.rel !== "SOURCES.md")
      .map((f) => ({ path: join(FIXTURES, runtime, f.rel), runtime, root: join(FIXTURES, runtime) })),
  );
}

/** Parse a fixture (relative to fixtures/<runtime>) into canonical records. */
export async function records(runtime: string, rel: string): Promise<CanonicalRecord[]> {
  const out: CanonicalRecord[] = [];
  for await (const r of parseFile(join(FIXTURES, runtime, rel), { runtime, root: join(FIXTURES, runtime) })) out.push(canonicalize(r));
  return out;
}

/** The usage total of one session (countUsage rules). */
export function sessionUsage(recs: Iterable<CanonicalRecord>, session: string): Usage | undefined {
  return usageBySession(recs).get(session)?.usage;
}

/** JSON lines of a fixture, parsed (for independent computations). */
export function jsonLines(runtime: string, rel: string): unknown[] {
  return readFileSync(join(FIXTURES, runtime, rel), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => {
      try {
        return JSON.parse(l) as unknown;
      } catch {
        return undefined;
      }
    });
}

/** A whole-file JSON fixture, parsed. */
export function jsonDoc(runtime: string, rel: string): Record<string, any> {
  return JSON.parse(readFileSync(join(FIXTURES, runtime, rel), "utf8")) as Record<string, any>;
}

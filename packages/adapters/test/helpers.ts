// Test helpers: fixture paths, reading a file's records, usage totals per session.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { TESTDATA } from "@lake/testdata";
import { canonicalize, usageBySession, type CanonicalRecord, type Usage } from "@lake/events";
import { parseFile } from "../src/index.js";

/** The real transcripts, one directory per runtime: @lake/testdata (`claude-code/`, `codex/`, `gemini/`). */
export const FIXTURES = TESTDATA;

/** Every fixture file (not SOURCES.md), with its runtime and runtime root. */
export function fixtureFiles(): { path: string; runtime: string; root: string }[] {
  const out: { path: string; runtime: string; root: string }[] = [];
  for (const runtime of ["claude-code", "codex", "gemini"]) {
    const root = join(FIXTURES, runtime);
    const walk = (d: string) => {
      for (const n of readdirSync(d).sort()) {
        const p = join(d, n);
        if (statSync(p).isDirectory()) walk(p);
        else if (n !== "SOURCES.md") out.push({ path: p, runtime, root });
      }
    };
    walk(root);
  }
  return out;
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

// The Claude Code fixtures of test/fixtures/claude-code, converted by the test-only converter.
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { CanonicalRecord } from "@lake/events";
import { convertClaudeFile } from "./claude-convert.js";

/** test/fixtures/claude-code. */
export const CLAUDE_FIXTURES = fileURLToPath(new URL("../fixtures/claude-code", import.meta.url));

/** Every .jsonl file under a directory, sorted. */
export function jsonlFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d).sort()) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (e.endsWith(".jsonl")) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/** Every Claude Code fixture converted to canonical records. */
export function claudeRecords(): CanonicalRecord[] {
  return jsonlFiles(CLAUDE_FIXTURES).flatMap((f) => convertClaudeFile(f, relative(CLAUDE_FIXTURES, f)));
}

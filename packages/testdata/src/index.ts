// The one copy of the test data more than one package reads. A test names a file by its path in
// this package (`fixture("claude-code/marot-spotter/tool_heavy.jsonl")`, `fixture("wal/vectors.json")`)
// and reads it in place; a test that changes a file copies it into its own temporary directory first.
import { existsSync } from "node:fs";
import { join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** This package's directory: `claude-code/`, `codex/`, `gemini/` and `wal/` are in it. */
export const TESTDATA = fileURLToPath(new URL("..", import.meta.url)).replace(/[/\\]$/, "");

/**
 * The absolute path of a file or directory of the test data, `rel` written with `/`
 * (`claude-code`, `codex/ccusage-synthetic/…`, `wal/record-v1.hex`). Throws naming the path when it
 * does not exist or leaves the package, so a misspelt fixture fails the test that asked for it.
 */
export function fixture(rel: string): string {
  const p = normalize(join(TESTDATA, ...rel.split("/")));
  if (p !== TESTDATA && !p.startsWith(TESTDATA + sep)) throw new Error(`@lake/testdata: ${rel}: outside the test data`);
  if (!existsSync(p)) throw new Error(`@lake/testdata: ${p}: no such fixture`);
  return p;
}

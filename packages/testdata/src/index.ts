// The one copy of the test data more than one package reads. A test names a file by its path in
// this package (`fixture("claude-code/marot-spotter/tool_heavy.jsonl")`, `fixture("wal/vectors.json")`)
// and reads it in place; a test that changes a file copies it into its own temporary directory first.
//
// Some files are the repository's demo corpus too: samples/ holds them (laid out as the vendors'
// stores) and this package names them by a row of its SOURCES.md whose source is `samples/` (the
// table below reads those rows). `fixture` resolves such a name to the samples' file; a directory
// holding one is read through `fixtureFiles` or copied whole with `copyFixture`.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** This package's directory: `claude-code/`, `codex/`, `gemini/` and `wal/` are in it. */
const TESTDATA = fileURLToPath(new URL("..", import.meta.url)).replace(/[/\\]$/, "");

/** The repository's samples/: the demo corpus, laid out as the vendors' own stores (its SOURCES.md). */
export const SAMPLES = join(TESTDATA, "..", "..", "samples");

/** The top directories of the test data, each with its SOURCES.md. */
const TOPS = ["claude-code", "codex", "gemini", "wal"] as const;

let held: ReadonlyMap<string, string> | undefined;

/**
 * The files of the test data samples/ holds: each test-data path (`claude-code/marot-spotter/tool_heavy.jsonl`)
 * to its path under samples/ (`claude/projects/-home-marco-projects-spotter/tool_heavy.jsonl`). Read from the
 * rows of each top directory's SOURCES.md whose "repo @ commit" cell is `samples/` (the upstream path cell is
 * the file's path under samples/, and samples/SOURCES.md has its provenance).
 */
function sampleHeld(): ReadonlyMap<string, string> {
  if (held !== undefined) return held;
  const out = new Map<string, string>();
  for (const top of TOPS) {
    for (const line of readFileSync(join(TESTDATA, top, "SOURCES.md"), "utf8").split("\n")) {
      const cells = line.split("|").map((c) => c.trim());
      if (cells.length >= 6 && /^\d+$/.test(cells[2] ?? "") && cells[3] === "samples/") out.set(`${top}/${cells[1]}`, cells[4]!);
    }
  }
  held = out;
  return out;
}

/** `rel` (written with `/`) as a normalized test-data path, throwing when it leaves the package. */
function clean(rel: string): string {
  const p = normalize(join(TESTDATA, ...rel.split("/")));
  if (p !== TESTDATA && !p.startsWith(TESTDATA + sep)) throw new Error(`@lake/testdata: ${rel}: outside the test data`);
  return p.slice(TESTDATA.length + 1).split(sep).join("/");
}

/**
 * The absolute path of a file or directory of the test data, `rel` written with `/`
 * (`claude-code`, `codex/ccusage-synthetic/…`, `wal/record-v1.hex`); a file samples/ holds resolves to
 * the samples' copy. Throws naming the path when it does not exist or leaves the package, so a
 * misspelt fixture fails the test that asked for it, and for a directory that holds a file samples/
 * holds (its tree is not in one place: read it with `fixtureFiles`, copy it with `copyFixture`).
 */
export function fixture(rel: string): string {
  const r = clean(rel);
  const sample = sampleHeld().get(r);
  if (sample !== undefined) {
    const s = join(SAMPLES, ...sample.split("/"));
    if (!existsSync(s)) throw new Error(`@lake/testdata: ${s}: no such sample (the ${r} row of ${r.split("/")[0]}/SOURCES.md)`);
    return s;
  }
  const p = join(TESTDATA, ...r.split("/"));
  if (!existsSync(p)) throw new Error(`@lake/testdata: ${p}: no such fixture`);
  if (statSync(p).isDirectory()) {
    const inside = [...sampleHeld().keys()].filter((k) => r === "" || k.startsWith(`${r}/`));
    if (inside.length > 0) throw new Error(`@lake/testdata: ${rel}: holds ${inside[0]} (kept in samples/): read it with fixtureFiles or copyFixture`);
  }
  return p;
}

/**
 * Every file under the test-data directory `rel` (its SOURCES.md included), those samples/ holds
 * in their places: `rel` of each is its path under the directory, `path` where it is read. Sorted by
 * `rel`, the order a walk of one tree gives.
 */
export function fixtureFiles(rel: string): { rel: string; path: string }[] {
  const r = clean(rel);
  const dir = join(TESTDATA, ...r.split("/"));
  if (r === "" || !existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`@lake/testdata: ${dir}: no such fixture directory`);
  const out: { rel: string; path: string }[] = [];
  const walk = (d: string, prefix: string): void => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p, `${prefix}${n}/`);
      else out.push({ rel: `${prefix}${n}`, path: p });
    }
  };
  walk(dir, "");
  for (const [k, sample] of sampleHeld()) if (k.startsWith(`${r}/`)) out.push({ rel: k.slice(r.length + 1), path: join(SAMPLES, ...sample.split("/")) });
  return out.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

/**
 * Copy the test-data directory `rel` to `dest` (created), the files samples/ holds in their places:
 * the whole tree the directory names, for a test that reads it as a vendor's store, appends to its
 * files or lists it. Plain copies (never links), so a change to the copy leaves the repository alone.
 * Returns `dest`.
 */
export function copyFixture(rel: string, dest: string): string {
  for (const f of fixtureFiles(rel)) {
    const to = join(dest, ...f.rel.split("/"));
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(f.path, to);
  }
  return dest;
}

// Bit rot never becomes a changed value: single bits flipped at ≥ 20 random positions of a bronze
// segment and (separately) of a compacted part written by the real lake-maint. For each flip, every
// reader command — sql, usage, export, search, show --from events — either answers exactly what it
// answers without the damaged object, names it in one stderr line and exits 3, or fails naming it.
// The hash checks are remembered in the reader's cache: an unchanged fleet is not hashed again.
import { randomInt } from "node:crypto";
import { EXIT } from "@lake/cli";
import { existsSync, readFileSync, readdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { filesUnder, sampleRecords } from "./support/fixtures.js";
import { compactWithMaint, pushBronze } from "./support/fleet.js";
import { run, type Run } from "./support/run.js";

afterAll(cleanupTempDirs);

const records = await sampleRecords();
const sessions = [...new Set(records.map((r) => r.session_id))];
// The session left as bronze (unsealed, never compacted): the Codex one.
const BRONZE = records.find((r) => r.runtime === "codex")!.session_id;
// A word only the bronze session's text has (search must find it there, and only there).
const WORD = (() => {
  const others = new Set(records.filter((r) => r.session_id !== BRONZE).flatMap((r) => (r.text ?? "").toLowerCase().split(/[^a-z]+/)));
  const mine = records.filter((r) => r.session_id === BRONZE).flatMap((r) => (r.text ?? "").toLowerCase().split(/[^a-z]+/));
  return mine.find((w) => w.length > 6 && !others.has(w))!;
})();

const root = tempDir("reader-integrity");
const store = pathToFileURL(root).href;
// The reader's cache, its local root and the exports: beside the store, in a directory of their own (removed after).
const aside = tempDir("reader-integrity-aside");
const cache = join(aside, "cache");
const env = { LAKE_READER_CACHE: cache, LAKE_ROOT: join(aside, "root") };

type Command = { name: string; args: () => string[]; value: (r: Run) => unknown };
let exportN = 0;
const COMMANDS: Command[] = [
  {
    name: "sql",
    args: () => ["sql", "SELECT session_id, stream, record_id, kind, ts, text, tool_name, tool_input, input_tokens, output_tokens, cached_input_tokens, content_hash FROM events ORDER BY session_id, stream, record_id, content_hash", "--json"],
    value: (r) => JSON.parse(r.out),
  },
  { name: "usage", args: () => ["usage", "session", "--json"], value: (r) => JSON.parse(r.out) },
  {
    name: "export",
    args: () => ["export", "--format", "ndjson", "--out", join(aside, `export-${exportN++}`), "--json"],
    value: (r) => {
      const file = (JSON.parse(r.out) as { file: string }).file;
      return readFileSync(file, "utf8").trim().split("\n").sort();
    },
  },
  { name: "search", args: () => ["search", WORD, "--json", "--limit", "1000"], value: (r) => JSON.parse(r.out) },
  { name: "show", args: () => ["show", BRONZE, "--from", "events", "--json"], value: (r) => JSON.parse(r.out) },
  { name: "show", args: () => ["show", sessions.find((s) => s !== BRONZE)!, "--from", "events", "--json"], value: (r) => JSON.parse(r.out) },
];

/** Every command's answer over the store as it is now (must be complete: exit 0). */
async function answers(): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const c of COMMANDS) {
    const r = await run([...c.args(), "--store", store], env);
    out.push(r.code === 0 ? c.value(r) : { code: r.code, err: r.err });
  }
  return out;
}

function flip(good: Buffer, bit: number): Buffer {
  const bad = Buffer.from(good);
  bad[bit >> 3] = bad[bit >> 3]! ^ (1 << (bit & 7));
  return bad;
}

/** ≥ 20 distinct random bit positions, plus the first byte, the footer and the middle. */
function positions(size: number, n = 20): number[] {
  const s = new Set<number>([5, size * 8 - 3, (size - 7) * 8 + 2, (size >> 1) * 8 + 1]);
  while (s.size < n) s.add(randomInt(size * 8));
  return [...s];
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/**
 * Flip each bit of `file` in turn: every command's answer equals `expected` (its answer without
 * the object) with exit 3 and one stderr line naming `key`, or equals the intact answer (exit 0: the
 * command did not read the object), or the command fails naming `key`. Never any other value.
 */
async function flipEach(file: string, key: string, intact: unknown[], expected: unknown[]): Promise<Record<string, number>> {
  const good = readFileSync(file);
  const seen: Record<string, number> = {};
  for (const bit of positions(good.length)) {
    writeFileSync(file, flip(good, bit));
    for (const [i, c] of COMMANDS.entries()) {
      const r = await run([...c.args(), "--store", store], env);
      const what = `${c.name} with bit ${bit} of ${key} flipped: exit ${r.code}, ${r.err}`;
      seen[`${c.name}:${r.code}`] = (seen[`${c.name}:${r.code}`] ?? 0) + 1;
      const named = r.err.split("\n").filter((l) => new RegExp(`^lake-reader ${c.name}: ${esc(key)}: damaged: `).test(l));
      if (r.code === EXIT.partial) {
        expect(named, what).toHaveLength(1);
        expect(r.err.trim().split("\n"), what).toHaveLength(1);
        expect(c.value(r), what).toEqual(expected[i]);
      } else if (r.code === 0) {
        expect(r.err, what).toBe("");
        expect(c.value(r), what).toEqual(intact[i]);
      } else {
        expect(named, what).toHaveLength(1);
        expect(expected[i], what).toMatchObject({ code: r.code });
      }
    }
  }
  writeFileSync(file, good);
  return seen;
}

let intact: unknown[];

beforeAll(async () => {
  await pushBronze(root, records, { seal: (s) => s !== BRONZE, segments: 2 });
  compactWithMaint(root);
  intact = await answers();
  for (const [i, a] of intact.entries()) expect(a, COMMANDS[i]!.name).not.toHaveProperty("err");
  expect((intact[3] as { events: unknown[] }).events.length).toBeGreaterThan(0);
}, 300_000);

describe("flipped bits never change what the reader answers", () => {
  it("in a bronze segment: every command leaves it out (exit 3, named) or fails naming it", async () => {
    const seg = filesUnder(join(root, "sessions"), ".parquet").find((f) => f.includes(`/session=${BRONZE}/`) && f.endsWith("seg-000000.parquet"))!;
    const key = relative(root, seg);
    // The answers without that segment: what a partial answer must equal.
    renameSync(seg, `${seg}.away`);
    const without = await answers();
    renameSync(`${seg}.away`, seg);
    expect(without).not.toEqual(intact);
    const seen = await flipEach(seg, key, intact, without);
    // Every command read the segment, so every flip was caught by every command.
    for (const k of Object.keys(seen)) expect(k, JSON.stringify(seen)).toMatch(/:[1-9]$/);
    expect(await answers()).toEqual(intact);
  }, 900_000);

  it("in a compacted part: every command reads its partition from bronze (exit 3, named) or never reads the part (exit 0)", async () => {
    const parts = filesUnder(join(root, "sessions", "compacted"), ".parquet");
    const part = parts.find((p) => statSync(p).size === Math.max(...parts.map((x) => statSync(x).size)))!;
    const key = relative(root, part);
    const seen = await flipEach(part, key, intact, intact);
    // sql, export, search and show read every part: they caught every flip.
    for (const c of ["sql", "export", "search"]) expect(seen[`${c}:${EXIT.partial}`], JSON.stringify(seen)).toBe(20);
    expect(await answers()).toEqual(intact);
  }, 900_000);

  it("checks are remembered by inode, size and times: an unchanged fleet is not hashed again", async () => {
    const dir = join(cache, "checked");
    const [file] = readdirSync(dir);
    const entries = (JSON.parse(readFileSync(join(dir, file!), "utf8")) as { files: Record<string, string> }).files;
    // Every file the reader follows: the parts of the generations, the bronze of the un-compacted session.
    const parquet = filesUnder(join(root, "sessions"), ".parquet").filter((p) => p.includes("/compacted/") || p.includes(`/session=${BRONZE}/`));
    expect(parquet.length).toBeGreaterThan(2);
    for (const p of parquet) expect(entries[`c:${p}`], p).toMatch(/^\d+:\d+:\d+:\d+:\d+:[0-9a-f]{64}$/);
    // Made-up entries for unchanged files are believed (the file is not read again) …
    const seg = parquet.find((f) => f.includes(`/session=${BRONZE}/`))!;
    const forged = { ...entries, [`c:${seg}`]: entries[`c:${seg}`]!.replace(/[0-9a-f]{64}$/, "f".repeat(64)) };
    writeFileSync(join(dir, file!), JSON.stringify({ format: 1, files: forged }));
    const r = await run(["sql", "SELECT count(*)::INTEGER AS n FROM events", "--json", "--store", store], env);
    expect(r.code, r.err).toBe(0);
    // … and a file that changed since is hashed again, whatever the cache says.
    const good = readFileSync(seg);
    writeFileSync(seg, flip(good, 8 * 100));
    const bad = await run(["sql", "SELECT count(*)::INTEGER AS n FROM events", "--json", "--store", store], env);
    expect(bad.code).toBe(EXIT.partial);
    writeFileSync(seg, good);
    expect(existsSync(join(dir, file!))).toBe(true);
  }, 120_000);
});

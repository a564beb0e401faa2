// Damage is contained, through the real binaries (lake-collector collect and push, lake-maint,
// lake-reader): a cut segment, a damaged compacted part, a damaged landed file in the local root and
// a garbage _COMPACTED marker each leave every other session pushed, read and reported; the damaged
// object is named on stderr in one line and the exit code says the answer or the run is partial.
import { spawnSync } from "node:child_process";
import { EXIT } from "@lake/cli";
import { appendFileSync, chmodSync, cpSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";

afterAll(cleanupTempDirs);

const BIN = {
  collector: fileURLToPath(new URL("../../collector/bin/lake-collector.js", import.meta.url)),
  maint: fileURLToPath(new URL("../../maint/bin/lake-maint.js", import.meta.url)),
  reader: fileURLToPath(new URL("../bin/lake-reader.js", import.meta.url)),
};
const SAMPLES = fileURLToPath(new URL("../../../samples/", import.meta.url));
const CUT_SID = "258c7280-ae70-4798-800f-63464d01a85d";

type Out = { code: number | null; stdout: string; stderr: string };
function bin(which: keyof typeof BIN, args: readonly string[], env: NodeJS.ProcessEnv = {}): Out {
  const r = spawnSync(process.execPath, [BIN[which], ...args], { encoding: "utf8", env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, maxBuffer: 64 << 20 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

/** The sample corpus as vendor stores, collected once into a local root. */
const base = tempDir("contain-base");
const vendor = join(base, "vendor");
const root0 = join(base, "root");
const flags = ["--sources-only", "--source", `claude-code=${join(vendor, "claude", "projects")}`, "--source", `codex=${join(vendor, "codex")}`, "--source", `gemini=${join(vendor, "gemini", "tmp")}`];

type Row = Record<string, unknown>;
/** What the reader says about a store: events per session, usage per session, totals. */
interface Answer {
  code: number | null;
  stderr: string;
  /** `usage`'s exit code and stderr. */
  usageCode: number | null;
  usageStderr: string;
  events: Map<string, number>;
  usage: Map<string, Row>;
}

function answer(store: string, env: NodeJS.ProcessEnv): Answer {
  const sql = bin("reader", ["sql", "SELECT session_id, count(*)::INTEGER AS n FROM events GROUP BY 1 ORDER BY 1", "--json", "--store", store], env);
  const usage = bin("reader", ["usage", "session", "--json", "--store", store], env);
  const events = new Map((JSON.parse(sql.stdout) as { session_id: string; n: number }[]).map((r) => [r.session_id, r.n]));
  const sessions = (JSON.parse(usage.stdout) as { sessions: Row[] }).sessions;
  return { code: sql.code, stderr: sql.stderr, usageCode: usage.code, usageStderr: usage.stderr, events, usage: new Map(sessions.map((s) => [String(s.session_id), s])) };
}

function without<T>(m: Map<string, T>, id: string): Map<string, T> {
  const c = new Map(m);
  c.delete(id);
  return c;
}

/** A fresh copy of the collected root pushed to a fresh local store (every session sealed). */
function pushedFleet(label: string, options: { push?: boolean } = {}): { dir: string; root: string; fleet: string; store: string; env: NodeJS.ProcessEnv } {
  const dir = tempDir(label);
  const root = join(dir, "root");
  cpSync(root0, root, { recursive: true });
  const fleet = join(dir, "fleet");
  const store = pathToFileURL(fleet).href;
  const env = { LAKE_READER_CACHE: join(dir, "cache"), LAKE_ROOT: root };
  if (options.push !== false) {
    const p = bin("collector", ["push", "--root", root, "--store", store, "--agent", "host-a", "--seal-idle", "0", "--fleet-id", "f1"]);
    expect(p.code, p.stderr).toBe(0);
  }
  return { dir, root, fleet, store, env };
}

/** The segment files of one session in a local store. */
function segmentsOf(fleet: string, sid: string): string[] {
  return walk(join(fleet, "sessions")).filter((f) => f.includes(`/session=${sid}/`) && f.endsWith(".parquet"));
}

let full: Answer;

beforeAll(() => {
  mkdirSync(vendor, { recursive: true });
  cpSync(SAMPLES, vendor, { recursive: true });
  const c = bin("collector", ["collect", "--root", root0, ...flags]);
  expect(c.code, c.stderr).toBe(0);
  const f = pushedFleet("contain-full");
  full = answer(f.store, f.env);
  expect(full.code, full.stderr).toBe(0);
  expect(full.events.size).toBeGreaterThanOrEqual(4);
  expect(full.events.has(CUT_SID)).toBe(true);
}, 300_000);

/** Append a record to the Codex sample and collect it into `root`: the next push has something new to send. */
function growCodex(root: string): string {
  const file = walk(join(vendor, "codex")).find((f) => f.endsWith(".jsonl"))!;
  const lines = readFileSync(file, "utf8").trimEnd().split("\n");
  const last = JSON.parse(lines[lines.length - 1]!) as { timestamp: string };
  const text = `grown after the damage ${Date.now()}`;
  appendFileSync(file, JSON.stringify({ timestamp: last.timestamp, type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text }] } }) + "\n");
  const c = bin("collector", ["collect", "--root", root, ...flags]);
  expect(c.code, c.stderr).toBe(0);
  return text;
}

describe("damage is contained (real lake-collector, lake-maint, lake-reader)", () => {
  it("a cut segment: the reader answers for every other session and names it (exit 3; usage whole from the push-side rollup), maint skips its session (exit 3), push goes on", () => {
    const f = pushedFleet("contain-cut");
    const [seg] = segmentsOf(f.fleet, CUT_SID);
    const key = relative(f.fleet, seg!);
    writeFileSync(seg!, readFileSync(seg!).subarray(0, statSync(seg!).size - 40)); // the footer cut
    const a = answer(f.store, f.env);
    expect(a.code).toBe(EXIT.partial);
    expect(a.stderr).toBe(`lake-reader sql: ${key}: damaged: not a Parquet file (no PAR1 at the end: cut or damaged footer); left out (partial answer)\n`);
    expect(a.events).toEqual(without(full.events, CUT_SID));
    // usage answers from the session directory's push-side rollup, which is intact and hash-checked: the
    // whole answer, exit 0 (as with a damaged compacted part whose generation rollup is intact, below).
    expect(a.usageCode, a.usageStderr).toBe(0);
    expect(a.usage).toEqual(full.usage);
    const v = bin("maint", ["verify", "--store", f.store]);
    expect(v.code).toBe(EXIT.partial);
    expect(v.stdout).toContain(`${key}: damaged: not a Parquet file`);
    const c = bin("maint", ["compact", "--store", f.store]);
    expect(c.code, c.stdout + c.stderr).toBe(EXIT.partial);
    expect(c.stdout).toContain(`skipped ${key}: ${key}: damaged segment: `);
    expect(c.stdout).toMatch(/^compacted dt=/m);
    // After the compaction the answer is the same: the other sessions from the generation, still exit 3.
    const after = answer(f.store, f.env);
    expect(after.code).toBe(EXIT.partial);
    expect(after.events).toEqual(a.events);
    expect(after.usage).toEqual(a.usage);
    // Push: the store's damage does not stop it; the new record is read.
    const text = growCodex(f.root);
    const p = bin("collector", ["push", "--root", f.root, "--store", f.store, "--agent", "host-a", "--seal-idle", "0"]);
    expect(p.code, p.stderr).toBe(0);
    const s = bin("reader", ["sql", `SELECT count(*)::INTEGER AS n FROM events WHERE text = '${text}'`, "--json", "--store", f.store], f.env);
    expect(s.code).toBe(EXIT.partial);
    expect(JSON.parse(s.stdout)).toEqual([{ n: 1 }]);
  }, 300_000);

  it("a damaged compacted part: the reader reads its partition from bronze, names the part (exit 3); verify names it", () => {
    const f = pushedFleet("contain-part");
    const c = bin("maint", ["compact", "--store", f.store]);
    expect(c.code, c.stdout + c.stderr).toBe(0);
    const parts = walk(join(f.fleet, "sessions", "compacted")).filter((p) => p.endsWith(".parquet"));
    expect(parts.length).toBeGreaterThanOrEqual(2);
    const part = parts[0]!;
    const key = relative(f.fleet, part);
    const bytes = readFileSync(part);
    bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0x10;
    writeFileSync(part, bytes);
    const a = answer(f.store, f.env);
    expect(a.code).toBe(EXIT.partial);
    const lines = a.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^lake-reader sql: ${key.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: damaged: content hashes to [0-9a-f]+…, its footer records [0-9a-f]+… \\(damaged\\) \\(dt=[^/]+/fleet=f1 read from bronze\\); left out \\(partial answer\\)$`));
    expect(a.events).toEqual(full.events);
    // usage reads the partition's rollup (checked against its marker), never the part: complete, exit 0.
    expect(a.usageCode, a.usageStderr).toBe(0);
    expect(a.usage).toEqual(full.usage);
    const v = bin("maint", ["verify", "--store", f.store]);
    expect(v.code).toBe(EXIT.partial);
    expect(v.stdout).toContain(`${key}: damaged: content hashes to `);
    // The other maint commands go on.
    expect(bin("maint", ["gc", "--store", f.store]).code).toBe(0);
    const text = growCodex(f.root);
    const p = bin("collector", ["push", "--root", f.root, "--store", f.store, "--agent", "host-a", "--seal-idle", "0"]);
    expect(p.code, p.stderr).toBe(0);
    const again = bin("maint", ["compact", "--store", f.store]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    const s = bin("reader", ["sql", `SELECT count(*)::INTEGER AS n FROM events WHERE text = '${text}'`, "--json", "--store", f.store], f.env);
    expect(JSON.parse(s.stdout)).toEqual([{ n: 1 }]);
  }, 300_000);

  it("a damaged landed file: push names it in one line, sends every other session and exits 3; the reader reads them (exit 0)", () => {
    const f = pushedFleet("contain-landed", { push: false });
    const landed = walk(join(f.root, CUT_SID)).filter((p) => p.endsWith(".sd"));
    expect(landed.length).toBeGreaterThan(0);
    const file = landed[0]!;
    const bytes = Buffer.from(readFileSync(file));
    bytes[bytes.length - 10] = bytes[bytes.length - 10]! ^ 0x01;
    chmodSync(file, 0o644);
    writeFileSync(file, bytes);
    const p = bin("collector", ["push", "--root", f.root, "--store", f.store, "--agent", "host-a", "--seal-idle", "0", "--fleet-id", "f1"]);
    expect(p.code, p.stderr).toBe(3);
    const lines = p.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^lake-collector push: ${file.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: .*; session ${CUT_SID} not sent \\(the others were\\)$`));
    const a = answer(f.store, f.env);
    expect(a.code, a.stderr).toBe(0);
    expect(a.usageCode, a.usageStderr).toBe(0);
    expect(a.events).toEqual(without(full.events, CUT_SID));
    expect(a.usage).toEqual(without(full.usage, CUT_SID));
    // A second push says so again (the session is still damaged), sends nothing twice.
    const again = bin("collector", ["push", "--root", f.root, "--store", f.store, "--agent", "host-a", "--seal-idle", "0", "--json"]);
    expect(again.code).toBe(3);
    expect(JSON.parse(again.stdout)).toMatchObject({ sessions: 0, segments: 0, problems: [{ session: CUT_SID }] });
    expect(bin("maint", ["compact", "--store", f.store]).code).toBe(0);
    expect(bin("maint", ["verify", "--store", f.store]).code).toBe(0);
  }, 300_000);

  it("a garbage _COMPACTED: the reader reads that partition from bronze (exit 3); compact and gc skip it (exit 3), the other partitions are compacted", () => {
    const f = pushedFleet("contain-marker");
    const c = bin("maint", ["compact", "--store", f.store]);
    expect(c.code, c.stdout + c.stderr).toBe(0);
    const markers = walk(join(f.fleet, "sessions", "compacted")).filter((p) => p.endsWith("_COMPACTED"));
    expect(markers.length).toBeGreaterThanOrEqual(2);
    const marker = markers[0]!;
    const key = relative(f.fleet, marker);
    writeFileSync(marker, "\u0000garbage{");
    const a = answer(f.store, f.env);
    expect(a.code).toBe(EXIT.partial);
    expect(a.stderr.trim().split("\n")).toHaveLength(1);
    expect(a.stderr).toMatch(new RegExp(`^lake-reader sql: ${key.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: `));
    expect(a.usageCode).toBe(EXIT.partial);
    expect(a.usageStderr).toBe(a.stderr.replace("lake-reader sql:", "lake-reader usage:"));
    expect(a.events).toEqual(full.events);
    expect(a.usage).toEqual(full.usage);
    // A new session in another partition is compacted; the damaged one is named and left alone.
    const text = growCodex(f.root);
    const p = bin("collector", ["push", "--root", f.root, "--store", f.store, "--agent", "host-a", "--seal-idle", "0"]);
    expect(p.code, p.stderr).toBe(0);
    const again = bin("maint", ["compact", "--store", f.store]);
    expect(again.code, again.stdout + again.stderr).toBe(EXIT.partial);
    expect(again.stdout).toContain(`skipped ${key}: `);
    expect(again.stdout).toMatch(/^(compacted|unchanged) dt=/m);
    const gc = bin("maint", ["gc", "--store", f.store]);
    expect(gc.code, gc.stdout + gc.stderr).toBe(EXIT.partial);
    expect(gc.stdout).toContain(`skipped ${key}: `);
    const v = bin("maint", ["verify", "--store", f.store]);
    expect(v.code).toBe(EXIT.partial);
    expect(v.stdout).toContain(`${key}: `);
    const s = bin("reader", ["sql", `SELECT count(*)::INTEGER AS n FROM events WHERE text = '${text}'`, "--json", "--store", f.store], f.env);
    expect(s.code).toBe(EXIT.partial);
    expect(JSON.parse(s.stdout)).toEqual([{ n: 1 }]);
  }, 300_000);
});

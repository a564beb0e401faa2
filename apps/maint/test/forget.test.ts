// lake-maint forget on a fleet the real collector pushed (the bundled samples), compacted, digested,
// with claims and a snapshot: afterwards no object of the store holds a byte of the session (every
// Parquet file decoded with DuckDB, every other object read raw), usage totals equal the totals
// without it, and a collector's push of it is refused.
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, describe, expect, it } from "vitest";
import { rowToRecord, usageBySession, type CanonicalRecord } from "@lake/events";
import { sqlString } from "@lake/segments";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { run } from "./helpers.js";

afterAll(cleanupTempDirs);

const COLLECTOR = fileURLToPath(new URL("../../collector/bin/lake-collector.js", import.meta.url));
const SAMPLES = fileURLToPath(new URL("../../../samples/", import.meta.url));
const TARGET = "258c7280-ae70-4798-800f-63464d01a85d";

function collector(args: string[], env: NodeJS.ProcessEnv): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [COLLECTOR, ...args], { env: { ...process.env, ...env }, encoding: "utf8", maxBuffer: 64 << 20 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

/** Every row of every Parquet object under `dir`, decoded by DuckDB (all columns as text too). */
async function parquetRows(files: readonly string[]): Promise<{ file: string; record: CanonicalRecord; cells: string }[]> {
  const db = await DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  const out: { file: string; record: CanonicalRecord; cells: string }[] = [];
  try {
    for (const f of files) {
      const rows = (await conn.runAndReadAll(`SELECT * FROM read_parquet(${sqlString(f)}, hive_partitioning = false)`)).getRowObjectsJS();
      for (const r of rows) out.push({ file: f, record: rowToRecord(r as Record<string, unknown>), cells: JSON.stringify(r, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v)) });
    }
  } finally {
    conn.closeSync();
    db.closeSync();
  }
  return out;
}

/** Rows a reader follows: bronze of partitions with no _COMPACTED, else the marker's parts. */
async function liveRows(fleet: string): Promise<CanonicalRecord[]> {
  const files = walk(join(fleet, "sessions"));
  const markers = files.filter((f) => f.endsWith("/_COMPACTED"));
  const compactedDts = new Set<string>();
  const parts: string[] = [];
  for (const m of markers) {
    const v = JSON.parse(readFileSync(m, "utf8")) as { dt: string; parts: { key: string }[] };
    compactedDts.add(v.dt);
    for (const p of v.parts) parts.push(join(fleet, p.key));
  }
  const bronze = files.filter((f) => /\/seg-\d+\.parquet$/.test(f) && !compactedDts.has(/dt=([^/]+)/.exec(relative(fleet, f))![1]!));
  return (await parquetRows([...bronze, ...parts])).map((r) => r.record);
}

function totals(records: readonly CanonicalRecord[], without?: string): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const [id, u] of usageBySession(records)) {
    if (id === without) continue;
    for (const [k, v] of Object.entries(u.usage)) if (typeof v === "number") sum[k] = (sum[k] ?? 0) + v;
  }
  return sum;
}

describe("lake-maint forget", () => {
  it("after forget --apply no object holds a byte of the session, usage equals the totals without it, and a re-push is refused", { timeout: 300_000 }, async () => {
    const dir = tempDir("maint-forget");
    const vendor = join(dir, "vendor");
    for (const rt of ["claude", "codex", "gemini"]) cpSync(join(SAMPLES, rt), join(vendor, rt), { recursive: true });
    const flags = ["--sources-only", "--source", `claude-code=${join(vendor, "claude", "projects")}`, "--source", `codex=${join(vendor, "codex")}`, "--source", `gemini=${join(vendor, "gemini", "tmp")}`];
    const root = join(dir, "root");
    const fleet = join(dir, "fleet");
    const url = `file://${fleet}`;
    const env = { HOME: join(dir, "home") };
    const pushArgs = ["push", "--root", root, "--store", url, "--agent", "host-m", "--seal-idle", "0", "--fleet-id", "fm", "--json"];
    expect(collector(["collect", "--root", root, ...flags], env).code).toBe(0);
    const pushed = collector(pushArgs, env);
    expect(pushed.code, pushed.stderr).toBe(0);
    for (const args of [["digest"], ["compact"]]) expect((await run([...args, "--store", url])).code).toBe(0);
    for (const [subject, text] of [["spotter", `session ${TARGET} pasted a customer's data`], ["build", "Use pnpm, never npm install"]] as const) {
      expect((await run(["propose", "--store", url, "--agent", "host-m", "--repo", "lake", "--subject", subject, "--text", text])).code).toBe(0);
    }
    expect((await run(["promote", "--store", url])).code).toBe(0);
    expect((await run(["snapshot", "--store", url])).code).toBe(0);

    // The session's bytes: every text, tool input and raw value of 24+ characters (its first 64) its rows carry.
    const before = await liveRows(fleet);
    const secrets = new Set<string>();
    for (const r of before) {
      if (r.session_id !== TARGET) continue;
      for (const v of [r.text, r.tool_input, r.raw]) if (typeof v === "string" && v.length >= 24) secrets.add(v.slice(0, 64));
    }
    // Strings other sessions hold too (boilerplate) are not the session's own.
    const others = before.filter((r) => r.session_id !== TARGET).map((r) => JSON.stringify(r)).join("\n");
    for (const s of [...secrets]) if (others.includes(JSON.stringify(s).slice(1, -1))) secrets.delete(s);
    expect(secrets.size).toBeGreaterThan(20);
    expect(before.some((r) => r.session_id === TARGET)).toBe(true);
    const expected = totals(before, TARGET);
    expect(Object.keys(expected).length).toBeGreaterThan(0);

    const preview = await run(["forget", TARGET, "--store", url, "--json"]);
    expect(preview.code).toBe(0);
    expect(JSON.parse(preview.out.join("\n"))).toMatchObject({ apply: false });
    expect(walk(fleet).some((f) => f.includes("tombstones"))).toBe(false);

    const r = await run(["forget", TARGET, "--store", url, "--apply", "--grace", "0"]);
    expect(r.code, r.err.join("\n")).toBe(0);
    const out = r.out.join("\n");
    expect(out).toMatch(new RegExp(`wrote tombstones/${TARGET}\\.json`));
    expect(out).toMatch(/deleted sessions\/dt=.*session=258c7280[^/]*\/seg-000000\.parquet/);
    expect(out).toMatch(/recompacted dt=/);
    expect(out).toMatch(/deleted claims\/fleet\//);

    // No byte of the session in any object: Parquet decoded, everything else read raw.
    const objects = walk(fleet).filter((f) => !relative(fleet, f).startsWith(".lake-store"));
    const parquet = objects.filter((f) => f.endsWith(".parquet"));
    expect(parquet.length).toBeGreaterThan(0);
    for (const row of await parquetRows(parquet)) {
      expect(row.record.session_id, row.file).not.toBe(TARGET);
      for (const s of secrets) expect(row.cells.includes(s), `${row.file} holds "${s.slice(0, 30)}"`).toBe(false);
    }
    for (const f of objects) {
      const key = relative(fleet, f);
      if (f.endsWith(".parquet")) continue;
      const bytes = readFileSync(f).toString("latin1");
      for (const s of secrets) expect(bytes.includes(Buffer.from(s).toString("latin1")), `${key} holds "${s.slice(0, 30)}"`).toBe(false);
      if (key !== `tombstones/${TARGET}.json`) expect(bytes.includes(TARGET), `${key} names the session`).toBe(false);
    }
    // Usage totals equal the totals without it; verify is clean; a second forget changes nothing.
    expect(totals(await liveRows(fleet))).toEqual(expected);
    expect((await run(["verify", "--store", url])).code).toBe(0);
    const again = await run(["forget", TARGET, "--store", url, "--apply", "--grace", "0", "--json"]);
    expect(JSON.parse(again.out.join("\n"))).toMatchObject({ tombstone: { written: false }, deleted: [] });

    // A re-push is refused: new lines of the session collected and pushed never reach the store.
    const src = join(vendor, "claude", "projects", "-home-marco-projects-spotter", `${TARGET}.jsonl`);
    const last = readFileSync(src, "utf8").trim().split("\n").pop()!;
    appendFileSync(src, JSON.stringify({ ...JSON.parse(last), uuid: "0b6f5a1e-0000-4000-8000-000000000001", message: { role: "user", content: "a line pushed after the forget" } }) + "\n");
    expect(collector(["collect", "--root", root, ...flags], env).code).toBe(0);
    const refused = collector(pushArgs, env);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(new RegExp(`tombstones/${TARGET}\\.json: session ${TARGET} was forgotten in this fleet; not sent`));
    expect(JSON.parse(refused.stdout)).toMatchObject({ refused: [TARGET], segments: 0 });
    expect((await parquetRows(walk(fleet).filter((f) => f.endsWith(".parquet")))).some((x) => x.record.session_id === TARGET)).toBe(false);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "@lake/cli";
import { existsSync, readFileSync, writeFileSync, copyFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DuckDBInstance } from "@duckdb/node-api";
import { tableFromIPC } from "apache-arrow";
import { canonicalize, usageByDay, USAGE_KEYS, type CanonicalRecord, type RawRecord } from "@lake/events";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { claudeRecords } from "./support/fixtures.js";
import { pushBronze, snapshotWithMaint } from "./support/fleet.js";
import { run, runJson } from "./support/run.js";

afterAll(cleanupTempDirs);

const fixtures = await claudeRecords();

type Row = Record<string, unknown>;

/** A small hand-made session: a turn, a masked secret, a tool call with its result, a child agent. */
function handMade(): CanonicalRecord[] {
  const base = { runtime: "claude-code", session_id: "hand-1", adapter: "test", adapter_version: "0", source_path: "hand.jsonl" } as const;
  const raw: RawRecord[] = [
    { ...base, stream: "main", record_id: "u1", ts: "2026-03-01T10:00:00.000Z", kind: "user", text: "deploy with key [MASKED:aws-access-key:1a2b]", source_line: 1 },
    { ...base, stream: "main", record_id: "a1", ts: "2026-03-01T10:00:01.000Z", kind: "assistant", model: "claude-opus-4-6", text: "Running the deploy script.", usage: { input_tokens: 10, output_tokens: 5 }, usage_key: "m1:r1", source_line: 2 },
    { ...base, stream: "main", record_id: "c1", ts: "2026-03-01T10:00:02.000Z", kind: "tool_call", tool_name: "Bash", tool_call_id: "t1", tool_input: '{"command":"./deploy.sh"}', source_line: 3 },
    { ...base, stream: "main", record_id: "r1", ts: "2026-03-01T10:00:03.000Z", kind: "tool_result", tool_call_id: "t1", text: "deployed zebra-unicorn", exit_code: 0, source_line: 4 },
    { ...base, stream: "main", record_id: "c2", ts: "2026-03-01T10:00:04.000Z", kind: "tool_call", tool_name: "Task", tool_call_id: "t2", tool_input: '{"prompt":"check"}', child_stream: "agent-x", source_line: 5 },
    { ...base, stream: "agent-x", record_id: "x1", ts: "2026-03-01T10:00:05.000Z", kind: "assistant", model: "mystery-model-9", text: "child checking", usage: { input_tokens: 7, output_tokens: 3 }, usage_key: "m2:r2", source_line: 6 },
    { ...base, stream: "main", record_id: "r2", ts: "2026-03-01T10:00:06.000Z", kind: "tool_result", tool_call_id: "t2", text: "child done", source_line: 7 },
    { ...base, stream: "main", record_id: "u2", ts: "2026-03-01T10:00:07.000Z", kind: "user", text: "[Request interrupted by user]", source_line: 8 },
  ];
  return raw.map((r, i) => canonicalize(r, i === 0 ? ["aws-access-key"] : []));
}

describe("commands against a local fleet store", () => {
  const root = tempDir("reader-cmd");
  const store = pathToFileURL(join(root, "fleet")).href;
  const env = { LAKE_READER_CACHE: join(root, "cache"), LAKE_ROOT: join(root, "local") };
  const hand = handMade();

  beforeAll(async () => {
    await pushBronze(join(root, "fleet"), [...fixtures, ...hand], { segments: 2 });
    snapshotWithMaint(join(root, "fleet"), [
      { claim_id: "c-1", agent: "host-a", repo: "lake", subject: "parquet", text: "Segments are written by DuckDB with zstd compression" },
      { claim_id: "c-2", agent: "host-b", subject: "s3", text: "radosgw needs If-Match without quotes" },
    ]);
  });

  it("sessions lists every session with the documented columns", async () => {
    const rows = await runJson<Row[]>(["sessions", "--json", "--store", store], env);
    const ids = new Set([...fixtures, ...hand].map((r) => r.session_id));
    expect(rows.map((r) => r.session_id).sort()).toEqual([...ids].sort());
    const h = rows.find((r) => r.session_id === "hand-1")!;
    expect(h).toMatchObject({ runtime: "claude-code", agent: "host-a", fleet: "f1", events: 8, streams: 2, user_turns: 2, tool_calls: 2, sealed: true });
    expect(h.models).toEqual(["claude-opus-4-6", "mystery-model-9"]);
    const text = await run(["sessions", "--store", store], env);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/hand-1/);
  });

  it("show nests the child agent under its call, puts results beside calls, keeps masks", async () => {
    const conv = await runJson<{ items: Row[]; other_streams: unknown[]; session_id: string }>(["show", "hand", "--json", "--store", store], env);
    expect(conv.session_id).toBe("hand-1");
    expect(conv.items.map((i) => i.kind)).toEqual(["user", "assistant", "tool_call", "tool_call", "user"]);
    expect(conv.items[0]).toMatchObject({ text: "deploy with key [MASKED:aws-access-key:1a2b]", redaction_rules: ["aws-access-key"] });
    const bash = conv.items[2]!.tool as Row;
    expect(bash).toMatchObject({ name: "Bash", result: { text: "deployed zebra-unicorn", exit_code: 0 } });
    const task = conv.items[3]!.tool as { child: { stream: string; items: Row[] }; result: Row };
    expect(task.child.stream).toBe("agent-x");
    expect(task.child.items.map((i) => i.text)).toEqual(["child checking"]);
    expect(task.result.text).toBe("child done");
    expect(conv.other_streams).toEqual([]);
    const text = await run(["show", "hand-1", "--store", store], env);
    expect(text.out).toMatch(/⚙ Bash/);
    expect(text.out).toMatch(/┌ agent agent-x/);
    expect(text.out).toMatch(/\[masked: aws-access-key\]/);
    const missing = await run(["show", "no-such-session", "--store", store], env);
    expect(missing.code).toBe(EXIT.notFound);
    expect(missing.err).toMatch(/^lake-reader show: .*no session "no-such-session"\n$/);
  });

  it("show of a real fixture session pairs every tool result with its call", async () => {
    const sid = "258c7280-ae70-4798-800f-63464d01a85d";
    const conv = await runJson<{ items: Row[] }>(["show", sid, "--json", "--store", store], env);
    const calls = conv.items.filter((i) => i.kind === "tool_call");
    expect(calls.length).toBeGreaterThan(10);
    expect(calls.filter((c) => (c.tool as Row).result !== null).length).toBeGreaterThan(calls.length * 0.9);
  });

  it("sql runs over the views, as a table, JSON and CSV; a bad query exits 2", async () => {
    const j = await runJson<Row[]>(["sql", "SELECT session_id, count(*) AS n FROM events WHERE session_id = 'hand-1' GROUP BY 1", "--json", "--store", store], env);
    expect(j).toEqual([{ session_id: "hand-1", n: 8 }]);
    const csv = await run(["sql", "SELECT tool_name, calls, results FROM tools_daily WHERE day = '2026-03-01' ORDER BY tool_name", "--csv", "--store", store], env);
    expect(csv.out).toBe("tool_name,calls,results\r\nBash,1,1\r\nTask,1,1\r\n");
    const bad = await run(["sql", "SELECT nope FROM events", "--store", store], env);
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.err.split("\n").length).toBe(2);
    const both = await run(["sql", "SELECT 1", "--json", "--csv", "--store", store], env);
    expect(both.code).toBe(2);
  });

  it("tokens_daily (SQL) agrees with countUsage's per-day totals", async () => {
    const rows = await runJson<Row[]>(["sql", `SELECT day, ${USAGE_KEYS.map((k) => `sum(${k}) AS ${k}`).join(", ")} FROM tokens_daily GROUP BY day ORDER BY day`, "--json", "--store", store], env);
    const want = usageByDay([...fixtures, ...hand]);
    expect(rows.map((r) => r.day)).toEqual([...want.keys()].sort());
    for (const r of rows) for (const k of USAGE_KEYS) expect(r[k], `${String(r.day)} ${k}`).toBe(want.get(String(r.day))!.usage[k] ?? null);
  });

  it("interrupted_sessions finds the interrupted session; hook views are queryable", async () => {
    const rows = await runJson<Row[]>(["sql", "SELECT session_id, reason FROM interrupted_sessions WHERE session_id = 'hand-1'", "--json", "--store", store], env);
    expect(rows).toEqual([{ session_id: "hand-1", reason: "interrupted_by_user" }]);
    for (const v of ["hook_decisions", "blocks_by_hook", "labels", "usage_counted"]) {
      const r = await run(["sql", `SELECT count(*) AS n FROM ${v}`, "--json", "--store", store], env);
      expect(r.code, r.err).toBe(0);
    }
  });

  it("an unknown model is reported as unpriced, never priced as zero; the known cost stays in the totals", async () => {
    const got = await runJson<{ sessions: Row[]; totals: Row; pricing: { unpriced_models: string[] } }>(["usage", "session", "--json", "--store", store], env);
    const h = got.sessions.find((s) => s.session_id === "hand-1")!;
    // Opus 4.6 at $5 / $25 per million: the known part is priced, the mystery model's 10 tokens are not.
    expect(h.cost_usd).toBeCloseTo((10 * 5 + 5 * 25) / 1e6, 12);
    expect(h.unpriced_tokens).toBe(10);
    expect(h.unpriced_models).toEqual(["mystery-model-9"]);
    expect(got.pricing.unpriced_models).toContain("mystery-model-9");
    expect(got.totals.unpriced_tokens as number).toBeGreaterThanOrEqual(10);
    expect(got.totals.cost_usd as number).toBeGreaterThanOrEqual(h.cost_usd as number);
    const table = await run(["usage", "session", "--store", store], env);
    expect(table.out).toMatch(/\$\d+\.\d{2} \+ unpriced/);
    expect(table.out).toMatch(/unpriced \([\d,]+ tokens, not in the cost\): .*mystery-model-9/);
    const opus = await runJson<{ sessions: Row[] }>(["usage", "session", "--json", "--model", "opus", "--store", store], env);
    const ho = opus.sessions.find((s) => s.session_id === "hand-1")!;
    expect(ho.cost_usd).toBeCloseTo((10 * 5 + 5 * 25) / 1e6, 12);
  });

  it("search finds event text (local FTS5 index) and snapshot claims", async () => {
    const r = await runJson<{ events: Row[]; claims: Row[] }>(["search", "zebra unicorn", "--json", "--store", store], env);
    expect(r.events.map((e) => e.session_id)).toEqual(["hand-1"]);
    expect(String(r.events[0]!.snippet)).toMatch(/\[zebra\]/);
    expect(readdirSync(join(env.LAKE_READER_CACHE, "search")).some((f) => f.endsWith(".sqlite"))).toBe(true);
    const c = await runJson<{ claims: Row[] }>(["search", "If-Match", "--json", "--store", store], env);
    expect(c.claims.map((x) => x.claim_id)).toEqual(["c-2"]);
    const none = await runJson<{ events: Row[]; claims: Row[] }>(["search", "qqqxxyyzz", "--json", "--store", store], env);
    expect(none).toMatchObject({ events: [], claims: [] });
    const text = await run(["search", "DuckDB", "--store", store], env);
    expect(text.out).toMatch(/c-1/);
  });

  it("export writes parquet, ndjson and arrow with the same rows, never replacing a file", async () => {
    const out = join(root, "export");
    const n = (await runJson<Row[]>(["sql", "SELECT count(*) AS n FROM events", "--json", "--store", store], env))[0]!.n as number;
    for (const format of ["parquet", "ndjson", "arrow"]) {
      const r = await runJson<Row>(["export", "--format", format, "--out", out, "--json", "--store", store], env);
      expect(r.rows).toBe(n);
    }
    const db = await DuckDBInstance.create(":memory:");
    const conn = await db.connect();
    const pq = (await conn.runAndReadAll(`SELECT count(*) AS n, count(DISTINCT session_id) AS s FROM read_parquet('${join(out, "events.parquet")}')`)).getRowObjectsJS()[0]!;
    expect(Number(pq.n)).toBe(n);
    conn.closeSync();
    db.closeSync();
    const lines = readFileSync(join(out, "events.ndjson"), "utf8").trim().split("\n");
    expect(lines.length).toBe(n);
    const first = JSON.parse(lines.find((l) => l.includes("zebra-unicorn"))!) as Row;
    expect(first).toMatchObject({ session_id: "hand-1", kind: "tool_result", ts: "2026-03-01T10:00:03.000Z", agent: "host-a" });
    const table = tableFromIPC(readFileSync(join(out, "events.arrow")));
    expect(table.numRows).toBe(n);
    expect(table.schema.fields.map((f) => f.name).slice(0, 3)).toEqual(["runtime", "session_id", "stream"]);
    const again = await run(["export", "--format", "arrow", "--out", out, "--store", store], env);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/events\.arrow: already exists/);
    const bad = await run(["export", "--format", "csv", "--out", out, "--store", store], env);
    expect(bad.code).toBe(2);
  });

  it("ddl for duckdb runs against the store and reads every bronze row; other engines print DDL", async () => {
    const sql = await run(["ddl", "--engine", "duckdb", "--store", store], env);
    expect(sql.code).toBe(0);
    const db = await DuckDBInstance.create(":memory:");
    const conn = await db.connect();
    // Only the bronze view: this store has no compacted part yet, and DuckDB refuses an empty glob.
    const stmt = sql.out.split(";").find((s) => s.includes("lake_sessions_bronze"))!;
    await conn.run(stmt);
    const got = (await conn.runAndReadAll("SELECT count(*) AS n, count(DISTINCT runtime) AS r FROM lake_sessions_bronze")).getRowObjectsJS()[0]!;
    expect(Number(got.n)).toBe(fixtures.length + hand.length);
    conn.closeSync();
    db.closeSync();
    for (const engine of ["trino", "spark", "athena"]) {
      const r = await run(["ddl", "--engine", engine, "--store", "s3://bucket/lake"], env);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/lake_sessions_bronze/);
      expect(r.out).toMatch(/s3:\/\/bucket\/lake\/sessions/);
      for (const p of ["dt", "fleet", "runtime", "agent", "session"]) expect(r.out).toContain(p);
    }
    expect((await run(["ddl", "--engine", "oracle"], env)).code).toBe(2);
  });

  it("labels add appends to their own store; list and the labels view read them back", async () => {
    const a = await run(["labels", "add", "--session", "hand-1", "--aspect", "outcome", "--value", "interrupted", "--note", "user stopped it", "--store", store], env);
    expect(a.code, a.err).toBe(0);
    const b = await run(["labels", "add", "--session", "hand-1", "--aspect", "quality", "--value", "good", "--store", store], env);
    expect(b.code, b.err).toBe(0);
    const file = join(env.LAKE_ROOT, "labels", "labels.ndjson");
    expect(readFileSync(file, "utf8").trim().split("\n").length).toBe(2);
    const list = await runJson<Row[]>(["labels", "list", "--json"], env);
    expect(list.map((l) => [l.aspect, l.value])).toEqual([["outcome", "interrupted"], ["quality", "good"]]);
    const view = await runJson<Row[]>(["sql", "SELECT aspect, value, note FROM labels ORDER BY ts, aspect", "--json", "--store", store], env);
    expect(view).toEqual([{ aspect: "outcome", value: "interrupted", note: "user stopped it" }, { aspect: "quality", value: "good", note: null }]);
    expect(existsSync(join(root, "fleet", "labels"))).toBe(false);
    const missing = await run(["labels", "add", "--session", "x"], env);
    expect(missing.code).toBe(2);
    writeFileSync(file, readFileSync(file, "utf8") + "{not json\n");
    const bad = await run(["labels", "list"], env);
    expect(bad.code).toBe(EXIT.corrupt);
    expect(bad.err).toMatch(/labels\.ndjson:3: not a JSON label/);
  });

  it("a re-pushed duplicate segment counts nothing twice", async () => {
    const before = await runJson<{ totals: Row }>(["usage", "daily", "--json", "--store", store], env);
    const evBefore = (await runJson<Row[]>(["sql", "SELECT count(*) AS n FROM events", "--json", "--store", store], env))[0]!.n;
    const dir = readdirSync(join(root, "fleet", "sessions"), { recursive: true, withFileTypes: false }) as string[];
    const seg = dir.find((p) => p.includes("session=hand-1") && p.endsWith("seg-000000.parquet"))!;
    copyFileSync(join(root, "fleet", "sessions", seg), join(root, "fleet", "sessions", seg.replace("seg-000000", "seg-000007")));
    const after = await runJson<{ totals: Row }>(["usage", "daily", "--json", "--store", store], env);
    expect(after.totals).toEqual(before.totals);
    const evAfter = (await runJson<Row[]>(["sql", "SELECT count(*) AS n FROM events", "--json", "--store", store], env))[0]!.n;
    expect(evAfter).toBe(evBefore);
  });

  it("a malformed _COMPACTED marker is named on stderr, its sessions are read from bronze, and the exit code says partial (3)", async () => {
    const r2 = tempDir("reader-bad");
    await pushBronze(r2, hand);
    const good = await runJson<{ totals: Row }>(["usage", "daily", "--json", "--store", pathToFileURL(r2).href], env);
    const m = join(r2, "sessions", "compacted", "dt=2026-03-01", "fleet=f1");
    (await import("node:fs")).mkdirSync(m, { recursive: true });
    writeFileSync(join(m, "_COMPACTED"), "{oops");
    const r = await run(["usage", "daily", "--json", "--store", pathToFileURL(r2).href], env);
    expect(r.code).toBe(EXIT.partial);
    expect(r.err).toMatch(/^lake-reader usage: sessions\/compacted\/dt=2026-03-01\/fleet=f1\/_COMPACTED: not JSON .*; left out \(partial answer\)\n$/);
    expect((JSON.parse(r.out) as { totals: Row }).totals).toEqual(good.totals);
  });

  it("every command answers --help, from the table its options are parsed with", async () => {
    const all = (await run(["--help"], env)).out;
    const commands = all.slice(all.indexOf("Commands:\n") + 10, all.indexOf("\n\n", all.indexOf("Commands:\n"))).split("\n").map((l) => l.trim().split(" ")[0]!);
    expect(commands).toEqual(["usage", "pricing", "sessions", "show", "search", "secrets", "sql", "export", "ddl", "labels", "wal", "serve", "mcp", "statusline"]);
    for (const cmd of commands) {
      const r = await run([cmd, "--help"], env);
      expect(r.code, cmd).toBe(0);
      expect(r.out).toMatch(new RegExp(`^lake-reader ${cmd}`));
      expect(r.out).toMatch(/\nExit codes:\n    0  ok\n/);
      const options = r.out.slice(r.out.indexOf("\nOptions:\n"), r.out.indexOf("\nExit codes:"));
      const listed = [...options.matchAll(/^ {2}(?:-\w, )?--([a-z][a-z-]*)/gm)].map((m) => m[1]!);
      expect(listed, cmd).toContain("help");
      // Each option the help lists is one the parser takes: the first option it refuses is the unlisted one after it.
      for (const o of listed.filter((o) => o !== "help")) {
        const t = await run([cmd, `--${o}`, "x", "--not-listed"], env);
        expect({ o, code: t.code, err: t.err }).toEqual({ o, code: 2, err: `lake-reader ${cmd}: unknown option --not-listed (lake-reader ${cmd} --help lists the options)\n` });
      }
    }
    expect((await run(["frobnicate"], env)).code).toBe(2);
  });
});

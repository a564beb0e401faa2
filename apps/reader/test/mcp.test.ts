// `lake-reader mcp` as an agent meets it: the built bin started as a child process, the MCP SDK's
// client over stdio, a real fleet built from the bundled transcripts by the real lake-collector
// (collect, push) and lake-maint (compact, propose, promote, snapshot). Every answer is compared
// with the CLI's --json over the same fleet.
import { execFileSync } from "node:child_process";
import { EXIT } from "@lake/cli";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { copyFixture } from "@lake/testdata";
import { SAMPLES, filesUnder } from "./support/fixtures.js";
import { startMcp, type McpProcess } from "./support/mcp.js";
import { run, runJson } from "./support/run.js";

afterAll(cleanupTempDirs);

const COLLECTOR = fileURLToPath(new URL("../../collector/bin/lake-collector.js", import.meta.url));
const MAINT = fileURLToPath(new URL("../../maint/bin/lake-maint.js", import.meta.url));
const node = (bin: string, args: string[]) => execFileSync(process.execPath, [bin, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH, HOME: process.env.HOME } });

type Row = Record<string, unknown>;

const TOOLS = ["declare_intent", "heartbeat", "lease_acquire", "lease_release", "lease_renew", "list_sessions", "propose_claim", "roster", "search", "show_session", "sql", "usage"];

describe("lake-reader mcp over a fleet built by lake-collector and lake-maint", () => {
  const dir = tempDir("reader-mcp");
  const root = join(dir, "root");
  const fleet = join(dir, "fleet");
  const store = pathToFileURL(fleet).href;
  const cache = join(dir, "cache");
  const common = ["--store", store, "--root", root, "--cache", cache];
  let mcp: McpProcess;

  beforeAll(async () => {
    const src = join(dir, "src");
    cpSync(join(SAMPLES, "codex"), join(src, "codex"), { recursive: true });
    cpSync(join(SAMPLES, "gemini"), join(src, "gemini"), { recursive: true });
    copyFixture("claude-code", join(src, "claude-fixtures"));
    node(COLLECTOR, [
      "collect", "--root", root, "--sources-only",
      "--source", `claude-code=${join(src, "claude-fixtures")}`,
      "--source", `codex=${join(src, "codex")}`, "--source", `gemini=${join(src, "gemini", "tmp")}`,
    ]);
    node(COLLECTOR, ["push", "--root", root, "--store", store, "--agent", "host-t", "--seal-idle", "0", "--fleet-id", "f1"]);
    node(MAINT, ["compact", "--store", store]);
    node(MAINT, ["propose", "--store", store, "--agent", "host-t", "--subject", "radosgw", "--text", "radosgw wants If-Match etags without quotes"]);
    node(MAINT, ["propose", "--store", store, "--agent", "host-t", "--subject", "duckdb", "--text", "DuckDB writes every Parquet segment with zstd"]);
    node(MAINT, ["promote", "--store", store]);
    node(MAINT, ["snapshot", "--store", store]);
    mcp = await startMcp([...common, "--agent", "agent-a"]);
  }, 180_000);

  afterAll(async () => {
    await mcp?.close();
  });

  it("lists every tool with its input schema, and the resources", async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const t of tools) {
      expect(t.inputSchema.type, t.name).toBe("object");
      expect(t.description?.length, t.name).toBeGreaterThan(40);
    }
    const schema = (name: string) => tools.find((t) => t.name === name)!.inputSchema as { properties: Record<string, { type?: string; enum?: string[] }>; required?: string[] };
    expect(schema("search").required).toEqual(["query"]);
    expect(schema("usage").properties.report!.enum).toEqual(["hourly", "daily", "weekly", "monthly", "session", "blocks"]);
    expect(schema("lease_release").required!.sort()).toEqual(["epoch", "repo", "resource"]);
    expect(schema("lease_renew").required!.sort()).toEqual(["epoch", "repo", "resource", "ttl_seconds"]);
    expect(schema("sql").properties.max_bytes!.type).toBe("integer");
    expect(tools.find((t) => t.name === "sql")!.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === "lease_acquire")!.annotations?.readOnlyHint).toBe(false);
    const { resources } = await mcp.client.listResources();
    expect(resources.map((r) => r.uri)).toContain("lake://claims");
    expect(resources.some((r) => /^lake:\/\/sessions\/.+\/transcript$/.test(r.uri))).toBe(true);
    const { resourceTemplates } = await mcp.client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toEqual(["lake://sessions/{session}/transcript"]);
    const help = await run(["mcp", "--help"]);
    expect(help.code).toBe(0);
    for (const t of TOOLS) expect(help.out).toContain(t);
    expect((await run(["mcp", "extra"])).code).toBe(2);
  });

  it("lake://claims holds the current snapshot's claims", async () => {
    const latest = JSON.parse(readFileSync(join(fleet, "snapshot", "latest.json"), "utf8")) as { content_hash: string };
    const res = await mcp.client.readResource({ uri: "lake://claims" });
    const body = JSON.parse(String((res.contents[0] as { text: string }).text)) as { snapshot: string; claims: Row[] };
    expect(body.snapshot).toBe(latest.content_hash);
    expect(body.claims.map((c) => [c.subject, c.text, c.agent, c.kind]).sort()).toEqual([
      ["duckdb", "DuckDB writes every Parquet segment with zstd", "host-t", "fact"],
      ["radosgw", "radosgw wants If-Match etags without quotes", "host-t", "fact"],
    ]);
    expect(body.claims.map((c) => c.claim_id)).toEqual(body.claims.map((c) => String(c.claim_id)).sort());
    for (const c of body.claims) expect(c.claim_id).toMatch(/^c[0-9a-f]{32}$/);
  });

  it("list_sessions pages add up to `sessions --json`", async () => {
    const cli = await runJson<Row[]>(["sessions", "--json", ...common]);
    expect(cli.length).toBeGreaterThan(5);
    const pages = await mcp.pages<{ sessions: Row[]; total: number }>("list_sessions", { limit: 2 });
    expect(pages.length).toBe(Math.ceil(cli.length / 2));
    expect(pages.flatMap((p) => p.sessions)).toEqual(cli);
    expect(pages.every((p) => p.total === cli.length)).toBe(true);
  });

  it("usage: every report, with the CLI's filters, equals `usage <report> --json`", async () => {
    const cases: [string, string[], Record<string, unknown>][] = [
      ["daily", [], {}],
      ["weekly", [], {}],
      ["monthly", [], {}],
      ["session", [], {}],
      ["blocks", [], {}],
      ["daily", ["--runtime", "claude-code", "--since", "2025-06-01"], { runtime: ["claude-code"], since: "2025-06-01" }],
      ["session", ["--model", "gpt", "--runtime", "codex"], { model: ["gpt"], runtime: ["codex"] }],
      ["weekly", ["--until", "20260101"], { until: "20260101" }],
      ["daily", ["--by", "model"], { by: "model" }],
      ["weekly", ["--by", "runtime", "--runtime", "codex", "--runtime", "gemini"], { by: "runtime", runtime: ["codex", "gemini"] }],
    ];
    for (const [report, flags, args] of cases) {
      const cli = await runJson<Row>(["usage", report, "--json", ...flags, ...common]);
      const listKey = report === "session" ? "sessions" : report;
      const whole = await mcp.call("usage", { report, ...args, limit: 1000 });
      expect(whole.isError, whole.text).toBe(false);
      const { next_cursor, ...rest } = whole.json;
      expect(next_cursor).toBeNull();
      expect(rest, `${report} ${flags.join(" ")}`).toEqual(cli);
      // One row a page: the rows add up, totals and pricing on every page.
      const pages = await mcp.pages<Row>("usage", { report, ...args, limit: 1 });
      expect(pages.flatMap((p) => p[listKey] as Row[])).toEqual(cli[listKey]);
      for (const p of pages) expect(p.totals).toEqual(cli.totals);
    }
    const daily = await runJson<{ daily: Row[]; totals: Row }>(["usage", "daily", "--json", ...common]);
    expect(daily.daily.length).toBeGreaterThan(3);
    expect(daily.totals.total_tokens as number).toBeGreaterThan(1_000_000);
  });

  it("search equals `search --json`, events and claims, paged", async () => {
    for (const q of ["If-Match etags", "parquet", "README"]) {
      const cli = await runJson<{ query: string; events: Row[]; claims: Row[] }>(["search", q, "--json", "--limit", "200", ...common]);
      const all = await mcp.call<{ events: Row[]; claims: Row[]; query: string }>("search", { query: q, limit: 200 });
      expect(all.json.query).toBe(q);
      expect(all.json.events).toEqual(cli.events.slice(0, all.json.events.length));
      const pages = await mcp.pages<{ events: Row[]; claims: Row[] }>("search", { query: q, limit: 3 });
      const events = pages.flatMap((p) => p.events);
      const claims = pages.flatMap((p) => p.claims);
      expect(events.length + claims.length).toBeGreaterThan(0);
      expect(events).toEqual(cli.events.slice(0, events.length));
      expect(claims).toEqual(cli.claims);
      // Small pages cut the lists by bytes: no hit given twice, none skipped.
      const small = await mcp.pages<{ events: Row[]; claims: Row[] }>("search", { query: q, limit: 50, max_bytes: 1024 });
      expect(small.flatMap((p) => p.events).slice(0, cli.events.length)).toEqual(cli.events);
      expect(small.flatMap((p) => p.claims)).toEqual(cli.claims);
    }
    const hit = await mcp.call<{ claims: Row[] }>("search", { query: "etags quotes" });
    expect(hit.json.claims.map((c) => c.subject)).toEqual(["radosgw"]);
  });

  it("show_session pages, by turn, add up to `show --json`", async () => {
    const sessions = await runJson<Row[]>(["sessions", "--json", ...common]);
    const sid = String([...sessions].sort((a, b) => Number(b.events) - Number(a.events))[0]!.session_id);
    for (const from of ["chain", "events"] as const) {
      const cli = await runJson<{ items: { turn: number }[]; other_streams: Row[] } & Row>(["show", sid, "--json", "--from", from, ...common]);
      const pages = await mcp.pages<{ items: { turn: number }[]; other_streams: Row[]; turns: { from: number; to: number; total: number } } & Row>("show_session", { session: sid.slice(0, 8), from, turns: 2, max_bytes: 1024 * 1024 });
      const turnCount = new Set(cli.items.map((i) => i.turn)).size;
      expect(turnCount).toBeGreaterThan(3);
      expect(pages.length).toBe(Math.ceil((turnCount + cli.other_streams.length) / 2));
      expect(pages.flatMap((p) => p.items)).toEqual(cli.items);
      expect(pages.flatMap((p) => p.other_streams)).toEqual(cli.other_streams);
      const { items: _i, other_streams: _o, ...head } = cli;
      for (const p of pages) {
        const { items: _a, other_streams: _b, turns, next_cursor: _c, ...h } = p;
        expect(h).toEqual(head);
        expect(turns.total).toBe(turnCount);
        expect(new Set(p.items.map((i) => i.turn)).size).toBeLessThanOrEqual(2);
      }
    }
    // The transcript resource is the whole conversation.
    const res = await mcp.client.readResource({ uri: `lake://sessions/${sid}/transcript` });
    const cli = await runJson<Row>(["show", sid, "--json", ...common]);
    expect(JSON.parse(String((res.contents[0] as { text: string }).text))).toEqual(cli);
  });

  it("sql equals `sql --json`; pages follow the rows", async () => {
    const q = "SELECT runtime, kind, count(*) AS n, min(ts) AS first FROM events GROUP BY ALL ORDER BY runtime, kind";
    const cli = await runJson<Row[]>(["sql", q, "--json", ...common]);
    expect(cli.length).toBeGreaterThan(5);
    const r = await mcp.call<{ columns: string[]; rows: Row[] }>("sql", { query: q });
    expect(r.json.columns).toEqual(["runtime", "kind", "n", "first"]);
    expect(r.json.rows).toEqual(cli);
    const pages = await mcp.pages<{ rows: Row[] }>("sql", { query: q, limit: 4 });
    expect(pages.flatMap((p) => p.rows)).toEqual(cli);
    const total = await runJson<Row[]>(["sql", "SELECT count(*) AS n FROM events", "--json", ...common]);
    expect((await mcp.call<{ rows: Row[] }>("sql", { query: "SELECT count(*) AS n FROM events" })).json.rows).toEqual(total);
  });

  it("sql refuses writes and reads outside the fleet", async () => {
    const outside = join(dir, "outside.txt");
    writeFileSync(outside, "not part of the fleet\n");
    const target = join(fleet, "written.csv");
    const refused: [string, RegExp][] = [
      [`COPY (SELECT 1 AS x) TO '${target}'`, /only a SELECT runs here|Permission Error/],
      [`COPY (SELECT 1 AS x) TO '${join(dir, "w.csv")}'`, /only a SELECT runs here|Permission/],
      ["CREATE TABLE t AS SELECT 1 AS x", /only a SELECT runs here/],
      ["DROP VIEW events", /only a SELECT runs here/],
      [`ATTACH '${join(fleet, "x.duckdb")}' AS x`, /only a SELECT runs here|Permission/],
      ["SET enable_external_access = true", /only a SELECT runs here|locked/],
      ["SELECT 1; SELECT 2", /exactly one SELECT statement, got 2/],
      [`SELECT * FROM read_text('${outside}')`, /Permission Error.*outside\.txt/],
      ["SELECT * FROM read_csv('/etc/passwd', sep = ':')", /Permission Error.*\/etc\/passwd/],
      [`SELECT * FROM glob('${dir}/*')`, /Permission Error/],
      [`SELECT * FROM read_text('${join(root, "redact.key")}')`, /Permission Error/],
    ];
    for (const [sql, why] of refused) {
      const r = await mcp.call("sql", { query: sql });
      expect(r.isError, sql).toBe(true);
      expect(r.json.error!.code, sql).toBe("Query");
      expect(r.json.error!.exit_code, sql).toBe(EXIT.usage);
      expect(r.text, sql).toMatch(/^lake-reader sql: query (failed|refused): /);
      expect(r.text, sql).toMatch(why);
      expect(r.text.includes("\n"), sql).toBe(false);
    }
    expect(existsSync(target)).toBe(false);
    expect(existsSync(join(dir, "w.csv"))).toBe(false);
    expect(existsSync(join(fleet, "x.duckdb"))).toBe(false);
    // The views still work after all that, on a new connection per call.
    expect((await mcp.call<{ rows: Row[] }>("sql", { query: "SELECT count(*) > 0 AS ok FROM events" })).json.rows).toEqual([{ ok: true }]);
    // The same failure through the CLI: the same message after the command name, the same exit code.
    const bad = "SELECT * FROM no_such_view";
    const cli = await run(["sql", bad, "--json", ...common]);
    const tool = await mcp.call("sql", { query: bad });
    expect(tool.json.error!.exit_code).toBe(cli.code);
    expect(tool.text.replace(/^lake-reader sql: /, "")).toBe(cli.err.trim().replace(/^lake-reader sql: /, ""));
  });

  it("output limits hold on a large result: rows and bytes a page, every row reached through cursors", async () => {
    const q = "SELECT i, repeat('x', 200) AS pad FROM range(20000) t(i) ORDER BY i";
    const maxBytes = 16 * 1024;
    let cursor: string | undefined;
    let next = 0;
    let pages = 0;
    while (pages < 12) {
      const r = await mcp.call<{ rows: { i: number }[]; next_cursor: string | null }>("sql", { query: q, limit: 1000, max_bytes: maxBytes, ...(cursor ? { cursor } : {}) });
      expect(r.isError, r.text).toBe(false);
      expect(Buffer.byteLength(JSON.stringify(r.json))).toBeLessThanOrEqual(maxBytes);
      expect(r.json.rows.length).toBeGreaterThan(10);
      expect(r.json.rows.length).toBeLessThan(1000);
      expect(r.json.rows.map((x) => x.i)).toEqual(r.json.rows.map((_, k) => next + k));
      next += r.json.rows.length;
      cursor = r.json.next_cursor!;
      expect(cursor).toEqual(expect.any(String));
      pages++;
    }
    // Without max_bytes: the default 64 KiB and 100 rows.
    const d = await mcp.call<{ rows: Row[] }>("sql", { query: "SELECT i FROM range(5000) t(i)" });
    expect(d.json.rows.length).toBe(100);
    const wide = await mcp.call<{ rows: Row[] }>("sql", { query: "SELECT i, repeat('y', 4000) AS pad FROM range(5000) t(i)", limit: 1000 });
    expect(Buffer.byteLength(JSON.stringify(wide.json))).toBeLessThanOrEqual(64 * 1024);
    // A row larger than the page is shrunk to fit, and says so.
    const huge = await mcp.call<{ rows: Row[]; clipped?: boolean }>("sql", { query: "SELECT repeat('z', 100000) AS big", max_bytes: 4096 });
    expect(huge.json.clipped).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(huge.json))).toBeLessThanOrEqual(4096);
    // The other paged tools keep the bound too.
    for (const [name, args] of [
      ["list_sessions", { limit: 1000, max_bytes: 2048 }],
      ["usage", { report: "daily", limit: 1000, max_bytes: 2048 }],
      ["search", { query: "the", limit: 200, max_bytes: 4096 }],
    ] as const) {
      const r = await mcp.call(name, args);
      expect(r.isError, r.text).toBe(false);
      expect(Buffer.byteLength(JSON.stringify(r.json)), name).toBeLessThanOrEqual(args.max_bytes);
      expect(r.json.next_cursor, name).toEqual(expect.any(String));
    }
    const sessions = await runJson<Row[]>(["sessions", "--json", ...common]);
    const sid = String([...sessions].sort((a, b) => Number(b.events) - Number(a.events))[0]!.session_id);
    const show = await mcp.pages<Row>("show_session", { session: sid, from: "events", max_bytes: 8192 });
    for (const p of show) expect(Buffer.byteLength(JSON.stringify(p))).toBeLessThanOrEqual(8192);
    // A cursor of another question is refused.
    const first = await mcp.call<{ next_cursor: string }>("list_sessions", { limit: 1 });
    const wrong = await mcp.call("usage", { report: "daily", cursor: first.json.next_cursor });
    expect(wrong.isError).toBe(true);
    expect(wrong.json.error!.exit_code).toBe(2);
    expect(wrong.text).toMatch(/^lake-reader usage: the cursor belongs to another question/);
  });

  it("errors carry the CLI's one-line message and exit code", async () => {
    const cli = await run(["show", "no-such-session", "--from", "events", ...common]);
    expect(cli.code).toBe(EXIT.notFound);
    const tool = await mcp.call("show_session", { session: "no-such-session", from: "events" });
    expect(tool.isError).toBe(true);
    expect(tool.json.error).toEqual({ code: "NotFound", exit_code: EXIT.notFound, message: tool.text });
    expect(tool.text.replace(/^lake-reader show_session: /, "")).toBe(cli.err.trim().replace(/^lake-reader show: /, ""));
    const date = await mcp.call("usage", { report: "daily", since: "2026-13-01" });
    expect(date.json.error!.exit_code).toBe(2);
    expect(date.text).toMatch(/^lake-reader usage: --since "2026-13-01": expected a date/);
    const dateCli = await run(["usage", "daily", "--since", "2026-13-01", ...common]);
    expect(date.json.error!.exit_code).toBe(dateCli.code);
    expect(date.text).toBe(dateCli.err.trim());
    // An argument outside the schema is refused by the SDK before the tool runs.
    const schema = (await mcp.client.callTool({ name: "usage", arguments: { report: "yearly" } })) as { isError?: boolean; content: { text: string }[] };
    expect(schema.isError).toBe(true);
    expect(schema.content[0]!.text).toMatch(/Input validation error: .*report/);
    // A server over a store that does not exist answers every read with NotFound (exit 8).
    const gone = await startMcp(["--store", pathToFileURL(join(dir, "nope")).href, "--root", root, "--cache", cache]);
    try {
      const r = await gone.call("list_sessions");
      const c = await run(["sessions", "--json", "--store", pathToFileURL(join(dir, "nope")).href]);
      expect(r.json.error!.exit_code).toBe(c.code);
      expect(r.text.replace(/^lake-reader list_sessions: /, "")).toBe(c.err.trim().replace(/^lake-reader sessions: /, ""));
    } finally {
      await gone.close();
    }
  });

  it("propose_claim masks a planted secret before anything is written", async () => {
    // Built at run time so no token sits in the repository.
    const token = "ghp_" + "R8vK2mQ9xT4wZ7pL3nB6yH1cF5dJ0sA2eG8u";
    const password = "Zx9!kq2-Lm7pW4rT";
    const r = await mcp.call<{ key: string; event: Row; redaction_rules: string[] }>("propose_claim", {
      subject: "deploy",
      text: `the deploy bot uses ${token} and DB_PASSWORD=${password} for staging`,
      repo: "github.com/acme/app",
    });
    expect(r.isError, r.text).toBe(false);
    expect(r.json.key).toMatch(/^claims\/events\/dt=\d{4}-\d{2}-\d{2}\/agent=agent-a\/[0-9A-HJKMNP-TV-Z]{26}\.json$/);
    expect(r.json.redaction_rules).toEqual(expect.arrayContaining(["github-token"]));
    expect(String(r.json.event.text)).toMatch(/\[REDACTED:github-token:[0-9a-f]{8}\]/);
    const stored = readFileSync(join(fleet, r.json.key), "utf8");
    expect(JSON.parse(stored)).toEqual(r.json.event);
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(password);
    // Through the gate into the snapshot: still masked, and searchable by its words.
    node(MAINT, ["promote", "--store", store]);
    node(MAINT, ["snapshot", "--store", store]);
    const claims = await mcp.client.readResource({ uri: "lake://claims" });
    const body = JSON.parse(String((claims.contents[0] as { text: string }).text)) as { snapshot: string; claims: Row[] };
    expect(body.snapshot).toMatch(/^[0-9a-f]{64}$/);
    expect(body.claims.map((c) => c.subject).sort()).toEqual(["deploy", "duckdb", "radosgw"]);
    expect(String(body.claims.find((c) => c.subject === "deploy")!.text)).toMatch(/\[REDACTED:github-token:/);
    for (const f of filesUnder(fleet)) {
      const bytes = readFileSync(f);
      expect(bytes.includes(token), f).toBe(false);
      expect(bytes.includes(password), f).toBe(false);
    }
    const found = await mcp.call<{ claims: Row[] }>("search", { query: "deploy bot" });
    expect(found.json.claims.map((c) => c.subject)).toEqual(["deploy"]);
    expect(JSON.stringify(found.json)).not.toContain(token);
  });

  it("heartbeat, declare_intent and roster: what lake-maint lists", async () => {
    const hb = await mcp.call("heartbeat", { runtime: "claude-code", repo: "github.com/acme/app", branch: "main", tool: "Edit" });
    expect(hb.isError, hb.text).toBe(false);
    expect(hb.json).toMatchObject({ agent_id: "agent-a", runtime: "claude-code", status: "active", tool: "Edit" });
    const intent = await mcp.call("declare_intent", { intents: [{ repo: "github.com/acme/app", resource: "src/main.ts" }], note: "refactor" });
    expect(intent.json).toMatchObject({ agent_id: "agent-a", note: "refactor", intents: [{ repo: "github.com/acme/app", resource: "src/main.ts", resource_key: expect.stringMatching(/^[0-9a-f]{64}$/) }] });
    const other = await startMcp([...common, "--agent", "agent-b"]);
    try {
      const r = await other.call<{ agents: Row[]; intents: Row[]; leases: Row[]; me: string }>("roster");
      expect(r.json.me).toBe("agent-b");
      const strip = (rows: Row[]) => rows.map(({ live: _l, ...x }) => x);
      expect(r.json.agents.map((a) => a.agent_id)).toContain("agent-a");
      expect(JSON.parse(node(MAINT, ["roster", "list", "--store", store, "--json"]))).toEqual(r.json.agents);
      expect(JSON.parse(node(MAINT, ["intents", "list", "--store", store, "--json"]))).toEqual(r.json.intents);
      expect(strip(r.json.intents)).toEqual([intent.json]);
    } finally {
      await other.close();
    }
  });
});

/** Two servers race lease_acquire for one resource, `rounds` times. */
async function raceLeases(a: McpProcess, b: McpProcess, rounds: number): Promise<void> {
  const target = { repo: "github.com/acme/app", resource: "deploy/production" };
  let last = 0;
  for (let round = 0; round < rounds; round++) {
    const [ra, rb] = await Promise.all([a.call<Lease>("lease_acquire", { ...target, ttl_seconds: 60 }), b.call<Lease>("lease_acquire", { ...target, ttl_seconds: 60 })]);
    expect(ra.isError || rb.isError, `${ra.text} ${rb.text}`).toBe(false);
    const winners = [ra, rb].filter((r) => r.json.acquired);
    expect(winners.length, `round ${round}`).toBe(1);
    const [win, lose] = ra.json.acquired ? [{ p: a, r: ra }, { p: b, r: rb }] : [{ p: b, r: rb }, { p: a, r: ra }];
    expect(win.r.json.epoch, `round ${round}`).toBeGreaterThan(last);
    last = win.r.json.epoch;
    // The loser is told who holds it, at which epoch.
    expect(lose.r.json).toMatchObject({ acquired: false, owner: win.r.json.owner, epoch: win.r.json.epoch });
    // Only the holder at its epoch may renew or release: the loser is refused with the winner's
    // epoch, the winner with a stale one.
    const stolen = await lose.p.call<Lease>("lease_release", { ...target, epoch: win.r.json.epoch });
    expect(stolen.isError).toBe(true);
    expect(stolen.json.error).toMatchObject({ code: "Refused", exit_code: 9 });
    expect(stolen.json.released).toBe(false);
    if (last > 1) {
      const stale = await win.p.call<Lease>("lease_release", { ...target, epoch: last - 1 });
      expect(stale.isError).toBe(true);
      expect(stale.text).toMatch(/^lake-reader lease_release: live\/leases\/[0-9a-f]{64}\.json: not released: .* does not hold it at epoch \d+ \(the stored lease names .* at epoch \d+\)$/);
      const staleRenew = await win.p.call<Lease>("lease_renew", { ...target, epoch: last - 1, ttl_seconds: 60 });
      expect(staleRenew.isError).toBe(true);
      expect(staleRenew.json.renewed).toBe(false);
    }
    const renewed = await win.p.call<Lease>("lease_renew", { ...target, epoch: last, ttl_seconds: 60 });
    expect(renewed.json).toMatchObject({ renewed: true, epoch: last });
    const released = await win.p.call<Lease>("lease_release", { ...target, epoch: last });
    expect(released.isError, released.text).toBe(false);
    expect(released.json).toMatchObject({ released: true, epoch: last });
  }
  expect(last).toBe(rounds);
}

interface Lease {
  acquired: boolean;
  renewed: boolean;
  released: boolean;
  epoch: number;
  owner: string;
  expires_at: string;
}

describe("two lake-reader mcp processes race for a lease", () => {
  it("on a local store: one holder a round, epochs strictly increasing, stale epochs refused", async () => {
    const dir = tempDir("reader-mcp-lease");
    const fleet = join(dir, "fleet");
    mkdirSync(fleet, { recursive: true });
    const args = ["--store", pathToFileURL(fleet).href, "--root", join(dir, "root"), "--cache", join(dir, "cache")];
    const [a, b] = await Promise.all([startMcp([...args, "--agent", "racer-a"]), startMcp([...args, "--agent", "racer-b"])]);
    try {
      await raceLeases(a, b, 20);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 120_000);

  it("on the S3 store (radosgw): the same, and the read tools answer over S3 as the CLI does", async () => {
    const { createTestBucket, s3Env } = await import("@lake/tooling/s3");
    const { url, server } = await createTestBucket("reader-mcp-lease");
    const dir = tempDir("reader-mcp-lease-s3");
    const args = ["--store", url, "--root", join(dir, "root"), "--cache", join(dir, "cache")];
    const env = s3Env(server);
    // A session pushed to the bucket by the real collector: the read tools answer over S3 as the CLI does.
    const src = join(dir, "codex");
    cpSync(join(SAMPLES, "codex"), src, { recursive: true });
    const root = join(dir, "root");
    const collector = (a: string[]) => execFileSync(process.execPath, [COLLECTOR, ...a], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
    collector(["collect", "--root", root, "--sources-only", "--source", `codex=${src}`]);
    collector(["push", "--root", root, "--store", url, "--agent", "host-s3", "--seal-idle", "0", "--fleet-id", "f1"]);
    const [a, b] = await Promise.all([startMcp([...args, "--agent", "racer-a"], env), startMcp([...args, "--agent", "racer-b"], env)]);
    try {
      const sessions = await runJson<Row[]>(["sessions", "--json", ...args]);
      expect(sessions.map((x) => x.agent)).toEqual(["host-s3"]);
      expect((await a.call("list_sessions")).json.sessions).toEqual(sessions);
      const usage = await runJson<Row>(["usage", "session", "--json", ...args]);
      const { next_cursor: _n, ...viaMcp } = (await b.call("usage", { report: "session" })).json;
      expect(viaMcp).toEqual(usage);
      await raceLeases(a, b, 20);
      const leases = await a.call<{ leases: Row[] }>("roster", { include_expired: true });
      expect(leases.json.leases).toMatchObject([{ repo: "github.com/acme/app", resource: "deploy/production", status: "free", epoch: 20 }]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 180_000);
});

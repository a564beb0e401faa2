// End to end with the real binaries: secrets planted in sessions on two machines and in a proposed
// claim go through lake-collector collect → push, lake-maint seal / digest / compact / propose /
// promote / snapshot, and lake-reader search / export / secrets. No byte of either local root, the
// fleet store, the snapshot, the reader's cache (search index) or an export holds a secret — and
// Parquet files (bronze segments, compacted parts, the export) are decoded with DuckDB, not only
// grepped. The leak report counts the secret both machines saw once, seen twice.
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { SAMPLES } from "./support/fixtures.js";

afterAll(cleanupTempDirs);

const pexec = promisify(execFile);
const bin = (app: string, name: string) => fileURLToPath(new URL(`../../${app}/bin/${name}.js`, import.meta.url));
const COLLECTOR = bin("collector", "lake-collector");
const MAINT = bin("maint", "lake-maint");
const READER = bin("reader", "lake-reader");

async function cli(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  try {
    const r = await pexec(process.execPath, [file, ...args], { env: { PATH: process.env.PATH, ...env }, maxBuffer: 64 << 20 });
    return r.stdout;
  } catch (e) {
    const x = e as { stderr?: string; stdout?: string; code?: number };
    throw new Error(`${file.split("/").pop()} ${args[0]} exited ${x.code}: ${x.stderr ?? ""}${x.stdout ?? ""}`);
  }
}

// Fake secrets with random bodies, assembled at run time.
const rnd = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join("");
const HEX = "0123456789abcdef";
const AN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64 = AN + "+/";
const shared = "dapi" + rnd(HEX, 32); // seen on both machines
const secretsA = { az: rnd(AN, 3) + "8Q~" + rnd(AN, 34), account: rnd(B64, 86) + "==", ddApp: rnd(HEX, 40) };
const secretsB = { ghp: "ghp_" + rnd(AN, 36), telegram: "7" + rnd("0123456789", 9) + ":AA" + rnd(AN, 33) };
const claimSecret = { token: "glpat-" + rnd(AN, 20), password: rnd(AN, 9) + "!" + rnd(AN, 6) + "7" };
const ALL = [shared, ...Object.values(secretsA), ...Object.values(secretsB), ...Object.values(claimSecret)];

/** The secret and 16-character windows of its random part (a partial leak counts). */
function needles(s: string): string[] {
  const out = new Set([s]);
  for (let i = 4; i + 16 <= s.length; i += 8) out.add(s.slice(i, i + 16));
  return [...out];
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? walk(join(dir, n)) : [join(dir, n)]));
}

/** A Claude Code session from the sample corpus under a new id, with planted lines appended. */
function session(vendor: string, id: string, planted: { prose: string; command: string; output: string; file: string }): void {
  const src = join(SAMPLES, "claude", "projects", "-home-marco-projects-spotter", "tool_heavy.jsonl");
  const raw = readFileSync(src, "utf8").split("\n").filter(Boolean);
  const orig = (JSON.parse(raw.find((l) => l.includes('"sessionId"'))!) as { sessionId: string }).sessionId;
  const lines = raw.map((l) => l.replaceAll(orig, id));
  const sid = id;
  const base = { parentUuid: null, isSidechain: false, userType: "external", cwd: "/home/dev/app", sessionId: sid, version: "2.1.39", gitBranch: "main" };
  const ts = (s: number) => `2026-11-30T10:0${s}:00.000Z`;
  const u = (n: number) => `${id.slice(0, 8)}-0000-4000-8000-${String(n).padStart(12, "0")}`;
  lines.push(
    JSON.stringify({ ...base, type: "assistant", uuid: u(1), timestamp: ts(1), requestId: `req_${id.slice(0, 8)}1`, message: { id: `msg_${id.slice(0, 8)}1`, type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "text", text: planted.prose }] } }),
    JSON.stringify({ ...base, type: "assistant", uuid: u(2), timestamp: ts(2), requestId: `req_${id.slice(0, 8)}2`, message: { id: `msg_${id.slice(0, 8)}2`, type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "tool_use", id: `toolu_${id.slice(0, 8)}2`, name: "Bash", input: { command: planted.command, description: "deploy" } }] } }),
    JSON.stringify({ ...base, type: "user", uuid: u(3), timestamp: ts(3), message: { role: "user", content: [{ tool_use_id: `toolu_${id.slice(0, 8)}2`, type: "tool_result", content: planted.output, is_error: false }] } }),
    JSON.stringify({ ...base, type: "assistant", uuid: u(4), timestamp: ts(4), requestId: `req_${id.slice(0, 8)}4`, message: { id: `msg_${id.slice(0, 8)}4`, type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "tool_use", id: `toolu_${id.slice(0, 8)}4`, name: "Write", input: { file_path: "/home/dev/app/.env", content: planted.file } }] } }),
  );
  const dir = join(vendor, "projects", "-home-dev-app");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${sid}.jsonl`), lines.join("\n") + "\n");
}

describe("secrets end to end (real binaries)", () => {
  it("no byte of the roots, fleet, snapshot, search index or export holds a planted secret; the report counts a shared secret once, seen twice", async () => {
    const dir = tempDir("secrets-e2e");
    const fleet = join(dir, "fleet");
    const store = `file://${fleet}`;
    const cache = join(dir, "cache");
    const machines = [
      { name: "host-a", id: "aaaaaaaa-1111-4111-8111-000000000001", planted: { prose: `here's my Databricks key: ${shared}`, command: `az login --service-principal -u ops -p '${secretsA.az}' --tenant contoso`, output: `AZURE_STORAGE=DefaultEndpointsProtocol=https;AccountName=logs;AccountKey=${secretsA.account};EndpointSuffix=core.windows.net`, file: `DD_APP_KEY=${secretsA.ddApp}\nPORT=8080\n` } },
      { name: "host-b", id: "bbbbbbbb-2222-4222-8222-000000000002", planted: { prose: `the Databricks token is ${shared}, rotate it`, command: `curl -s https://api.telegram.org/bot${secretsB.telegram}/getMe`, output: `GITHUB_TOKEN=${secretsB.ghp}`, file: `export DATABRICKS_TOKEN=${shared}\n` } },
    ];
    const roots: string[] = [];
    for (const [i, m] of machines.entries()) {
      const vendor = join(dir, m.name, "claude");
      const root = join(dir, m.name, "root");
      roots.push(root);
      session(vendor, m.id, m.planted);
      const env = { HOME: join(dir, m.name, "home") };
      // Masks correlate across machines that share one key: the second machine gets the first's.
      if (i > 0) {
        mkdirSync(root, { recursive: true, mode: 0o700 });
        copyFileSync(join(roots[0]!, "redact.key"), join(root, "redact.key"));
      }
      const c = JSON.parse(await cli(COLLECTOR, ["collect", "--root", root, "--sources-only", "--source", `claude-code=${join(vendor, "projects")}`, "--json"], env));
      expect(c.sessions).toBe(1);
      await cli(COLLECTOR, ["push", "--root", root, "--store", store, "--agent", m.name, "--seal-idle", "0", "--fleet-id", "f1", "--json"], env);
    }
    const menv = { HOME: join(dir, "maint-home") };
    await cli(MAINT, ["seal", "--store", store, "--idle", "0", "--json"], menv);
    await cli(MAINT, ["digest", "--store", store, "--json"], menv);
    await cli(MAINT, ["compact", "--store", store, "--json"], menv);
    const proposed = JSON.parse(await cli(MAINT, ["propose", "--store", store, "--root", roots[0]!, "--agent", "host-a", "--repo", "acme/app", "--subject", "deploy", "--text", `CI uses GITLAB_TOKEN=${claimSecret.token}; the staging password is ${claimSecret.password}`, "--json"], menv));
    expect(proposed.masked.length).toBe(2);
    await cli(MAINT, ["promote", "--store", store, "--json"], menv);
    const snap = JSON.parse(await cli(MAINT, ["snapshot", "--store", store, "--json"], menv));
    expect(snap).toMatchObject({ status: "published", claims: 1 });

    const renv = { HOME: join(dir, "reader-home") };
    const common = ["--store", store, "--cache", cache, "--root", roots[0]!];
    const search = JSON.parse(await cli(READER, ["search", "staging", ...common, "--json"], renv));
    expect(search.claims.length).toBe(1);
    expect(JSON.parse(await cli(READER, ["search", "Databricks", ...common, "--json"], renv)).events.length).toBeGreaterThanOrEqual(2);
    const out = join(dir, "export");
    await cli(READER, ["export", "--format", "parquet", "--out", out, ...common], renv);
    await cli(READER, ["export", "--format", "ndjson", "--out", out, ...common], renv);

    // 1. Bytes: every file of both roots, the fleet (segments, parts, digests, claims, snapshot), the cache and the export.
    const files = [...roots, fleet, cache, out].flatMap(walk);
    expect(files.some((f) => f.endsWith(".sqlite") && f.startsWith(cache))).toBe(true); // the search index
    expect(files.some((f) => f.includes("/snapshot/") && f.endsWith(".sqlite"))).toBe(true);
    expect(files.some((f) => f.includes("/compacted/") && f.endsWith(".parquet"))).toBe(true);
    expect(files.some((f) => f.endsWith("digest.json"))).toBe(true);
    const leaks: string[] = [];
    for (const f of files) {
      const b = readFileSync(f);
      for (const s of ALL) for (const n of needles(s)) if (b.includes(n)) leaks.push(`${f}: ${n.slice(0, 6)}…`);
    }
    expect(leaks).toEqual([]);

    // 2. Parquet decoded: every cell of every bronze segment, compacted part and the export, as text.
    const parquet = files.filter((f) => f.endsWith(".parquet"));
    expect(parquet.length).toBeGreaterThanOrEqual(4);
    const db = await DuckDBInstance.create(":memory:");
    const conn = await db.connect();
    let rows = 0;
    let masks = 0;
    for (const f of parquet) {
      const reader = await conn.runAndReadAll(`SELECT to_json(t)::VARCHAR AS j FROM read_parquet('${f.replaceAll("'", "''")}') t`);
      for (const [j] of reader.getRows() as [string][]) {
        rows++;
        masks += (j.match(/\[REDACTED:[a-z0-9-]+:[0-9a-f]{8}\]/g) ?? []).length;
        for (const s of ALL) if (j.includes(s) || j.includes(s.slice(4, 20))) leaks.push(`${f}: decoded row holds ${s.slice(0, 6)}…`);
      }
    }
    conn.closeSync();
    expect(rows).toBeGreaterThan(50);
    expect(masks).toBeGreaterThanOrEqual(8);
    expect(leaks).toEqual([]);

    // 3. The leak report: the shared Databricks token is one secret, seen in two sessions on two machines.
    const rep = JSON.parse(await cli(READER, ["secrets", ...common, "--json"], renv)) as { rules: { rule: string; secrets: number; seen: number; sessions: string[]; agents: string[]; runtimes: string[]; first_seen: string; last_seen: string; items: { hash: string; seen: number; sessions: string[]; agents: string[] }[] }[] };
    const dbx = rep.rules.find((r) => r.rule === "databricks-token")!;
    expect(dbx).toMatchObject({ secrets: 1, runtimes: ["claude-code"], agents: ["host-a", "host-b"] });
    expect(dbx.items).toHaveLength(1);
    expect(dbx.items[0]!.sessions).toHaveLength(2);
    // Seen three times: host-a's prose, host-b's prose and host-b's .env (one secret all the same).
    expect(dbx.items[0]!.seen).toBe(3);
    expect(dbx.first_seen < dbx.last_seen || dbx.first_seen === dbx.last_seen).toBe(true);
    const ids = rep.rules.map((r) => r.rule).sort();
    for (const want of ["azure-ad-client-secret", "azure-storage-key", "github-token", "telegram-bot-token"]) expect(ids).toContain(want);
    // Nothing in the report is a secret either.
    const text = JSON.stringify(rep);
    for (const s of ALL) expect(text.includes(s)).toBe(false);
    const since = JSON.parse(await cli(READER, ["secrets", ...common, "--since", "2030-01-01", "--json"], renv));
    expect(since.rules).toEqual([]);
    const human = await cli(READER, ["secrets", ...common], renv);
    expect(human).toMatch(/databricks-token\s*│\s*1\s*│\s*3\s*│\s*2\s*│/);
  }, 600_000);
});

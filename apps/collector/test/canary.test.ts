// Canary test: secrets of many rule kinds, planted in Claude Code and Codex transcripts of a
// vendor tree (prompt text, tool_use input, tool_result output, JSON nested in a string, a line
// that is not JSON), go through collect → push (local fleet directory and S3) and appear in no
// byte of the local root or of either fleet store, Parquet decompressed through DuckDB included.
// Every secret is assembled at run time from parts and random characters: the repository holds
// none of them.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DuckDBInstance } from "@duckdb/node-api";
import { sqlString } from "@lake/segments";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { createTestBucket, s3Env } from "@lake/tooling/s3";
import { mirrorStore, runCli, vendorTree, walk } from "./helpers.js";

afterAll(cleanupTempDirs);

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const ALNUM = UPPER + LOWER + DIGITS;

/** n random characters of `alphabet`, with at least one upper, lower and digit when the alphabet has them. */
function rand(alphabet: string, n: number): string {
  for (;;) {
    const b = randomBytes(n);
    let s = "";
    for (const x of b) s += alphabet[x % alphabet.length];
    const classes = [UPPER, LOWER, DIGITS].filter((c) => [...c].some((ch) => alphabet.includes(ch)));
    if (classes.every((c) => [...s].some((ch) => c.includes(ch)))) return s;
  }
}
const j = (...parts: string[]) => parts.join("");
const b64url = (s: string) => Buffer.from(s).toString("base64url");

/** A planted secret: how it is written in the transcript, the rule expected to fire, and the bytes that must never survive. */
interface Plant {
  readonly rule: string;
  /** The text planted (may carry a public prefix such as `Authorization: Bearer `). */
  readonly form: string;
  /** The secret part: none of its bytes (and no 16-character window of it) may appear in the output. */
  readonly secret: string;
}

function plants(): Record<string, Plant> {
  const akid = j("AK", "IA", rand("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16));
  const awsSecret = rand(ALNUM + "/+", 40);
  const ghp = j("gh", "p_", rand(ALNUM, 36));
  const xoxb = j("xo", "xb-", rand(DIGITS, 12), "-", rand(DIGITS, 13), "-", rand(ALNUM, 24));
  const sk = j("sk", "_li", "ve_", rand(ALNUM, 32));
  const openai = j("sk", "-pr", "oj-", rand(ALNUM + "_-", 64));
  const ant = j("sk", "-an", "t-api03-", rand(ALNUM + "_-", 93));
  const pemBody = Array.from({ length: 12 }, () => Buffer.from(randomBytes(48)).toString("base64")).join("\n");
  const pem = j("-----BEGIN RSA ", "PRIVATE KEY-----\n", pemBody, "\n-----END RSA ", "PRIVATE KEY-----");
  const jwt = j(b64url('{"alg":"HS256","typ":"JWT"}'), ".", b64url(JSON.stringify({ sub: rand(ALNUM, 12), role: "admin", iat: 1767225600 })), ".", rand(ALNUM + "_-", 43));
  const dbPass = rand(ALNUM, 20);
  const bearer = rand(ALNUM + "._-", 44);
  const password = j(rand(ALNUM, 10), "!#", rand(ALNUM, 12));
  return {
    akid: { rule: "aws-access-key-id", form: akid, secret: akid },
    awsSecret: { rule: "aws-secret-access-key", form: `aws_secret_access_key = ${awsSecret}`, secret: awsSecret },
    ghp: { rule: "github-token", form: ghp, secret: ghp },
    xoxb: { rule: "slack-token", form: xoxb, secret: xoxb },
    stripe: { rule: "stripe-key", form: sk, secret: sk },
    openai: { rule: "openai-api-key", form: openai, secret: openai },
    anthropic: { rule: "anthropic-api-key", form: ant, secret: ant },
    pem: { rule: "private-key", form: pem, secret: pemBody },
    jwt: { rule: "jwt", form: jwt, secret: jwt },
    postgres: { rule: "url-credentials", form: `postgres://app:${dbPass}@db.internal:5432/prod`, secret: dbPass },
    bearer: { rule: "auth-header", form: `Authorization: Bearer ${bearer}`, secret: bearer },
    password: { rule: "generic-secret", form: `{"password": "${password}"}`, secret: password },
  };
}

/** The byte strings that must not appear: each secret, its JSON-escaped forms, and 16-byte windows of it. */
function needles(p: Plant): string[] {
  const s = p.secret;
  const out = new Set([s, JSON.stringify(s).slice(1, -1), JSON.stringify(JSON.stringify(s)).slice(1, -1)]);
  const core = s.replace(/\s+/g, "");
  for (let i = 0; i + 16 <= core.length; i += 8) out.add(core.slice(i, i + 16));
  return [...out];
}

const CLAUDE_SID = "c0ffee00-1111-4222-8333-444455556666";
const CODEX_SID = "019e1700-aaaa-7bbb-8ccc-ddddeeeeffff";

/** A Claude Code session with the secrets planted in every kind of place; the PEM key has a record of its own. */
function claudeSession(s: Record<string, Plant>): string {
  const base = { isSidechain: false, userType: "external", cwd: "/home/dev/canary", sessionId: CLAUDE_SID, version: "2.1.38", gitBranch: "main" };
  let n = 0;
  const uuid = () => `c0ffee00-0000-4000-8000-${String(++n).padStart(12, "0")}`;
  const ts = () => new Date(Date.UTC(2026, 1, 3, 10, 0, n)).toISOString();
  const usage = { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 20 };
  const lines: string[] = [
    JSON.stringify({ parentUuid: null, ...base, type: "user", uuid: uuid(), timestamp: ts(), message: { role: "user", content: `deploy with ${s.akid!.form} and ${s.awsSecret!.form}; my token is ${s.ghp!.form}` } }),
    JSON.stringify({
      parentUuid: null, ...base, type: "assistant", uuid: uuid(), timestamp: ts(), requestId: "req_canary1",
      message: { id: "msg_canary1", model: "claude-opus-4-6", role: "assistant", type: "message", usage, content: [{ type: "tool_use", id: "toolu_canary1", name: "Bash", input: { command: `curl -H '${s.bearer!.form}' https://api.example.net`, env: { STRIPE_KEY: s.stripe!.form } } }] },
    }),
    JSON.stringify({
      parentUuid: null, ...base, type: "user", uuid: uuid(), timestamp: ts(),
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_canary1", content: `SLACK=${s.xoxb!.form}\nOPENAI_API_KEY=${s.openai!.form}\n${s.password!.form}` }] },
      toolUseResult: { stdout: `SLACK=${s.xoxb!.form}`, stderr: "", interrupted: false, isImage: false },
    }),
    // JSON nested inside a string.
    JSON.stringify({
      parentUuid: null, ...base, type: "user", uuid: uuid(), timestamp: ts(),
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_canary2", content: JSON.stringify({ config: { db: s.postgres!.form, token: s.jwt!.form, nested: JSON.stringify({ key: s.anthropic!.form }) } }) }] },
    }),
    // A PEM private key: quarantined by default.
    JSON.stringify({ parentUuid: null, ...base, type: "user", uuid: uuid(), timestamp: ts(), message: { role: "user", content: `here is the server key:\n${s.pem!.form}\n` } }),
    // A line that is not valid JSON.
    `{"parentUuid":null,"type":"user","sessionId":"${CLAUDE_SID}","message":{"role":"user","content":"broken ${s.anthropic!.form} ${s.ghp!.form} and ${s.bearer!.form}`,
    JSON.stringify({ parentUuid: null, ...base, type: "user", uuid: uuid(), timestamp: ts(), message: { role: "user", content: "thanks, all done" } }),
  ];
  return lines.join("\n") + "\n";
}

/** A Codex rollout with secrets in a user message, function_call arguments (JSON in a string), its output, and a broken line. */
function codexSession(s: Record<string, Plant>): string {
  const t = (k: number) => new Date(Date.UTC(2026, 1, 4, 9, 0, k)).toISOString();
  const lines = [
    JSON.stringify({ timestamp: t(0), type: "session_meta", payload: { id: CODEX_SID, timestamp: t(0), cwd: "/home/dev/canary", originator: "codex_cli_rs", cli_version: "0.125.0", source: "cli", model_provider: "openai" } }),
    JSON.stringify({ timestamp: t(1), type: "turn_context", payload: { turn_id: "turn-1", cwd: "/home/dev/canary", model: "gpt-5-codex", approval_policy: "on-request" } }),
    JSON.stringify({ timestamp: t(2), type: "event_msg", payload: { type: "user_message", message: `use ${s.stripe!.form} and ${s.xoxb!.form}`, images: [] } }),
    JSON.stringify({ timestamp: t(2), type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text: `use ${s.stripe!.form} and ${s.xoxb!.form}` }] } }),
    JSON.stringify({
      timestamp: t(3), type: "response_item",
      payload: { type: "function_call", name: "exec_command", call_id: "call_canary1", arguments: JSON.stringify({ cmd: `psql ${s.postgres!.form} -c 'select 1'`, env: { AWS_ACCESS_KEY_ID: s.akid!.form, GH: s.ghp!.form } }) },
    }),
    JSON.stringify({ timestamp: t(4), type: "response_item", payload: { type: "function_call_output", call_id: "call_canary1", output: JSON.stringify({ output: `${s.bearer!.form}\n${s.openai!.form}\n${s.jwt!.form}`, metadata: { exit_code: 0 } }) } }),
    `{"timestamp":"${t(5)}","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"leaked ${s.password!.form.replace(/"/g, '\\"')} ${s.anthropic!.form}`,
    JSON.stringify({ timestamp: t(6), type: "event_msg", payload: { type: "token_count", info: { total_token_usage: { input_tokens: 100, cached_input_tokens: 0, output_tokens: 10, reasoning_output_tokens: 0, total_tokens: 110 }, last_token_usage: { input_tokens: 100, cached_input_tokens: 0, output_tokens: 10, reasoning_output_tokens: 0, total_tokens: 110 } } } }),
  ];
  return lines.join("\n") + "\n";
}

/** Every row of every segment under `dir`, every column cast to text by DuckDB, as one string. */
async function segmentText(dir: string): Promise<{ text: string; rows: number }> {
  const files = walk(dir).filter((f) => /\/seg-\d+\.parquet$/.test(f));
  expect(files.length).toBeGreaterThan(0);
  const db = await DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  try {
    const parts: string[] = [];
    let rows = 0;
    for (const f of files) {
      const cols = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${sqlString(f)})`)).getRowObjectsJS().map((r) => String(r.column_name));
      const out = (await conn.runAndReadAll(`SELECT ${cols.map((c) => `coalesce(CAST("${c.replace(/"/g, '""')}" AS VARCHAR), '')`).join(", ")} FROM read_parquet(${sqlString(f)})`)).getRows();
      for (const r of out) parts.push(r.join("\u001e"));
      rows += out.length;
    }
    return { text: parts.join("\n"), rows };
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

function leaks(where: string, bytes: Buffer | string, all: Record<string, Plant>): string[] {
  const buf = typeof bytes === "string" ? Buffer.from(bytes) : bytes;
  const found: string[] = [];
  for (const [name, p] of Object.entries(all)) for (const n of needles(p)) if (buf.includes(n)) found.push(`${where}: ${name} (${p.rule})`);
  return found;
}

describe("canary", () => {
  it("planted secrets reach no byte of the local root, the local fleet or the S3 fleet; masks and a quarantine object are there", { timeout: 240_000 }, async () => {
    const dir = tempDir("canary");
    const s = plants();
    const tree = vendorTree(join(dir, "vendor"));
    mkdirSync(join(tree.claude, "-home-dev-canary"), { recursive: true });
    writeFileSync(join(tree.claude, "-home-dev-canary", `${CLAUDE_SID}.jsonl`), claudeSession(s));
    const codexDir = join(tree.codex, "sessions", "2026", "02", "04");
    mkdirSync(codexDir, { recursive: true });
    writeFileSync(join(codexDir, `rollout-2026-02-04T09-00-00-${CODEX_SID}.jsonl`), codexSession(s));
    // The vendor tree itself does hold them (the test is meaningful).
    expect(leaks("vendor", Buffer.concat(walk(join(dir, "vendor")).map((f) => readFileSync(f))), s).length).toBeGreaterThanOrEqual(Object.keys(s).length);

    const root = join(dir, "root");
    const fleet = join(dir, "fleet");
    const { url } = await createTestBucket("canary");
    const env = { HOME: join(dir, "home"), ...s3Env() };
    const c = await runCli(["collect", "--root", root, ...tree.flags, "--json"], env);
    expect(c.code, c.stderr).toBe(0);
    const pl = await runCli(["push", "--root", root, "--store", `file://${fleet}`, "--agent", "host-c", "--seal-idle", "0", "--json"], env);
    expect(pl.code, pl.stderr).toBe(0);
    const ps = await runCli(["push", "--root", root, "--store", url, "--agent", "host-c", "--seal-idle", "0", "--json"], env);
    expect(ps.code, ps.stderr).toBe(0);
    expect(JSON.parse(pl.stdout).quarantined).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(ps.stdout).quarantined).toBeGreaterThanOrEqual(1);
    // Nothing leaked to the command output either.
    expect(leaks("stdout/stderr", c.stdout + c.stderr + pl.stdout + pl.stderr + ps.stdout + ps.stderr, s)).toEqual([]);

    // Every file of the local root, raw.
    const found: string[] = [];
    const rootFiles = walk(root);
    for (const f of rootFiles) found.push(...leaks(f, readFileSync(f), s));
    // Every object of the S3 store, raw, mirrored into a directory.
    const mirror = await mirrorStore(url, join(dir, "mirror"));
    for (const base of [fleet, mirror]) for (const f of walk(base)) found.push(...leaks(f, readFileSync(f), s));
    // Every column of every segment, decompressed by DuckDB.
    const local = await segmentText(fleet);
    const remote = await segmentText(mirror);
    found.push(...leaks("local fleet segments (decoded)", local.text, s), ...leaks("s3 fleet segments (decoded)", remote.text, s));
    expect(found).toEqual([]);
    expect(remote.rows).toBe(local.rows);

    // The records are there, masked: `[REDACTED:<rule>:<8hex>]` for every rule but the quarantined key.
    const masks = new Set([...local.text.matchAll(/\[REDACTED:([a-z0-9-]+):[0-9a-f]{8}\]/g)].map((m) => m[1]!));
    for (const p of Object.values(s)) if (p.rule !== "private-key") expect(masks, `mask of ${p.rule}`).toContain(p.rule);
    const landedText = rootFiles.filter((f) => f.endsWith(".sd")).map((f) => readFileSync(f, "utf8")).join("\n");
    expect(landedText).toMatch(/\[REDACTED:github-token:[0-9a-f]{8}\]/);
    expect(local.text).toContain(CLAUDE_SID);
    expect(local.text).toContain(CODEX_SID);
    // The lines that are not JSON landed too, masked.
    expect(local.text).toMatch(/broken \[REDACTED:anthropic-api-key:[0-9a-f]{8}\]/);
    expect(local.text).toMatch(/leaked .*\[REDACTED:anthropic-api-key:[0-9a-f]{8}\]/);

    // The PEM record is withheld: a quarantine object with its status, rules and hash only.
    for (const base of [fleet, mirror]) {
      const q = walk(base).filter((f) => f.includes("/quarantine/"));
      expect(q.length, base).toBeGreaterThanOrEqual(1);
      const bodies = q.map((f) => {
        expect(f).toMatch(/\/quarantine\/host-c\/\d{4}-\d{2}-\d{2}\/[0-9A-HJKMNP-TV-Z]{26}\.json$/);
        return JSON.parse(readFileSync(f, "utf8")) as { status: string; rules_fired: string[]; hash: string; session_id: string };
      });
      const pemQ = bodies.find((b) => b.rules_fired.includes("private-key"));
      expect(pemQ).toMatchObject({ status: "quarantined", session_id: CLAUDE_SID });
      expect(pemQ!.hash).toMatch(/\S{8,}/);
      expect(Object.keys(pemQ!).sort()).toEqual(expect.arrayContaining(["hash", "rules_fired", "status"]));
      expect(JSON.stringify(pemQ)).not.toContain("PRIVATE KEY");
    }
  });
});

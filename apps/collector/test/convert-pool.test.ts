// The convert pool (src/internal/collect-pool.ts): a collect whose records are converted and masked
// in worker threads lands the same files as a one-thread collect of the same corpus (names and the
// collected-at stamp aside), byte for byte; a small pass starts no worker; a pooled collect killed
// at random durable steps (LAKE_TEST_KILL_AT) and rerun until it finishes counts the same usage as a
// clean one-thread run. Everything runs the built collector.
import { createHash } from "node:crypto";
import { appendFileSync, copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usageBySession, type CanonicalRecord } from "@lake/events";
import { readLandedPath } from "@lake/store";
import { QUARANTINE_TYPE } from "@lake/redact";
import { EXIT } from "@lake/cli";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { generateClaudeCorpus, rng } from "@lake/tooling/corpus";
import { addClaudeSessions, runCli, userLine, vendorTree, walk } from "./helpers.js";

afterAll(cleanupTempDirs);

/** Small landed files: many windows, each cut into chunks over the workers. */
const BUDGET = ["--max-delta-bytes", "131072"];
const STAMP = /\d{8}T\d{6}\.\d{9}Z/g;
// Made-up credentials, kept in pieces so no scanner takes this file for a leak.
const AWS_KEY = ["AKIA", "QZ3RT7WXK2MNB4VL"].join("");
const GITHUB_TOKEN = ["ghp_", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"].join("");
const PEM_BODY = [1, 2].map((n) => createHash("sha512").update(`pool-${n}`).digest("base64")).join("\n");

let corpus: string;
beforeAll(async () => {
  corpus = tempDir("pool-corpus");
  await generateClaudeCorpus({ dir: corpus, bytes: 3_000_000, sessionBytes: 200_000, seed: 31 });
});

/** The bundled samples (Claude Code, Codex, Gemini) plus the generated sessions, one with a secret, a private key and lines that are not JSON. */
function tree(dir: string): ReturnType<typeof vendorTree> {
  const t = vendorTree(join(dir, "vendor"));
  addClaudeSessions(corpus, t.claude);
  const first = walk(t.claude).filter((f) => f.endsWith(".jsonl")).sort()[0]!;
  const sid = first.slice(first.lastIndexOf("/") + 1, -".jsonl".length);
  appendFileSync(first, userLine(sid, 900_001, `aws_access_key_id = ${AWS_KEY} and a token ${GITHUB_TOKEN}`));
  appendFileSync(first, "this line is not JSON\n{\"torn\": \n");
  appendFileSync(first, userLine(sid, 900_002, `-----BEGIN RSA ${"PRIVATE"} KEY-----\n${PEM_BODY}\n-----END RSA ${"PRIVATE"} KEY-----`));
  return t;
}

/** Every landed file of a root: its path with the pass stamp taken out → its bytes with the stamp taken out. */
function landed(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of walk(root).filter((p) => p.endsWith(".sd"))) out.set(relative(root, f).replace(STAMP, "STAMP"), readFileSync(f, "latin1").replace(STAMP, "STAMP"));
  return out;
}

/** Every record landed under a root (the index's re-lands included: countUsage dedupes). */
function landedRecords(root: string): CanonicalRecord[] {
  const out: CanonicalRecord[] = [];
  for (const f of walk(root).filter((p) => p.endsWith(".sd")).sort()) for (const row of readLandedPath(f).rows) out.push(JSON.parse(row) as CanonicalRecord);
  return out;
}

/** A root with the given redaction key (the same key masks the same secret to the same hash). */
function rootWithKey(dir: string, key?: string): string {
  const root = join(dir, "root");
  mkdirSync(root, { recursive: true });
  if (key) copyFileSync(key, join(root, "redact.key"));
  return root;
}

describe("the convert pool", () => {
  it("--jobs 2 lands the same files as --jobs 1, byte for byte; a small pass without --jobs starts no worker", { timeout: 180_000 }, async () => {
    const dir = tempDir("pool-same");
    const t = tree(dir);
    const one = rootWithKey(join(dir, "one"));
    const r1 = await runCli(["collect", "--root", one, ...t.flags, ...BUDGET, "--jobs", "1", "--json"], { HOME: join(dir, "home") });
    expect(r1.code, r1.stderr).toBe(EXIT.ok);
    const s1 = JSON.parse(r1.stdout) as { convert_workers: number; convert_failed: number; records: number; landed_files: number };
    expect(s1.convert_workers).toBe(0);

    const pooled = rootWithKey(join(dir, "pooled"), join(one, "redact.key"));
    const r2 = await runCli(["collect", "--root", pooled, ...t.flags, ...BUDGET, "--jobs", "2", "--json"], { HOME: join(dir, "home") });
    expect(r2.code, r2.stderr).toBe(r1.code);
    const s2 = JSON.parse(r2.stdout) as typeof s1;
    expect(s2.convert_workers).toBeGreaterThanOrEqual(1);
    // Every piece was converted by a worker: none fell back to the main thread.
    expect(s2.convert_failed).toBe(0);
    expect({ ...s2, convert_workers: 0, root: "" }).toEqual({ ...s1, root: "" });
    // The same problems named (two sessions may run at once: in another order).
    const lines = (text: string, root: string) => text.replaceAll(root, "ROOT").split("\n").sort();
    expect(lines(r2.stderr, pooled)).toEqual(lines(r1.stderr, one));

    const a = landed(one);
    const b = landed(pooled);
    expect(a.size).toBe(s1.landed_files);
    expect(a.size).toBeGreaterThan(30);
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [name, bytes] of a) expect(b.get(name) === bytes, `${name} differs`).toBe(true);
    // The secret was masked, the private key's record withheld, the lines that are not JSON kept as unknown records.
    const all = [...a.values()].join("");
    expect(all).not.toContain(AWS_KEY);
    expect(all).not.toContain(GITHUB_TOKEN);
    expect(all).toContain("[REDACTED:aws-access-key-id:");
    expect(all).not.toContain(PEM_BODY.slice(0, 40));
    expect(all).toContain(`"vendor_type":"${QUARANTINE_TYPE}"`);
    expect(all).toContain('"kind":"unknown"');
    for (const root of [one, pooled]) expect((await runCli(["verify", "--root", root], { HOME: join(dir, "home") })).code).toBe(EXIT.ok);

    // A pass with little to convert and no --jobs stays on the main thread.
    const samples = vendorTree(join(dir, "samples"));
    const r3 = await runCli(["collect", "--root", rootWithKey(join(dir, "small")), ...samples.flags, "--json"], { HOME: join(dir, "home") });
    expect(r3.code, r3.stderr).toBe(EXIT.ok);
    expect(JSON.parse(r3.stdout)).toMatchObject({ convert_workers: 0 });
    expect(JSON.parse(r3.stdout).records).toBeGreaterThan(100);
    // LAKE_COLLECT_JOBS asks for workers like --jobs; a bad value is a usage error naming it.
    const r4 = await runCli(["collect", "--root", rootWithKey(join(dir, "env")), ...t.flags, "--json"], { HOME: join(dir, "home"), LAKE_COLLECT_JOBS: "2" });
    expect(JSON.parse(r4.stdout).convert_workers).toBeGreaterThanOrEqual(1);
    const bad = await runCli(["collect", "--root", rootWithKey(join(dir, "bad")), ...t.flags], { HOME: join(dir, "home"), LAKE_COLLECT_JOBS: "two" });
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.stderr).toMatch(/LAKE_COLLECT_JOBS=two/);
  });

  it("one long session without --jobs hears from its one worker and uses it; a line over 4 MiB is converted on the main thread, the same bytes", { timeout: 180_000 }, async () => {
    const dir = tempDir("pool-one");
    const projects = join(dir, "vendor", "projects");
    // One 12 MB session: past the 4 MiB a pass converts before it starts its pool. A pass over it lands
    // window after window without waiting on I/O: without a turn of the event loop per window it
    // never hears its workers say they are ready.
    const big = await generateClaudeCorpus({ dir: join(dir, "vendor"), bytes: 12_000_000, sessionBytes: 12_000_000, seed: 7 });
    const file = big.files[0]!;
    const sid = file.slice(file.lastIndexOf("/") + 1, -".jsonl".length);
    // A line of 5 MiB of text (one tool result): its window goes to no worker.
    appendFileSync(file, userLine(sid, 910_001, "x".repeat(5 * 1024 * 1024)));
    const one = rootWithKey(join(dir, "one"));
    const r1 = await runCli(["collect", "--root", one, "--sources-only", "--source", `claude-code=${projects}`, "--jobs", "1", "--json"], { HOME: join(dir, "home") });
    expect(r1.code, r1.stderr).toBe(EXIT.ok);
    const pooled = rootWithKey(join(dir, "pooled"), join(one, "redact.key"));
    const steps = join(dir, "steps");
    const r2 = await runCli(["collect", "--root", pooled, "--sources-only", "--source", `claude-code=${projects}`, "--json"], { HOME: join(dir, "home"), LAKE_COLLECT_JOBS: "", LAKE_TEST_STEPS: steps });
    expect(r2.code, r2.stderr).toBe(EXIT.ok);
    const s2 = JSON.parse(r2.stdout) as { convert_workers: number; convert_failed: number; sessions: number };
    expect(s2.sessions).toBe(1);
    // One session's windows land one after another: one worker, not the machine's cores.
    expect(s2.convert_workers).toBe(1);
    expect(s2.convert_failed).toBe(0);
    // The worker is stopped once the pass's last session is read: after its last landing step and
    // before its chain's first (a worker's heap is not in the chain's peak RSS).
    const names = readFileSync(steps, "utf8").trim().split("\n").map((l) => l.slice(l.indexOf(" ") + 1));
    const closed = names.indexOf("collect:pool-closed");
    expect(names.filter((n) => n === "collect:pool-closed")).toHaveLength(1);
    expect(closed).toBeGreaterThan(names.findLastIndex((n) => n.startsWith("store:")));
    expect(closed).toBeLessThan(names.findIndex((n) => n.startsWith("chain:")));
    expect(names.some((n) => n.startsWith("chain:"))).toBe(true);
    const a = landed(one);
    const b = landed(pooled);
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [name, bytes] of a) expect(b.get(name) === bytes, `${name} differs`).toBe(true);
    expect([...a.values()].some((t) => t.includes("x".repeat(1024 * 1024)))).toBe(true);
  });

  it("a pooled collect SIGKILLed at random steps and rerun until it finishes counts the usage of a clean one-thread run", { timeout: 600_000 }, async () => {
    const dir = tempDir("pool-kill");
    const t = tree(dir);
    const env = { HOME: join(dir, "home") };
    const clean = rootWithKey(join(dir, "clean"));
    const c = await runCli(["collect", "--root", clean, ...t.flags, ...BUDGET, "--jobs", "1", "--json"], env);
    expect(c.code, c.stderr).toBe(EXIT.ok);
    const expected = usageBySession(landedRecords(clean));
    expect(expected.size).toBeGreaterThan(10);

    const root = rootWithKey(join(dir, "killed"));
    const next = rng(19);
    let kills = 0;
    let done = 0;
    for (let i = 0; ; i++) {
      expect(i, "the collect chain makes no progress").toBeLessThan(100);
      // A session a killed run finished costs its rerun a few steps (lock, chain lock, unlock).
      const killAt = 3 * done + 1 + Math.floor(next() * 250);
      const steps = join(dir, `steps-${i}`);
      const r = await runCli(["collect", "--root", root, ...t.flags, ...BUDGET, "--jobs", "2", "--json"], { ...env, LAKE_TEST_KILL_AT: String(killAt), LAKE_TEST_STEPS: steps });
      done = readFileSync(steps, "utf8").split("\n").filter((l) => l.endsWith(" chain:unlocked")).length;
      if (r.signal === "SIGKILL") {
        kills++;
        continue;
      }
      expect(r.code, r.stderr).toBe(EXIT.ok);
      break;
    }
    expect(kills).toBeGreaterThanOrEqual(2);
    expect((await runCli(["verify", "--root", root], env)).code).toBe(EXIT.ok);
    expect(usageBySession(landedRecords(root))).toEqual(expected);
    // Once more: nothing new, nothing converted.
    const again = await runCli(["collect", "--root", root, ...t.flags, ...BUDGET, "--jobs", "2", "--json"], env);
    expect(JSON.parse(again.stdout)).toMatchObject({ landed_files: 0, convert_workers: 0 });
  });
});

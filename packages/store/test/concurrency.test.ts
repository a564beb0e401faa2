// Four processes run passes over one root at once while the sources grow: no sequence number is
// issued twice, no landed file is replaced, a runner that finds a session locked waits (WAIT_MS)
// or reports it (WAIT_MS=0), and the root verifies afterwards.
import { afterAll, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { acquireLock, listSessions, readIndex, verify, formatProblem } from "../src/index.js";

afterAll(cleanupTempDirs);

const CHILD = fileURLToPath(new URL("./fixtures/collect-child.mjs", import.meta.url));

function run(root: string, srcRoot: string, env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [CHILD, root, srcRoot], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    c.stdout.on("data", (d: Buffer) => (out += d.toString()));
    c.stderr.on("data", (d: Buffer) => (err += d.toString()));
    c.on("error", reject);
    c.on("exit", (code) => resolve({ code, out, err }));
  });
}

it("four processes collecting one root at once: unique sequence numbers, nothing replaced, locked sessions waited for or reported", { timeout: 300_000 }, async () => {
  const base = tempDir("store-conc");
  const root = join(base, "root");
  const srcRoot = join(base, "src");
  const sessions = ["c1", "c2", "c3", "c4"];
  let n = 0;
  const ids: string[] = [];
  const grow = () => {
    for (const s of sessions) {
      for (const st of ["main", "agent-x"]) {
        let out = "";
        for (let i = 0; i < 3; i++) {
          const id = `${s}-${st}-${n++}`;
          ids.push(id);
          out += JSON.stringify({ type: "user", uuid: id, text: "t".repeat(200) }) + "\n";
        }
        appendFileSync(join(srcRoot, s, `${st}.jsonl`), out);
      }
    }
  };
  for (const s of sessions) mkdirSync(join(srcRoot, s), { recursive: true });
  grow();
  for (const s of sessions) writeFileSync(join(srcRoot, s, "agent-x.meta.json"), JSON.stringify({ uuid: `meta-${s}` }));
  let running = true;
  const writer = (async () => {
    // The sources grow while the runners collect (bounded, so a slow machine does not grow them without end).
    for (let round = 0; running && round < 40; round++) {
      grow();
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  const env = (waitMs: number) => ({ REPORT: "1", PASSES: "3", WAIT_MS: String(waitMs), MAX_DELTA: "2048" });
  const results = await Promise.all([run(root, srcRoot, env(20_000)), run(root, srcRoot, env(0)), run(root, srcRoot, env(20_000)), run(root, srcRoot, env(0))]);
  running = false;
  await writer;
  for (const r of results) {
    expect(r.err).toBe("");
    expect(r.code === 0 || r.code === 1).toBe(true); // 1: a pass left a source pending
  }
  const reports = results.flatMap((r) => r.out.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as { session?: string; seq?: number; rel?: string; ino?: number; sha256?: string; locked?: string }));
  const landed = reports.filter((r) => r.seq !== undefined);
  const locked = reports.filter((r) => r.locked !== undefined);
  // No sequence number issued twice within a session.
  const seen = new Set<string>();
  for (const l of landed) {
    const k = `${l.session}:${l.seq}`;
    expect(seen.has(k), `seq ${k} issued twice`).toBe(false);
    seen.add(k);
  }
  // No landed file replaced: each is still the inode and bytes its runner landed.
  for (const l of landed) {
    const p = join(root, l.session!, l.rel!);
    expect(statSync(p).ino).toBe(l.ino);
    expect(createHash("sha256").update(readFileSync(p)).digest("hex")).toBe(l.sha256);
  }
  // Every landed file on disk was reported by exactly one runner.
  const onDisk = listSessions(root).flatMap((s) => readIndex(root, s).files.map((f) => `${s}:${f.seq}`));
  expect(onDisk.sort()).toEqual([...seen].sort());
  // A final pass drains the rest; verify passes; every line landed once as a first copy.
  const fin = await run(root, srcRoot, { WAIT_MS: "0", MAX_DELTA: "1000000" });
  expect(fin.code).toBe(0);
  const v = verify(root);
  expect(v.problems.map(formatProblem)).toEqual([]);
  const firsts = new Set(listSessions(root).flatMap((s) => readIndex(root, s).entries.filter((e) => !e.duplicate).map((e) => e.record_id)));
  for (const id of ids) expect(firsts.has(id), id).toBe(true);
  console.log(`concurrency: ${landed.length} files landed by 4 runners, ${locked.length} locked sessions reported, ${ids.length} lines`);
});

it("a runner finding a session locked reports it (no wait) or waits until it is free", { timeout: 60_000 }, async () => {
  const base = tempDir("store-conc2");
  const root = join(base, "root");
  const srcRoot = join(base, "src");
  mkdirSync(join(srcRoot, "L1"), { recursive: true });
  writeFileSync(join(srcRoot, "L1", "main.jsonl"), JSON.stringify({ type: "user", uuid: "x" }) + "\n");
  mkdirSync(join(root, "L1"), { recursive: true });
  const lock = await acquireLock(join(root, "L1"));
  const r1 = await run(root, srcRoot, { WAIT_MS: "0", REPORT: "1" });
  expect(r1.out.trim()).toBe(JSON.stringify({ locked: "L1" }));
  const waiting = run(root, srcRoot, { WAIT_MS: "30000", REPORT: "1" });
  await new Promise((r) => setTimeout(r, 1500));
  lock.release();
  const r2 = await waiting;
  expect(r2.code).toBe(0);
  expect(JSON.parse(r2.out.trim())).toMatchObject({ session: "L1", seq: 1 });
});

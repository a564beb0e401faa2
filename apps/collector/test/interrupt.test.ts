// Ctrl-C during a real collect, a real push and a real watch (the built bin, SIGINT from outside):
// each stops at its next safe point, releases its locks, says how far it got and exits 130; the
// rerun finishes the work, and nothing is lost or sent twice.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateClaudeCorpus } from "@lake/tooling/corpus";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { listSessions, readIndex } from "@lake/store";
import { addClaudeSessions, BIN, fleetRecords, runCli, vendorTree, walk, type Run } from "./helpers.js";

afterAll(cleanupTempDirs);

/**
 * Start the bin; send SIGINT once the steps file shows `ready` true; resolve with the run. Each step
 * stalls the bin for a few milliseconds (LAKE_TEST_STEP_DELAY_MS), so the signal always lands while
 * there is work left, however fast the machine.
 */
function interruptWhen(args: string[], env: NodeJS.ProcessEnv, steps: string, ready: (lines: string[]) => boolean): Promise<Run & { sentAt: number }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env, LAKE_TEST_STEPS: steps, LAKE_TEST_STEP_DELAY_MS: "15" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let sentAt = 0;
    p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const poll = setInterval(() => {
      const lines = existsSync(steps) ? readFileSync(steps, "utf8").trimEnd().split("\n") : [];
      if (sentAt === 0 && ready(lines)) {
        sentAt = lines.length;
        p.kill("SIGINT");
      }
    }, 20);
    p.on("error", reject);
    p.on("close", (code, signal) => {
      clearInterval(poll);
      resolve({ code, signal, stdout, stderr, sentAt });
    });
  });
}

/** Every session's indexed record ids (duplicates left out), sorted: what a root holds. */
function held(root: string): Map<string, string[]> {
  return new Map(listSessions(root).map((s) => [s, readIndex(root, s).entries.filter((e) => !e.duplicate).map((e) => `${e.stream}/${e.record_id ?? ""}/${e.kind}`).sort()]));
}

const locks = (root: string) => walk(root).filter((f) => f.endsWith(".lock") || f.includes(".lock/"));

/** A vendor tree of a few dozen generated Claude Code sessions, and the root one uninterrupted collect makes of it. */
interface Corpus {
  readonly dir: string;
  readonly tree: ReturnType<typeof vendorTree>;
  readonly env: NodeJS.ProcessEnv;
  readonly ref: string;
  readonly total: { sessions: number; records: number };
}
let corpus: Promise<Corpus> | undefined;
function sharedCorpus(): Promise<Corpus> {
  corpus ??= (async () => {
    const dir = tempDir("sigint");
    const tree = vendorTree(join(dir, "vendor"));
    const gen = join(dir, "gen");
    await generateClaudeCorpus({ dir: gen, bytes: 1_200_000, sessionBytes: 30_000, seed: 27 });
    addClaudeSessions(gen, tree.claude);
    const env = { HOME: join(dir, "home") };
    // The reference: the same sources collected in one go.
    const ref = join(dir, "ref");
    const whole = await runCli(["collect", "--root", ref, ...tree.flags, "--json"], env);
    expect(whole.code, whole.stderr).toBe(0);
    const total = JSON.parse(whole.stdout) as { sessions: number; records: number };
    expect(total.sessions).toBeGreaterThan(20);
    return { dir, tree, env, ref, total };
  })();
  return corpus;
}

describe("Ctrl-C", { timeout: 600_000 }, () => {
  it("collect and push stop at a safe point, release their locks, say so, exit 130; the rerun completes", async () => {
    const { dir, tree, env, ref, total } = await sharedCorpus();
    const root = join(dir, "root");

    // Interrupt a collect once a few sessions have published their rounds.
    const c = await interruptWhen(["collect", "--root", root, ...tree.flags], env, join(dir, "collect.steps"), (l) => l.filter((x) => x.endsWith(" chain:unlocked")).length >= 3);
    expect(c.code, c.stderr).toBe(130);
    const m = /^lake-collector: interrupted; (\d+) sessions done, run again to continue$/m.exec(c.stderr);
    expect(m, c.stderr).not.toBeNull();
    const done = Number(m![1]);
    expect(done).toBeGreaterThanOrEqual(3);
    expect(done).toBeLessThan(total.sessions);
    expect(locks(root)).toEqual([]);
    const st = JSON.parse((await runCli(["status", "--root", root, ...tree.flags, "--json"], env)).stdout) as { locked: number; last_pass: { interrupted?: boolean } };
    expect(st).toMatchObject({ locked: 0, last_pass: { interrupted: true } });
    // The rerun completes: the root then holds exactly what the one-go collect holds, and verifies clean.
    const again = await runCli(["collect", "--root", root, ...tree.flags, "--json"], env);
    expect(again.code, again.stderr).toBe(0);
    expect(held(root)).toEqual(held(ref));
    expect((await runCli(["verify", "--root", root], env)).code).toBe(0);

    // Interrupt a push once a few sessions are sent (each session's rollup, its keys then its json, is written once its segments are up).
    const fleet = join(dir, "fleet");
    const pushArgs = ["push", "--root", root, "--store", `file://${fleet}`, "--agent", "host-a", "--seal-idle", "0"];
    const p = await interruptWhen(pushArgs, env, join(dir, "push.steps"), (l) => l.filter((x) => x.endsWith(" push:rollup")).length >= 6);
    expect(p.code, p.stderr).toBe(130);
    const pm = /^lake-collector: interrupted; (\d+) sessions done, run again to continue$/m.exec(p.stderr);
    expect(pm, p.stderr).not.toBeNull();
    expect(Number(pm![1])).toBeGreaterThanOrEqual(3);
    expect(Number(pm![1])).toBeLessThan(total.sessions);
    expect(existsSync(join(root, "_export", ".lock"))).toBe(false);
    const rest = await runCli([...pushArgs, "--json"], env);
    expect(rest.code, rest.stderr).toBe(0);
    expect((JSON.parse(rest.stdout) as { sessions: number }).sessions + Number(pm![1])).toBeGreaterThanOrEqual(total.sessions);
    const rows = await fleetRecords(fleet);
    expect(rows.length).toBe(total.records);
    // Every record the root holds is in the fleet once: the same records per session, none twice.
    const sent = new Map<string, string[]>();
    for (const r of rows) {
      let l = sent.get(r.session_id);
      if (!l) sent.set(r.session_id, (l = []));
      l.push(`${r.stream}/${r.record_id ?? ""}/${r.kind}`);
    }
    for (const l of sent.values()) l.sort();
    expect(new Map([...sent].sort(([a], [b]) => (a < b ? -1 : 1)))).toEqual(held(root));
    const after = await runCli([...pushArgs, "--json"], env);
    expect(JSON.parse(after.stdout)).toMatchObject({ sessions: 0, rows: 0 });
  });

  it("watch stops its pass at a safe point, releases watch.lock and the session locks, says so, exits 130; the rerun completes", async () => {
    const { dir, tree, env, ref, total } = await sharedCorpus();
    const root = join(dir, "watch-root");
    // Interrupt the first (full) pass once a few sessions have published their rounds.
    const w = await interruptWhen(["watch", "--root", root, ...tree.flags, "--interval", "600"], env, join(dir, "watch.steps"), (l) => l.filter((x) => x.endsWith(" chain:unlocked")).length >= 3);
    expect(w.code, w.stderr).toBe(130);
    expect(w.stderr).toMatch(/^lake-collector: interrupted; 1 passes done, run again to continue\n$/);
    expect(existsSync(join(root, "watch.lock"))).toBe(false);
    expect(locks(root)).toEqual([]);
    expect(JSON.parse(readFileSync(join(root, "watch.status"), "utf8"))).toMatchObject({ state: "stopped", passes: 1 });
    const st = JSON.parse((await runCli(["status", "--root", root, ...tree.flags, "--json"], env)).stdout) as { locked: number; sessions: number; last_pass: { interrupted?: boolean }; watch: { state: string } };
    expect(st).toMatchObject({ locked: 0, last_pass: { interrupted: true }, watch: { state: "stopped" } });
    // Stopped part way: some sessions are in, not all.
    expect(st.sessions).toBeGreaterThanOrEqual(3);
    expect(st.sessions).toBeLessThan(total.sessions);
    // The rerun (one more pass) completes: the root holds exactly what the one-go collect holds.
    const again = await runCli(["watch", "--root", root, ...tree.flags, "--max-passes", "1"], env);
    expect(again.code, again.stderr).toBe(0);
    expect(held(root)).toEqual(held(ref));
    expect((await runCli(["verify", "--root", root], env)).code).toBe(0);
  });
});

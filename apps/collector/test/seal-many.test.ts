// A push that seals many sessions — idle ones with nothing new (the first push after a quiet day),
// or ones it has just sent (a first push) — saves push.state at its own pace, not once per seal: a
// seal needs only its own session's sent files saved before its _SEALED goes up. Saves are counted
// by the durable step each one reports.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { claudeSessions, runCli, walk, type Run } from "./helpers.js";

afterAll(cleanupTempDirs);

const N = 60;

type SessionState = { sealed: boolean; files: Record<string, string> };

/**
 * N generated sessions collected into a fresh root; `push` runs the bin against a fleet directory
 * (`fleet` by default) with extra arguments and environment.
 */
async function collectedRoot(seed: number) {
  const dir = tempDir("seal-many");
  const { projects, ids } = claudeSessions(join(dir, "vendor"), N, seed, 12);
  const root = join(dir, "root");
  const fleet = join(dir, "fleet");
  const env = { HOME: join(dir, "home") };
  const collected = await runCli(["collect", "--root", root, "--sources-only", "--source", `claude-code=${projects}`, "--json"], env);
  expect(collected.code, collected.stderr).toBe(0);
  const push = (extra: string[], more: NodeJS.ProcessEnv = {}, to = fleet) => runCli(["push", "--root", root, "--store", `file://${to}`, "--agent", "host-s", ...extra, "--json"], { ...env, ...more });
  return { dir, root, fleet, ids, push };
}

/** The step names a run wrote to its LAKE_TEST_STEPS file, in order. */
const stepNames = (file: string) => readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => l.slice(l.indexOf(" ") + 1));

/** The sessions push.state holds for the fleet directory `fleet` (the only receiver when undefined). */
function pushStateSessions(root: string, fleet?: string): Record<string, SessionState> {
  const state = JSON.parse(readFileSync(join(root, "push.state"), "utf8")) as { receivers: Record<string, { sessions: Record<string, SessionState> }> };
  return (fleet === undefined ? Object.values(state.receivers)[0] : state.receivers[`file://${fleet}`])?.sessions ?? {};
}

/** Every session sealed once in `fleet` (one _SEALED each), and a rerun of `push` seals and sends nothing. */
async function sealedOnce(fleet: string, push: (extra: string[]) => Promise<Run>): Promise<void> {
  expect(walk(fleet).filter((f) => f.endsWith("/_SEALED"))).toHaveLength(N);
  const again = await push(["--seal-idle", "0"]);
  expect(again.code, again.stderr).toBe(0);
  expect(JSON.parse(again.stdout)).toMatchObject({ sessions: 0, sealed: 0, segments: 0 });
}

describe("a push that seals many idle sessions", { timeout: 120_000 }, () => {
  it("saves push.state a bounded number of times, seals every session once, and a rerun seals nothing", async () => {
    const { dir, root, fleet, ids, push } = await collectedRoot(5);
    const first = await push([]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ sessions: N, sealed: 0 });

    // Nothing new, every session idle: each is sealed, push.state is written once at the end (a
    // push that takes over a second may add one save per second).
    const steps = join(dir, "steps-seal");
    const sealing = await push(["--seal-idle", "0"], { LAKE_TEST_STEPS: steps });
    expect(sealing.code, sealing.stderr).toBe(0);
    expect(JSON.parse(sealing.stdout)).toMatchObject({ sessions: 0, sealed: N });
    const names = stepNames(steps);
    expect(names.filter((s) => s === "push:sealed")).toHaveLength(N);
    expect(names.filter((s) => s === "push:state-saved").length).toBeLessThanOrEqual(3);
    const sessions = pushStateSessions(root);
    expect(ids.every((id) => sessions[id]?.sealed === true)).toBe(true);
    await sealedOnce(fleet, push);
  });

  it("a first push that sends and seals every session: the seals wait for the next save, so push.state is saved about once a second, not once per session", async () => {
    const { dir, root, fleet, ids, push } = await collectedRoot(7);
    const steps = join(dir, "steps-send-seal");
    const t0 = Date.now();
    const first = await push(["--seal-idle", "0"], { LAKE_TEST_STEPS: steps });
    const seconds = Math.ceil((Date.now() - t0) / 1000);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ sessions: N, sealed: N, segments: N });
    const names = stepNames(steps);
    expect(names.filter((s) => s === "push:sealed")).toHaveLength(N);
    // One save a second at most while it sends, then one letting the last seals go and one after them.
    expect(names.filter((s) => s === "push:state-saved").length).toBeLessThanOrEqual(2 + seconds);
    // No seal before the first save (a session's sent files are saved before its _SEALED goes up).
    expect(names.indexOf("push:sealed")).toBeGreaterThan(names.indexOf("push:state-saved"));
    const sessions = pushStateSessions(root);
    expect(ids.every((id) => sessions[id]?.sealed === true && Object.keys(sessions[id]!.files).length > 0)).toBe(true);
    await sealedOnce(fleet, push);
  });

  it("killed at any step of a first push that sends and seals, the fleet never holds a _SEALED over a file push.state does not list as sent", async () => {
    const { dir, root, fleet, ids, push } = await collectedRoot(9);
    // How many steps a whole push takes (to a fleet of its own: push.state keeps a receiver per store).
    const refSteps = join(dir, "steps-ref");
    expect((await push(["--seal-idle", "0"], { LAKE_TEST_STEPS: refSteps }, join(dir, "ref"))).code).toBe(0);
    const total = stepNames(refSteps).length;
    const landed = (id: string) => walk(join(root, id, "streams")).filter((f) => f.endsWith(".sd")).map((f) => f.slice(join(root, id).length + 1));
    let kills = 0;
    for (const share of [0.1, 0.25, 0.45, 0.7, 0.9]) {
      const r = await push(["--seal-idle", "0"], { LAKE_TEST_KILL_AT: String(Math.max(1, Math.round(total * share))) });
      if (r.signal === "SIGKILL") kills++;
      const sessions = pushStateSessions(root, fleet);
      const sealed = walk(fleet).filter((f) => f.endsWith("/_SEALED")).map((f) => /session=([^/]+)\//.exec(f)![1]!);
      for (const id of sealed) expect(landed(id).filter((rel) => sessions[id]?.files[rel] === undefined), `${id}: sealed with files push.state does not list`).toEqual([]);
    }
    expect(kills).toBeGreaterThanOrEqual(3);
    const last = await push(["--seal-idle", "0"]);
    expect(last.code, last.stderr).toBe(0);
    expect(walk(fleet).filter((f) => f.endsWith("/_SEALED"))).toHaveLength(ids.length);
  });
});

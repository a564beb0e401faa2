// A push that seals many sessions — idle ones with nothing new (the first push after a quiet day),
// or ones it has just sent (a first push) — saves push.state at its own pace, not once per seal: a
// seal needs only its own session's sent files saved before its _SEALED goes up. Saves are counted
// by the durable step each one reports.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { claudeSessions, runCli, walk } from "./helpers.js";

afterAll(cleanupTempDirs);

const N = 60;

describe("a push that seals many idle sessions", { timeout: 120_000 }, () => {
  it("saves push.state a bounded number of times, seals every session once, and a rerun seals nothing", async () => {
    const dir = tempDir("seal-many");
    const { projects, ids } = claudeSessions(join(dir, "vendor"), N, 5, 12);
    const root = join(dir, "root");
    const fleet = join(dir, "fleet");
    const env = { HOME: join(dir, "home") };
    const collected = await runCli(["collect", "--root", root, "--sources-only", "--source", `claude-code=${projects}`, "--json"], env);
    expect(collected.code, collected.stderr).toBe(0);
    const push = (extra: string[], steps?: string) => runCli(["push", "--root", root, "--store", `file://${fleet}`, "--agent", "host-s", ...extra, "--json"], steps ? { ...env, LAKE_TEST_STEPS: steps } : env);
    const first = await push([]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ sessions: N, sealed: 0 });

    // Nothing new, every session idle: each is sealed, push.state is written once at the end (a
    // push that takes over a second may add one save per second).
    const steps = join(dir, "steps-seal");
    const sealing = await push(["--seal-idle", "0"], steps);
    expect(sealing.code, sealing.stderr).toBe(0);
    expect(JSON.parse(sealing.stdout)).toMatchObject({ sessions: 0, sealed: N });
    const names = readFileSync(steps, "utf8").split("\n").filter(Boolean).map((l) => l.slice(l.indexOf(" ") + 1));
    expect(names.filter((s) => s === "push:sealed")).toHaveLength(N);
    expect(names.filter((s) => s === "push:state-saved").length).toBeLessThanOrEqual(3);
    expect(walk(fleet).filter((f) => f.endsWith("/_SEALED"))).toHaveLength(N);
    const state = JSON.parse(readFileSync(join(root, "push.state"), "utf8")) as { receivers: Record<string, { sessions: Record<string, { sealed: boolean }> }> };
    const sessions = Object.values(state.receivers)[0]!.sessions;
    expect(ids.every((id) => sessions[id]?.sealed === true)).toBe(true);

    const again = await push(["--seal-idle", "0"]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ sessions: 0, sealed: 0, segments: 0 });
  });

  it("a first push that sends and seals every session: the seals wait for the next save, so push.state is saved about once a second, not once per session", async () => {
    const dir = tempDir("seal-many");
    const { projects, ids } = claudeSessions(join(dir, "vendor"), N, 7, 12);
    const root = join(dir, "root");
    const fleet = join(dir, "fleet");
    const env = { HOME: join(dir, "home") };
    const collected = await runCli(["collect", "--root", root, "--sources-only", "--source", `claude-code=${projects}`, "--json"], env);
    expect(collected.code, collected.stderr).toBe(0);
    const steps = join(dir, "steps-send-seal");
    const t0 = Date.now();
    const first = await runCli(["push", "--root", root, "--store", `file://${fleet}`, "--agent", "host-s", "--seal-idle", "0", "--json"], { ...env, LAKE_TEST_STEPS: steps });
    const seconds = Math.ceil((Date.now() - t0) / 1000);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ sessions: N, sealed: N, segments: N });
    const names = readFileSync(steps, "utf8").split("\n").filter(Boolean).map((l) => l.slice(l.indexOf(" ") + 1));
    expect(names.filter((s) => s === "push:sealed")).toHaveLength(N);
    // One save a second at most while it sends, then one letting the last seals go and one after them.
    expect(names.filter((s) => s === "push:state-saved").length).toBeLessThanOrEqual(2 + seconds);
    // No seal before the first save (a session's sent files are saved before its _SEALED goes up).
    expect(names.indexOf("push:sealed")).toBeGreaterThan(names.indexOf("push:state-saved"));
    expect(walk(fleet).filter((f) => f.endsWith("/_SEALED"))).toHaveLength(N);
    const state = JSON.parse(readFileSync(join(root, "push.state"), "utf8")) as { receivers: Record<string, { sessions: Record<string, { sealed: boolean; files: Record<string, string> }> }> };
    const sessions = Object.values(state.receivers)[0]!.sessions;
    expect(ids.every((id) => sessions[id]?.sealed === true && Object.keys(sessions[id]!.files).length > 0)).toBe(true);

    const again = await runCli(["push", "--root", root, "--store", `file://${fleet}`, "--agent", "host-s", "--seal-idle", "0", "--json"], env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ sessions: 0, sealed: 0, segments: 0 });
  });

  it("killed at any step of a first push that sends and seals, the fleet never holds a _SEALED over a file push.state does not list as sent", async () => {
    const dir = tempDir("seal-many");
    const { projects, ids } = claudeSessions(join(dir, "vendor"), N, 9, 12);
    const root = join(dir, "root");
    const env = { HOME: join(dir, "home") };
    const collected = await runCli(["collect", "--root", root, "--sources-only", "--source", `claude-code=${projects}`, "--json"], env);
    expect(collected.code, collected.stderr).toBe(0);
    const push = (fleet: string, extra: NodeJS.ProcessEnv) => runCli(["push", "--root", root, "--store", `file://${fleet}`, "--agent", "host-s", "--seal-idle", "0", "--json"], { ...env, ...extra });
    // How many steps a whole push takes (to a fleet of its own: push.state keeps a receiver per store).
    const refSteps = join(dir, "steps-ref");
    expect((await push(join(dir, "ref"), { LAKE_TEST_STEPS: refSteps })).code).toBe(0);
    const total = readFileSync(refSteps, "utf8").split("\n").filter(Boolean).length;
    const fleet = join(dir, "fleet");
    const landed = (id: string) => walk(join(root, id, "streams")).filter((f) => f.endsWith(".sd")).map((f) => f.slice(join(root, id).length + 1));
    let kills = 0;
    for (const share of [0.1, 0.25, 0.45, 0.7, 0.9]) {
      const r = await push(fleet, { LAKE_TEST_KILL_AT: String(Math.max(1, Math.round(total * share))) });
      if (r.signal === "SIGKILL") kills++;
      const state = JSON.parse(readFileSync(join(root, "push.state"), "utf8")) as { receivers: Record<string, { sessions: Record<string, { files: Record<string, string> }> }> };
      const sessions = state.receivers[`file://${fleet}`]?.sessions ?? {};
      const sealed = walk(fleet).filter((f) => f.endsWith("/_SEALED")).map((f) => /session=([^/]+)\//.exec(f)![1]!);
      for (const id of sealed) expect(landed(id).filter((rel) => sessions[id]?.files[rel] === undefined), `${id}: sealed with files push.state does not list`).toEqual([]);
    }
    expect(kills).toBeGreaterThanOrEqual(3);
    const last = await push(fleet, {});
    expect(last.code, last.stderr).toBe(0);
    expect(walk(fleet).filter((f) => f.endsWith("/_SEALED"))).toHaveLength(ids.length);
  });
});

// `lake-collector push --otlp-endpoint`: derivation and export SIGKILLed at every durable step they
// reach (LAKE_TEST_KILL_AT), then run again; a second real lake receiver (`watch --otlp-listen`)
// counts what arrived: each landed file's points exactly once, the same points as an uninterrupted
// run, whose tokens add up to what lake-reader usage session reports.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { decodeMetricsRequest, exportIdOf, listSpool, metricPoints } from "@lake/store/metrics";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { BIN, SAMPLES, runCli } from "./helpers.js";

const READER = fileURLToPath(new URL("../../reader/bin/lake-reader.js", import.meta.url));
let receiver: ChildProcess | undefined;
afterAll(() => {
  if (receiver && receiver.exitCode === null) receiver.kill("SIGKILL");
  cleanupTempDirs();
});

/** What the receiver spooled, per sending agent: `<session> <seq>` → the file's points, as sorted text. */
function received(root: string): Map<string, Map<string, string[][]>> {
  const out = new Map<string, Map<string, string[][]>>();
  for (const e of listSpool(root)) {
    const req = decodeMetricsRequest(readFileSync(e.path), e.path);
    const id = exportIdOf(req)!;
    const agent = id.slice(0, id.indexOf("/"));
    const ps = metricPoints(req);
    const key = `${String(ps[0]!.resource["session.id"])} ${String(ps[0]!.resource["lake.landed.seq"])}`;
    let m = out.get(agent);
    if (!m) out.set(agent, (m = new Map()));
    const list = m.get(key) ?? [];
    list.push(ps.map((p) => `${p.metric} ${JSON.stringify(p.attributes)} ${String(p.value)}`).sort());
    m.set(key, list);
  }
  return out;
}

describe("push --otlp-endpoint", { timeout: 300_000 }, () => {
  it("killed at every step of derivation and export, then run again: each landed file's points reach the receiver once", async () => {
    const dir = tempDir("lake-otlp-export-");
    // A real Claude Code transcript collected in two passes (its first half, then all of it): one
    // session, two landed files, a response's copies on both sides of the cut.
    const project = join(dir, "vendor", "projects", "-home-marco-projects-spotter");
    mkdirSync(project, { recursive: true });
    const transcript = readFileSync(join(SAMPLES, "claude", "projects", "-home-marco-projects-spotter", "tool_heavy.jsonl"), "utf8");
    const lines = transcript.split(/(?<=\n)/);
    const file = join(project, "tool_heavy.jsonl");
    const flags = ["--sources-only", "--source", `claude-code=${join(dir, "vendor", "projects")}`];
    const base = join(dir, "base");
    writeFileSync(file, lines.slice(0, Math.floor(lines.length / 2)).join(""));
    expect((await runCli(["collect", "--root", base, ...flags])).code).toBe(0);
    writeFileSync(file, transcript);
    expect((await runCli(["collect", "--root", base, ...flags])).code).toBe(0);
    const store = `file://${join(dir, "fleet")}`;
    expect((await runCli(["push", "--root", base, "--store", store, "--agent", "base"])).code).toBe(0);

    const recvRoot = join(dir, "receiver");
    receiver = spawn(process.execPath, [BIN, "watch", "--root", recvRoot, "--sources-only", "--interval", "3600", "--otlp-listen", "127.0.0.1:0"], { stdio: ["ignore", "pipe", "pipe"] });
    let recvLog = "";
    const url = await new Promise<string>((resolve, reject) => {
      receiver!.stdout!.on("data", (d: Buffer) => {
        recvLog += d.toString();
        const m = /listening on (http:\/\/\S+)\/v1\/metrics/.exec(recvLog);
        if (m) resolve(m[1]!);
      });
      receiver!.on("exit", () => reject(new Error(`receiver exited: ${recvLog}`)));
    });
    const push = (root: string, agent: string, env: NodeJS.ProcessEnv = {}) =>
      runCli(["push", "--root", root, "--metrics-only", "--agent", agent, "--otlp-endpoint", url, "--otlp-header", "x-lake-test=1", "--json"], env);

    // An uninterrupted run, counting its steps.
    const clean = join(dir, "clean");
    cpSync(base, clean, { recursive: true });
    const stepsFile = join(dir, "steps");
    const c = await push(clean, "clean", { LAKE_TEST_STEPS: stepsFile });
    expect(c.code, c.stderr).toBe(0);
    const steps = readFileSync(stepsFile, "utf8").trim().split("\n");
    expect(steps.some((s) => / land:/.test(s))).toBe(true);
    expect(steps.some((s) => / otlp:answered$/.test(s))).toBe(true);
    const cleanSummary = (JSON.parse(c.stdout) as { otlp: { derived: number; sent: number } }).otlp;
    expect(cleanSummary.derived).toBe(2);
    expect(cleanSummary.sent).toBe(cleanSummary.derived);
    const want = received(recvRoot).get("clean")!;
    expect([...want.values()].every((l) => l.length === 1)).toBe(true);
    expect(want.size).toBe(cleanSummary.sent);

    // Each step k on its own copy of the root (agent k<k>, so the receiver tells the runs apart), three at a time.
    const one = async (k: number) => {
      const root = join(dir, `k${k}`);
      cpSync(base, root, { recursive: true });
      const killed = await push(root, `k${k}`, { LAKE_TEST_KILL_AT: String(k) });
      expect(killed.signal, `step ${k} (${steps[k - 1]!}): ${killed.stderr}`).toBe("SIGKILL");
      const again = await push(root, `k${k}`);
      expect(again.code, `rerun after step ${k} (${steps[k - 1]!}): ${again.stderr}`).toBe(0);
      // the receipts are the clean run's, byte for byte
      for (const s of readdirSync(clean).filter((n) => !n.startsWith("_") && !n.includes("."))) {
        for (const r of readdirSync(join(clean, s, "metrics")))
          expect(readFileSync(join(root, s, "metrics", r), "utf8"), `${s}/metrics/${r} after step ${k}`).toBe(readFileSync(join(clean, s, "metrics", r), "utf8"));
      }
    };
    let next = 1;
    await Promise.all([0, 1, 2].map(async () => {
      while (next <= steps.length) await one(next++);
    }));
    // A run with nothing new sends nothing.
    const idle = await push(join(dir, "k1"), "k1");
    expect((JSON.parse(idle.stdout) as { otlp: { sent: number; derived: number } }).otlp).toMatchObject({ sent: 0, derived: 0 });

    const got = received(recvRoot);
    for (let k = 1; k <= steps.length; k++) expect(got.get(`k${k}`), `killed at step ${k} (${steps[k - 1]!})`).toEqual(want);
    // Some kill fell between the receiver's 200 and push.state's save: the re-sent request was spooled once.
    expect(recvLog).toMatch(/spooled before; answered without spooling again/);

    // The points add up to the session totals lake-reader usage reports.
    const usage = JSON.parse(execFileSync(process.execPath, [READER, "usage", "session", "--json", "--root", base, "--store", store], { encoding: "utf8" })) as {
      sessions: { session_id: string; input_tokens: number | null; output_tokens: number | null; cached_input_tokens: number | null }[];
    };
    const sums = new Map<string, number>();
    for (const [key, [points]] of want) {
      const sid = key.split(" ")[0]!;
      for (const p of points!) {
        const m = /^lake\.usage\.tokens (\{.*\}) (-?\d+)$/.exec(p);
        if (!m) continue;
        const type = (JSON.parse(m[1]!) as Record<string, string>)["gen_ai.token.type"]!;
        sums.set(`${sid} ${type}`, (sums.get(`${sid} ${type}`) ?? 0) + Number(m[2]));
      }
    }
    expect(usage.sessions.length).toBe(1);
    for (const s of usage.sessions) {
      expect(sums.get(`${s.session_id} input`)).toBe(s.input_tokens);
      expect(sums.get(`${s.session_id} output`)).toBe(s.output_tokens);
      expect(sums.get(`${s.session_id} cached_input`)).toBe(s.cached_input_tokens);
    }

    // forget --apply takes the session's derived metrics and the receivers' answers for them with it:
    // nothing of it is exported again, the next push derives and sends nothing.
    const sid = usage.sessions[0]!.session_id;
    const f = await runCli(["forget", sid, "--root", clean, "--apply", "--json"]);
    expect(f.code, f.stderr).toBe(0);
    expect((JSON.parse(f.stdout) as { metrics: string[] }).metrics).toHaveLength(cleanSummary.derived);
    expect(listSpool(clean).filter((e) => e.parsed.kind === "local")).toEqual([]);
    expect(readFileSync(join(clean, "_metrics", "metrics.state"), "utf8")).not.toContain(sid);
    expect(readFileSync(join(clean, "push.state"), "utf8")).not.toContain(sid);
    const after = await push(clean, "clean");
    expect((JSON.parse(after.stdout) as { otlp: { sent: number; derived: number } }).otlp).toMatchObject({ sent: 0, derived: 0 });
    receiver.kill("SIGTERM");
  });
});

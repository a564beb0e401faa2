// `lake-collector watch --metrics-port`: Debian's Prometheus, started here on loopback with a short
// scrape interval, scrapes the collector's /metrics; its query API returns, per session and token
// type, the totals `lake-reader usage session --json` reports over the same landed files (pushed).
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { BIN, runCli, vendorTree } from "./helpers.js";

const READER = fileURLToPath(new URL("../../reader/bin/lake-reader.js", import.meta.url));
/** Debian's package installs it here (the test command installs it when missing). */
const PROMETHEUS = process.env.LAKE_TEST_PROMETHEUS ?? "/usr/bin/prometheus";

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  cleanupTempDirs();
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => resolve(typeof a === "object" && a !== null ? a.port : 0));
    });
  });
}

/** Wait for `re` on the child's stdout; its first group. */
function waitFor(proc: ChildProcess, re: RegExp, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    proc.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    proc.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = re.exec(out);
      if (m) resolve(m[1]!);
    });
    proc.on("exit", (code) => reject(new Error(`${what} exited (${String(code)}) before ${String(re)}: ${out}${err}`)));
  });
}

type Vector = { metric: Record<string, string>; value: [number, string] }[];

async function query(base: string, promql: string): Promise<Vector> {
  const res = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await res.json()) as { status: string; data?: { resultType: string; result: Vector } };
  expect(body.status).toBe("success");
  return body.data!.result;
}

const TYPES = { input: "input_tokens", cached_input: "cached_input_tokens", cache_write: "cache_write_tokens", output: "output_tokens", reasoning: "reasoning_tokens" } as const;

describe("watch --metrics-port scraped by Prometheus", { timeout: 120_000 }, () => {
  it("Prometheus's query API returns the token totals lake-reader usage session reports", async () => {
    expect(existsSync(PROMETHEUS), `${PROMETHEUS} is missing: apt-get install -y prometheus (the test command installs it)`).toBe(true);
    const dir = tempDir("lake-prom-");
    const tree = vendorTree(join(dir, "vendor"));
    const root = join(dir, "root");
    const store = `file://${join(dir, "fleet")}`;
    expect((await runCli(["collect", "--root", root, ...tree.flags])).code).toBe(0);
    expect((await runCli(["push", "--root", root, "--store", store])).code).toBe(0);
    const usage = JSON.parse(execFileSync(process.execPath, [READER, "usage", "session", "--json", "--root", root, "--store", store], { encoding: "utf8" })) as {
      sessions: (Record<string, number | null> & { session_id: string })[];
    };
    const want = new Map<string, number>();
    for (const s of usage.sessions)
      for (const [type, key] of Object.entries(TYPES)) {
        const v = s[key];
        if (typeof v === "number") want.set(`${s.session_id} ${type}`, v);
      }
    expect(usage.sessions.length).toBeGreaterThanOrEqual(3);

    const watch = spawn(process.execPath, [BIN, "watch", "--root", root, ...tree.flags, "--interval", "3600", "--metrics-port", "127.0.0.1:0"], { stdio: ["ignore", "pipe", "pipe"] });
    children.push(watch);
    const target = await waitFor(watch, /serving http:\/\/(\S+)\/metrics/, "watch");
    // The first pass derives every landed file; /metrics then has each session.
    await waitFor(watch, /watch (pass) /, "watch");

    const port = await freePort();
    const config = join(dir, "prometheus.yml");
    writeFileSync(config, `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: lake\n    static_configs:\n      - targets: ["${target}"]\n`);
    const prom = spawn(PROMETHEUS, [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, "tsdb")}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"], { stdio: ["ignore", "pipe", "pipe"] });
    children.push(prom);
    const base = `http://127.0.0.1:${port}`;

    let got = new Map<string, number>();
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      try {
        const v = await query(base, "sum by (session_id, gen_ai_token_type) (lake_usage_tokens_total)");
        got = new Map(v.filter((r) => r.metric.gen_ai_token_type! in TYPES).map((r) => [`${r.metric.session_id!} ${r.metric.gen_ai_token_type!}`, Number(r.value[1])]));
        if (got.size >= want.size) break;
      } catch {
        // not up yet
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(got).toEqual(want);
    // The scrape target is healthy and the sessions are counted once each.
    const up = await query(base, 'up{job="lake"}');
    expect(up.map((r) => r.value[1])).toEqual(["1"]);
    const sessions = await query(base, "sum(lake_session_count_total)");
    expect(Number(sessions[0]!.value[1])).toBe(usage.sessions.length);

    prom.kill("SIGTERM");
    watch.kill("SIGTERM");
    await new Promise((r) => watch.once("exit", r));
  });
});

// `lake-reader statusline`: the built bin is fed Claude Code's documented status line JSON on stdin
// (session_id, transcript_path, model.display_name, workspace, cost, context_window) over a local
// root the real lake-collector collected from a Claude Code transcript running right now (real
// fixture lines, moved to the last hour). Its costs are the ones `usage` reports on the same
// records (pushed by the real collector); results are coalesced through its cache.
import { afterAll, describe, expect, it } from "vitest";
import { EXIT } from "@lake/cli";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { claudeFixtureFiles } from "./support/fixtures.js";
import { runJson } from "./support/run.js";
import { main } from "../src/cli.js";

afterAll(cleanupTempDirs);

const READER = fileURLToPath(new URL("../bin/lake-reader.js", import.meta.url));
const COLLECTOR = fileURLToPath(new URL("../../collector/bin/lake-collector.js", import.meta.url));
const SID = "5a1e1b0c-0000-4000-8000-00000000c0de";

/** Real assistant lines with usage from the fixtures, as a session of their own, 50 to 10 minutes ago. */
function liveTranscript(now: number): string {
  const lines: ({ message: Record<string, unknown> } & Record<string, unknown>)[] = [];
  for (const f of claudeFixtureFiles()) {
    for (const l of readFileSync(f, "utf8").split("\n")) {
      if (!l.includes('"usage":{') || !l.includes('"type":"assistant"')) continue;
      const o = JSON.parse(l) as { message: Record<string, unknown> } & Record<string, unknown>;
      if (typeof o.message?.model !== "string" || !String(o.message.model).startsWith("claude-")) continue;
      lines.push(o);
      if (lines.length === 5) break;
    }
    if (lines.length === 5) break;
  }
  return lines
    .map((o, i) => JSON.stringify({ ...o, sessionId: SID, uuid: `00000000-0000-4000-8000-00000000000${i}`, parentUuid: i ? `00000000-0000-4000-8000-00000000000${i - 1}` : null, isSidechain: false, timestamp: new Date(now - (50 - i * 10) * 60_000).toISOString(), requestId: `req_live_${i}`, message: { ...o.message, id: `msg_live_${i}` } }))
    .join("\n") + "\n";
}

/** Claude Code's status line input (the documented fields). */
/** A status line without its block's time left ("(3h58m left)"), which moves with the clock between two runs. */
function withoutLeft(line: string): string {
  return line.replace(/\(\dh\d{2}m left\)/, "(left)");
}

function input(over: Record<string, unknown> = {}): string {
  return JSON.stringify({
    hook_event_name: "Status",
    session_id: SID,
    transcript_path: "/home/dev/.claude/projects/-home-dev-live/x.jsonl",
    cwd: "/home/dev/live",
    model: { id: "claude-opus-4-6", display_name: "Opus 4.6" },
    workspace: { current_dir: "/home/dev/live", project_dir: "/home/dev/live" },
    version: "2.1.3",
    output_style: { name: "default" },
    cost: { total_cost_usd: 9.99, total_duration_ms: 45_000, total_api_duration_ms: 2300, total_lines_added: 156, total_lines_removed: 23 },
    context_window: { total_input_tokens: 15_234, total_output_tokens: 4521, context_window_size: 200_000, current_usage: { input_tokens: 8500, output_tokens: 1200, cache_creation_input_tokens: 5000, cache_read_input_tokens: 2000 } },
    ...over,
  });
}

describe("lake-reader statusline", () => {
  const dir = tempDir("reader-statusline");
  const root = join(dir, "root");
  const cache = join(dir, "cache");
  const store = join(dir, "fleet");
  const env = { PATH: process.env.PATH, HOME: dir, TZ: "UTC", LAKE_ROOT: root, LAKE_READER_CACHE: cache };
  const statusline = (stdin: string, args: string[] = []) => spawnSync(process.execPath, [READER, "statusline", ...args], { input: stdin, encoding: "utf8", env });
  const now = Date.now();

  it("prints the model, this session's, today's and the active block's cost, time left and context used", async () => {
    const src = join(dir, "src");
    mkdirSync(join(src, "-home-dev-live"), { recursive: true });
    writeFileSync(join(src, "-home-dev-live", `${SID}.jsonl`), liveTranscript(now));
    execFileSync(process.execPath, [COLLECTOR, "collect", "--root", root, "--sources-only", "--source", `claude-code=${src}`], { env, stdio: "pipe" });
    const r = statusline(input());
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    // What `usage` says about the same records, pushed to a fleet store by the real collector.
    execFileSync(process.execPath, [COLLECTOR, "push", "--root", root, "--store", pathToFileURL(store).href, "--agent", "host-t", "--seal-idle", "0", "--fleet-id", "f1"], { env, stdio: "pipe" });
    const u = { LAKE_READER_CACHE: join(dir, "cache2") };
    const s = (await runJson<{ sessions: { session_id: string; cost_usd: number }[] }>(["usage", "session", "--json", "--store", store], u)).sessions.find((x) => x.session_id === SID)!;
    // Just after midnight some (or all) of the last hour's records are yesterday's: no row is $0.00.
    const today = (await runJson<{ daily: { date: string; cost_usd: number }[] }>(["usage", "daily", "--json", "--store", store, "--since", "today"], u)).daily[0] ?? { cost_usd: 0 };
    const block = (await runJson<{ blocks: { cost_usd: number; remaining_minutes: number }[] }>(["usage", "blocks", "--active", "--json", "--store", store], u)).blocks[0]!;
    expect(s.cost_usd).toBeGreaterThan(0);
    const left = block.remaining_minutes;
    // ctx: (8500 + 5000 + 2000) / 200 000 = 7.75 % → 8 %.
    const want = `Opus 4.6 · session $${s.cost_usd.toFixed(2)} · today $${today.cost_usd.toFixed(2)} · block $${block.cost_usd.toFixed(2)} (${Math.floor(left / 60)}h`;
    expect(r.stdout.startsWith(want), `${r.stdout} vs ${want}`).toBe(true);
    expect(r.stdout).toMatch(/\(\dh\d{2}m left\) · ctx 8%\n$/);
    expect(r.stdout.split("\n")).toHaveLength(2);
    // used_percentage, when Claude Code gives it, wins.
    expect(statusline(input({ context_window: { used_percentage: 42.4, context_window_size: 200_000 } })).stdout).toMatch(/ · ctx 42%\n$/);
  });

  it("lake-collector hooks install --statusline sets it up: that exact command, run by sh with PATH=/usr/bin:/bin, prints the line", () => {
    const bin = join(dir, "bin");
    mkdirSync(bin);
    symlinkSync(READER, join(bin, "lake-reader")); // on PATH as npm links it
    const settings = join(dir, "claude", "settings.json");
    execFileSync(process.execPath, [COLLECTOR, "hooks", "install", "--statusline", "--settings", settings], { env: { ...env, PATH: `${bin}:${process.env.PATH}` }, stdio: "pipe" });
    const line = (JSON.parse(readFileSync(settings, "utf8")) as { statusLine: { type: string; command: string } }).statusLine;
    expect(line).toEqual({ type: "command", command: `${realpathSync(process.execPath)} ${realpathSync(READER)} statusline` });
    const sh = spawnSync("env", ["-i", "PATH=/usr/bin:/bin", `HOME=${dir}`, "TZ=UTC", `LAKE_ROOT=${root}`, `LAKE_READER_CACHE=${join(dir, "cache3")}`, "sh", "-c", line.command], { input: input(), encoding: "utf8" });
    expect(sh.status, sh.stderr).toBe(0);
    expect(sh.stdout).toMatch(/^Opus 4\.6 · session \$\d+\.\d\d · today \$\d+\.\d\d · block \$\d+\.\d\d \(\dh\d{2}m left\) · ctx 8%\n$/);
    expect(withoutLeft(sh.stdout)).toBe(withoutLeft(statusline(input()).stdout));
  });

  it("starts from its own bundle (nothing of the command line, zod, DuckDB or the pricing data loaded on a cached answer), with the full command's answer", async () => {
    // Every module the bin loads, through a loader hook that appends its URL to a file.
    const loaded = join(dir, "loaded.txt");
    const hook = `data:text/javascript,${encodeURIComponent(`import { appendFileSync } from "node:fs"; export async function load(u, c, n) { appendFileSync(${JSON.stringify(loaded)}, u + "\\n"); return n(u, c); }`)}`;
    const register = `data:text/javascript,${encodeURIComponent(`import { register } from "node:module"; register(${JSON.stringify(hook)});`)}`;
    const traced = (args: string[]) => {
      rmSync(loaded, { force: true });
      const r = spawnSync(process.execPath, ["--import", register, READER, "statusline", ...args], { input: input(), encoding: "utf8", env });
      expect(r.status, r.stderr).toBe(0);
      return { out: r.stdout, modules: readFileSync(loaded, "utf8").split("\n").filter((u) => u.startsWith("file:")) };
    };
    statusline(input()); // the state is there
    const hit = traced(["--ttl", "600000"]);
    expect(hit.out).toMatch(/^Opus 4\.6 · session \$\d+\.\d\d · /);
    // The bin and the statusline's bundle (src/internal/statusline.ts with @lake/layout/defaults): two files.
    expect(hit.modules).toEqual([pathToFileURL(realpathSync(READER)).href, pathToFileURL(realpathSync(join(READER, "../../dist/internal/statusline.bundle.js"))).href]);
    const bundle = readFileSync(join(READER, "../../dist/internal/statusline.bundle.js"), "utf8");
    expect(bundle).not.toMatch(/@lake\/cli|duckdb|genai-prices/);
    // A recomputation over unchanged sessions loads no more.
    expect(traced(["--ttl", "0"]).modules.length).toBe(hit.modules.length);
    // The same line as the full command run in-process (each computing in a cache of its own), in two zones.
    for (const tz of ["UTC", "America/Los_Angeles"]) {
      const fast = statusline(input(), ["--ttl", "0", `--timezone=${tz}`, "--cache", join(dir, `fast-${tz.replace("/", "-")}`)]);
      expect(fast.status, fast.stderr).toBe(0);
      let out = "";
      const code = await main(["statusline", "--ttl", "0", "--timezone", tz, "--cache", join(dir, `full-${tz.replace("/", "-")}`)], { out: (x) => (out += x), err: () => undefined, env, stdin: input });
      expect(code).toBe(EXIT.ok);
      expect(withoutLeft(fast.stdout)).toBe(withoutLeft(out));
      expect(existsSync(join(dir, `fast-${tz.replace("/", "-")}`, "statusline", "state.json"))).toBe(true);
    }
    // The root and cache from the config file (its schema, zod, required from the bundle), as every command takes them.
    const xdg = join(dir, "xdg");
    mkdirSync(join(xdg, "lake"), { recursive: true });
    writeFileSync(join(xdg, "lake", "config.json"), JSON.stringify({ root, reader_cache: join(dir, "cache-config") }));
    const { LAKE_ROOT: _r, LAKE_READER_CACHE: _c, ...bare } = env;
    const configured = spawnSync(process.execPath, [READER, "statusline"], { input: input(), encoding: "utf8", env: { ...bare, XDG_CONFIG_HOME: xdg } });
    expect(configured.status, configured.stderr).toBe(EXIT.ok);
    expect(withoutLeft(configured.stdout)).toBe(withoutLeft(statusline(input()).stdout));
    expect(existsSync(join(dir, "cache-config", "statusline", "state.json"))).toBe(true);
    // A bad config file: the full command's one line, exit 2.
    writeFileSync(join(xdg, "lake", "config.json"), JSON.stringify({ root: "relative/dir" }));
    const bad = spawnSync(process.execPath, [READER, "statusline"], { input: input(), encoding: "utf8", env: { ...bare, XDG_CONFIG_HOME: xdg } });
    expect(bad.status).toBe(EXIT.usage);
    expect(bad.stderr).toMatch(/^lake-reader statusline: .*config\.json: root: expected an absolute path or ~\/…\n$/);
    // Its help is the command line's.
    const help = spawnSync(process.execPath, [READER, "statusline", "--help"], { encoding: "utf8", env, input: "" });
    expect(help.status).toBe(EXIT.ok);
    expect(help.stdout).toMatch(/^lake-reader statusline \[options\]/);
    expect(help.stdout).toContain("--ttl MS");
  });

  it("coalesces: within --ttl nothing is read again, past it nothing rewritten while no session changed; a held lock prints the last result", async () => {
    // Compared without the block's time left, which moves with the clock between two runs.
    const first = withoutLeft(statusline(input()).stdout);
    expect(first).toMatch(/ · block \$\d+\.\d{2} \(left\) · /);
    // Older than the ttl, no session changed: the same answer, and the state is not rewritten.
    const state = readFileSync(join(cache, "statusline", "state.json"), "utf8");
    expect(withoutLeft(statusline(input(), ["--ttl", "0"]).stdout)).toBe(first);
    expect(readFileSync(join(cache, "statusline", "state.json"), "utf8")).toBe(state);
    // A stream directory that changed (as landing a file changes it): that session is read again, the state rewritten.
    const streams = join(root, SID, "streams");
    const stream = join(streams, readdirSync(streams)[0]!);
    utimesSync(stream, new Date(), new Date(now + 1000));
    expect(withoutLeft(statusline(input(), ["--ttl", "0"]).stdout)).toBe(first);
    const again = JSON.parse(readFileSync(join(cache, "statusline", "state.json"), "utf8")) as { sessions: Record<string, { sig: string }> };
    expect(again.sessions[SID]!.sig).not.toBe((JSON.parse(state) as typeof again).sessions[SID]!.sig);
    // The root gone: a result younger than the ttl is still printed as it was.
    rmSync(root, { recursive: true, force: true });
    expect(withoutLeft(statusline(input(), ["--ttl", "600000"]).stdout)).toBe(first);
    // Another process recomputing (its lock held): the last result, not a second computation.
    writeFileSync(join(cache, "statusline", "lock"), `pid ${process.pid}\nhost ${hostname()}\ntoken live\n`);
    expect(withoutLeft(statusline(input(), ["--ttl", "0"]).stdout)).toBe(first);
    // A recomputing process that was killed leaves its lock: the next one proves it dead and recomputes
    // (the session is gone from the root), leaving only its state behind.
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout;
    writeFileSync(join(cache, "statusline", "lock"), `pid ${gone}\nhost ${hostname()}\ntoken dead\n`);
    expect(statusline(input(), ["--ttl", "0"]).stdout).toMatch(/^Opus 4\.6 · session – · today \$0\.00 · no active block · ctx 8%\n$/);
    expect(readdirSync(join(cache, "statusline"))).toEqual(["state.json"]);
  });

  it("bad input: one line on stderr, exit 6; bad options and an unknown zone exit 2", () => {
    const r = statusline("not json");
    expect(r.status).toBe(EXIT.corrupt);
    expect(r.stderr).toMatch(/^lake-reader statusline: stdin: not Claude Code's status line JSON \(.*\)\n$/);
    const t = statusline(input(), ["--ttl", "soon"]);
    expect(t.status).toBe(EXIT.usage);
    expect(t.stderr).toMatch(/^lake-reader statusline: --ttl "soon": expected a whole number\n$/);
    const z = statusline(input(), ["--timezone", "Mars/Olympus"]);
    expect(z.status).toBe(EXIT.usage);
    expect(z.stderr).toMatch(/^lake-reader statusline: --timezone "Mars\/Olympus": not an IANA time zone/);
    expect(z.stderr.split("\n")).toHaveLength(2);
    expect(statusline(input(), ["--colour"]).status).toBe(EXIT.usage);
    // An array is JSON, but not the status line's object.
    const a = statusline("[1]");
    expect(a.status).toBe(EXIT.corrupt);
    expect(a.stderr).toBe("lake-reader statusline: stdin: not Claude Code's status line JSON (not an object)\n");
  });
});

// `lake-reader serve` on the fixtures: start-up (spawn to "listening", goal < 1 s) and the API calls
// of the pages, warm (goal < 200 ms), over the fleet the browser tests use (the Claude Code
// fixtures and the Codex/Gemini samples, collected and pushed by the built lake-collector,
// compacted by lake-maint; building it is not timed). Baselines, measured in the same run: for
// start-up, `lake-reader --help` (Node's start and the CLI's module load); for each API call, the
// CLI command that prints the same JSON as a whole process (for /api/responses, `usage session
// --json`, the command that counts and prices the same responses). A page's conversation is kept
// once folded (until its chain changes), so the first /api/show of a fresh server is timed too.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { request } from "node:http";
import { line, measure, report } from "@lake/tooling/bench";
import { tempDir } from "@lake/tooling/tmp";
import { buildServedFleet, FIXTURE_SESSION, READER, startServe } from "../test/support/served.js";

const dir = tempDir("reader-serve-bench");

function get(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      let n = 0;
      res.on("data", (c: Buffer) => (n += c.length));
      res.on("end", () => (res.statusCode === 200 ? resolve(n) : reject(new Error(`${url}: ${res.statusCode}`))));
    });
    req.on("error", reject);
    req.end();
  });
}

try {
  const fleet = await buildServedFleet(dir);
  const env = { PATH: process.env.PATH, ...fleet.env };
  const cli = (args: readonly string[]) => execFileSync(process.execPath, [READER, ...args, ...fleet.args], { encoding: "utf8", env, maxBuffer: 64 << 20 });
  const help = await measure("lake-reader --help (process start)", () => execFileSync(process.execPath, [READER, "--help"], { env }), { runs: 7 });
  // Timed from spawn to the "listening" line (stopping it is not part of start-up).
  const starts: number[] = [];
  for (let i = 0; i < 8; i++) {
    const s = await startServe(fleet.args, fleet.env);
    if (i > 0) starts.push(s.startMs);
    await s.stop();
  }
  starts.sort((a, b) => a - b);
  const start = { name: "lake-reader serve: spawn to listening", medianMs: (starts[3]! + starts[4]!) / 2, runs: starts.length };
  report("serve start-up (goal < 1 s)", help, [start], [`serve start-up median: ${start.medianMs.toFixed(0)} ms`]);

  const s = await startServe(fleet.args, fleet.env);
  try {
    const calls: [string, string, readonly string[]][] = [
      ["overview: /api/usage/daily?by=model", "api/usage/daily?by=model", ["usage", "daily", "--json", "--by", "model"]],
      ["sessions: /api/sessions", "api/sessions", ["sessions", "--json"]],
      ["session: /api/show/<fixture session>", `api/show/${FIXTURE_SESSION}`, ["show", FIXTURE_SESSION, "--json"]],
      ["session from events: /api/show/<fixture session>?from=events", `api/show/${FIXTURE_SESSION}?from=events`, ["show", FIXTURE_SESSION, "--from", "events", "--json"]],
      ["session usage: /api/responses/<fixture session>", `api/responses/${FIXTURE_SESSION}`, ["usage", "session", "--json"]],
      ["search: /api/search?q=marot", "api/search?q=marot", ["search", "marot", "--json"]],
    ];
    for (const [label, path, args] of calls) {
      const url = new URL(path, s.url).href;
      const bytes = await get(url);
      const api = await measure(label, () => get(url), { runs: 9, warmup: 2 });
      const whole = await measure(`lake-reader ${args.filter((a) => a !== "--json").slice(0, 2).join(" ")} --json (whole process)`, () => cli(args), { runs: 3, warmup: 1 });
      report(`${label} (goal < 200 ms)`, whole, [api], [`${label}: median ${api.medianMs.toFixed(1)} ms, ${bytes} bytes`]);
    }
  } finally {
    await s.stop();
  }

  // The first open of a session page: a fresh server that has answered the Overview (its read
  // model open), then its first /api/show (nothing kept yet: the fold from the round chain and its
  // landed files), timed from the request to the last byte.
  const firsts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const f = await startServe(fleet.args, fleet.env);
    try {
      await get(new URL("api/usage/daily?by=model", f.url).href);
      const t0 = performance.now();
      await get(new URL(`api/show/${FIXTURE_SESSION}`, f.url).href);
      firsts.push(performance.now() - t0);
    } finally {
      await f.stop();
    }
  }
  firsts.sort((a, b) => a - b);
  const show = await measure("lake-reader show <fixture session> --json (whole process)", () => cli(["show", FIXTURE_SESSION, "--json"]), { runs: 3, warmup: 1 });
  const first = { name: "session, first call of a fresh server: /api/show/<fixture session>", medianMs: firsts[1]!, runs: firsts.length };
  report("session page, first open (goal < 200 ms)", show, [first], [`first /api/show median: ${first.medianMs.toFixed(1)} ms`]);
  line("fleet", fleet.store);
} finally {
  if (!process.env.LAKE_KEEP_TMP) rmSync(dir, { recursive: true, force: true });
}

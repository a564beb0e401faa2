// `lake-reader serve` on the fixtures: start-up (spawn to "listening", goal < 1 s; spawn to
// "ready", when what the first pages ask for is built) and every page's API calls (goal < 200 ms
// each), over the fleet the browser tests use (the Claude Code fixtures and the Codex/Gemini
// samples, collected and pushed by the built lake-collector, compacted by lake-maint; building it
// is not timed). Baselines, measured in the same run: for start-up, `lake-reader --help` (Node's
// start and the CLI's module load); for the API calls, the UI's script bundle from the same server
// (a static file: the server's own floor — the HTTP round trip, the Host and token checks). Each
// page's calls are timed one by one (warm: medians), then all of a page's calls at once, as the
// page makes them (until the last answer); and the first calls of a fresh server, at once after
// "listening" and after "ready".
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { request } from "node:http";
import { line, measure, report, type Sample } from "@lake/tooling/bench";
import { tempDir } from "@lake/tooling/tmp";
import { buildServedFleet, FIXTURE_SESSION, READER, startServe, type Served } from "../test/support/served.js";

const dir = tempDir("reader-serve-bench");

function get(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: ${res.statusCode} ${body.slice(0, 200)}`))));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Each page's API calls, as web/src/pages makes them (the server's zone: no ?timezone=). */
const PAGES: readonly [page: string, calls: readonly string[]][] = [
  ["overview", ["api/usage/daily", "api/usage/daily?by=model", "api/usage/session", "api/usage/blocks"]],
  ["overview, another zone", ["api/usage/daily?timezone=Asia%2FTokyo", "api/usage/daily?by=model&timezone=Asia%2FTokyo", "api/usage/session?timezone=Asia%2FTokyo", "api/usage/blocks?timezone=Asia%2FTokyo"]],
  ["sessions", ["api/sessions", "api/usage/session"]],
  ["session", [`api/show/${FIXTURE_SESSION}`, `api/responses/${FIXTURE_SESSION}`]],
  ["search", ["api/search?q=marot&limit=50"]],
  ["fleet", ["api/fleet"]],
];

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** A page's calls at once: milliseconds until the last answer. */
async function pageLoad(s: Served, calls: readonly string[]): Promise<number> {
  const t0 = performance.now();
  await Promise.all(calls.map((c) => get(new URL(c, s.url).href)));
  return performance.now() - t0;
}

try {
  const fleet = await buildServedFleet(dir);
  const env = { PATH: process.env.PATH, ...fleet.env };
  const help = await measure("lake-reader --help (process start)", () => execFileSync(process.execPath, [READER, "--help"], { env }), { runs: 7 });
  // Timed from spawn to the "listening" line, and to the "ready" line (stopping is not part of it).
  const starts: number[] = [];
  const readies: number[] = [];
  for (let i = 0; i < 6; i++) {
    const s = await startServe(fleet.args, fleet.env);
    const ready = await s.ready;
    if (i > 0) {
      starts.push(s.startMs);
      readies.push(ready);
    }
    await s.stop();
  }
  const start: Sample = { name: "lake-reader serve: spawn to listening", medianMs: median(starts), runs: starts.length };
  const ready: Sample = { name: "lake-reader serve: spawn to ready", medianMs: median(readies), runs: readies.length };
  report("serve start-up (goal < 1 s to listening)", help, [start, ready], [`serve start-up median: ${start.medianMs.toFixed(0)} ms (ready: ${ready.medianMs.toFixed(0)} ms)`]);

  const s = await startServe(fleet.args, fleet.env);
  try {
    await s.ready;
    const index = await get(s.url);
    const script = /src="\/(assets\/[^"]+\.js)"/.exec(index)?.[1];
    if (!script) throw new Error(`${s.url}: no script in the page`);
    const staticUrl = new URL(script, s.url).href;
    const floor = await measure(`static file: /${script.replace(/-[^.]+/, "-…")}`, () => get(staticUrl), { runs: 15, warmup: 3 });
    const slowest: [string, number][] = [];
    for (const [page, calls] of PAGES) {
      const samples: Sample[] = [];
      const notes: string[] = [];
      for (const c of calls) {
        const url = new URL(c, s.url).href;
        const bytes = (await get(url)).length;
        const one = await measure(`/${c}`, () => get(url), { runs: 9, warmup: 2 });
        samples.push(one);
        notes.push(`/${c}: median ${one.medianMs.toFixed(1)} ms, ${bytes} bytes`);
        slowest.push([`${page}: /${c}`, one.medianMs]);
      }
      if (calls.length > 1) {
        const loads: number[] = [];
        for (let i = 0; i < 9; i++) loads.push(await pageLoad(s, calls));
        const all: Sample = { name: `all ${calls.length} at once (the page's load)`, medianMs: median(loads), runs: loads.length };
        samples.push(all);
        notes.push(`${page} page, its ${calls.length} calls at once: median ${all.medianMs.toFixed(1)} ms`);
      }
      report(`${page} page: its API calls (goal < 200 ms each)`, floor, samples, notes);
    }
    slowest.sort((a, b) => b[1] - a[1]);
    line("slowest page call (warm median)", `${slowest[0]![0]} ${slowest[0]![1].toFixed(1)} ms`);
  } finally {
    await s.stop();
  }

  // A fresh server: each page's calls at once, the moment it listens (what the first page waits
  // for while the server builds it: a server per page), and each page's first calls once it is ready
  // (one server, the pages in turn).
  const first = new Map<string, { atOnce: number[]; afterReady: number[] }>(PAGES.map(([p]) => [p, { atOnce: [], afterReady: [] }]));
  for (let i = 0; i < 2; i++) {
    for (const [page, calls] of PAGES) {
      const f = await startServe(fleet.args, fleet.env);
      try {
        first.get(page)!.atOnce.push(await pageLoad(f, calls));
      } finally {
        await f.stop();
      }
    }
    const f = await startServe(fleet.args, fleet.env);
    try {
      await f.ready;
      for (const [page, calls] of PAGES) first.get(page)!.afterReady.push(await pageLoad(f, calls));
    } finally {
      await f.stop();
    }
  }
  const fresh: Sample[] = [];
  for (const [page, e] of first) {
    fresh.push({ name: `${page}: its calls on a fresh server, at once after listening`, medianMs: median(e.atOnce), runs: e.atOnce.length });
    fresh.push({ name: `${page}: its calls on a fresh server, after ready`, medianMs: median(e.afterReady), runs: e.afterReady.length });
  }
  report("a fresh server's first page load (until its last call answers)", start, fresh);
  line("fleet", fleet.store);
} finally {
  if (!process.env.LAKE_KEEP_TMP) rmSync(dir, { recursive: true, force: true });
}

// `lake-reader statusline` against `node -e 0` (the floor any Node program pays), whole process
// runs, measured in turns (one run of each case per round, 15 rounds after 2 unmeasured) so the
// machine's load weighs on all alike. The local root is collected by the real lake-collector from
// the Claude Code fixtures (not timed). Warm: a result younger than --ttl (what a status line
// refreshing every second mostly meets), and a look past --ttl at unchanged sessions (--ttl 0:
// directory stats, nothing read or written; the steady state's other half). Cold: the statusline cache
// removed before each run, so the current session is read and priced. For comparison, the
// warm case through the full command line (what every run loaded before the bin gave statusline
// an entry of its own) and through the entry's module unbundled (dist/internal/statusline.js); and warm
// with the root and cache named by a config file (read on every run). Goal: warm ≤ 2× node -e 0.
// Needs the built bins (turbo's bench task builds first).
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { line, measureRounds, report } from "@lake/tooling/bench";
import { tempDir } from "@lake/tooling/tmp";
import { copyFixture } from "@lake/testdata";

const dir = tempDir("reader-statusline-bench");
const bin = fileURLToPath(new URL("../bin/lake-reader.js", import.meta.url));
const collector = fileURLToPath(new URL("../../collector/bin/lake-collector.js", import.meta.url));
const root = join(dir, "root");
const cache = join(dir, "cache");
const env = { PATH: process.env.PATH, HOME: dir, TZ: "UTC", LAKE_ROOT: root, LAKE_READER_CACHE: cache };
// The same root and cache named by a config file instead, as a user who wrote one has them: read on every run.
const configEnv = { PATH: process.env.PATH, HOME: dir, TZ: "UTC", XDG_CONFIG_HOME: join(dir, "xdg") };
const input = JSON.stringify({
  session_id: "258c7280-ae70-4798-800f-63464d01a85d",
  transcript_path: "/x.jsonl",
  model: { id: "claude-opus-4-6", display_name: "Opus 4.6" },
  workspace: { current_dir: "/w", project_dir: "/w" },
  cost: { total_cost_usd: 1 },
  context_window: { context_window_size: 200_000, used_percentage: 12 },
});

try {
  copyFixture("claude-code", join(dir, "src"));
  execFileSync(process.execPath, [collector, "collect", "--root", root, "--sources-only", "--source", `claude-code=${join(dir, "src")}`], { env, stdio: "pipe" });
  mkdirSync(join(dir, "xdg", "lake"), { recursive: true });
  writeFileSync(join(dir, "xdg", "lake", "config.json"), JSON.stringify({ root, reader_cache: cache }));
  const run = (args: string[], runEnv: NodeJS.ProcessEnv = env) => execFileSync(process.execPath, [bin, "statusline", ...args], { input, encoding: "utf8", env: runEnv });
  line("line", run([]).trim());
  const cli = pathToFileURL(fileURLToPath(new URL("../dist/cli.js", import.meta.url))).href;
  const fullCli = `const { main } = await import(${JSON.stringify(cli)}); process.exitCode = await main(process.argv.slice(1));`;
  const module = pathToFileURL(fileURLToPath(new URL("../dist/internal/statusline.js", import.meta.url))).href;
  const unbundled = `const { runStatusline } = await import(${JSON.stringify(module)}); process.exitCode = await runStatusline(process.argv.slice(1));`;
  const [node, hit, configured, stat, cold, full, loose] = await measureRounds(
    [
      { name: "node -e 0", fn: () => execFileSync(process.execPath, ["-e", "0"], { env }) },
      { name: "warm: cached, within --ttl", fn: () => run(["--ttl", "600000"]) },
      { name: "warm: cached, root and cache from a config file", fn: () => run(["--ttl", "600000"], configEnv) },
      { name: "warm: past --ttl, sessions unchanged (--ttl 0)", fn: () => run(["--ttl", "0"]) },
      { name: "cold: no cache, the session read and priced", before: () => rmSync(join(cache, "statusline"), { recursive: true, force: true }), fn: () => run(["--ttl", "0"]) },
      {
        name: "warm, cached, through the full command line",
        fn: () => execFileSync(process.execPath, ["--input-type=module", "-e", fullCli, "statusline", "--ttl", "600000"], { input, encoding: "utf8", env }),
      },
      {
        name: "warm, cached, its module unbundled",
        fn: () => execFileSync(process.execPath, ["--input-type=module", "-e", unbundled, "statusline", "--ttl", "600000"], { input, encoding: "utf8", env }),
      },
    ],
    { runs: 15, warmup: 2 },
  );
  for (const s of [hit!, configured!, stat!, cold!, full!, loose!]) line(`${s.name} / node -e 0`, `${(s.medianMs / node!.medianMs).toFixed(2)}x`);
  line("goal", "warm <= 2x node -e 0 (both warm cases); cold is reported, not a goal");
  report("lake-reader statusline vs node -e 0, whole process runs (medians of 15, in turns)", node!, [hit!, configured!, stat!, cold!, full!, loose!]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// `lake-reader statusline` against `node -e 0` (the floor any Node program pays), whole process
// runs, one after the other in the same run. The local root is collected by the real
// lake-collector from the Claude Code fixtures (not timed). Three cases: a result younger than
// --ttl (what a status line refreshing every second mostly meets), a recomputation over unchanged
// sessions (--ttl 0: directory stats, no file read), and a cold cache (every session read and
// priced). Goal: the first ≤ 2× node -e 0. Needs the built bins (turbo's bench task builds first).
import { execFileSync } from "node:child_process";
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { line, measure, report } from "@lake/tooling/bench";
import { tempDir } from "@lake/tooling/tmp";

const dir = tempDir("reader-statusline-bench");
const bin = fileURLToPath(new URL("../bin/lake-reader.js", import.meta.url));
const collector = fileURLToPath(new URL("../../collector/bin/lake-collector.js", import.meta.url));
const fixtures = fileURLToPath(new URL("../test/fixtures/claude-code", import.meta.url));
const root = join(dir, "root");
const cache = join(dir, "cache");
const env = { PATH: process.env.PATH, HOME: dir, TZ: "UTC", LAKE_ROOT: root, LAKE_READER_CACHE: cache };
const input = JSON.stringify({
  session_id: "258c7280-ae70-4798-800f-63464d01a85d",
  transcript_path: "/x.jsonl",
  model: { id: "claude-opus-4-6", display_name: "Opus 4.6" },
  workspace: { current_dir: "/w", project_dir: "/w" },
  cost: { total_cost_usd: 1 },
  context_window: { context_window_size: 200_000, used_percentage: 12 },
});

try {
  cpSync(fixtures, join(dir, "src"), { recursive: true });
  execFileSync(process.execPath, [collector, "collect", "--root", root, "--sources-only", "--source", `claude-code=${join(dir, "src")}`], { env, stdio: "pipe" });
  const run = (args: string[]) => execFileSync(process.execPath, [bin, "statusline", ...args], { input, encoding: "utf8", env });
  line("line", run([]).trim());
  const runs = { runs: 15, warmup: 2 };
  const node = await measure("node -e 0", () => execFileSync(process.execPath, ["-e", "0"], { env }), runs);
  const hit = await measure("statusline (cached, within --ttl)", () => run(["--ttl", "600000"]), runs);
  const stat = await measure("statusline (recomputed, sessions unchanged)", () => run(["--ttl", "0"]), runs);
  const cold = await measure(
    "statusline (cold cache: every session read)",
    () => {
      rmSync(join(cache, "statusline"), { recursive: true, force: true });
      run(["--ttl", "0"]);
    },
    { runs: 5, warmup: 1 },
  );
  for (const s of [hit, stat, cold]) line(`${s.name} / node -e 0`, `${(s.medianMs / node.medianMs).toFixed(2)}x (goal for the cached case: <= 2x)`);
  report("lake-reader statusline vs node -e 0, whole process runs", node, [hit, stat, cold]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

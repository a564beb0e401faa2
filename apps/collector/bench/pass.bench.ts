// lake-collector bench: passes that cost what changed. Over 1,000 collected Claude Code sessions
// (the real tool_heavy sample, fresh ids): a `collect` and a `push` that find nothing new, and
// `collect` and `push` after appending to 10 of them (each half, and their sum), and the no-op pair
// with the root and store from a config file, each against `node -e 0` measured in the same run, in
// turns (the goals: ≤ 3× and ≤ 8×). The built bin runs as a child process each time
// (`pnpm turbo run build --filter=lake-collector...`). Every process runs without NODE_EXTRA_CA_CERTS
// (startupEnv: it slowed `node -e 0` alone).
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { line, measure, measureRounds, report, scale, startupEnv } from "@lake/tooling/bench";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { BIN, claudeSessions, userLine } from "../test/helpers.js";

function collector(args: string[], env: NodeJS.ProcessEnv): string {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env: { ...startupEnv(), ...env }, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`lake-collector ${args[0]} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

try {
  const dir = tempDir("pass-bench");
  const n = Math.max(10, Math.round(1000 * scale()));
  const { projects, files, ids } = claudeSessions(join(dir, "vendor"), n, 11);
  const root = join(dir, "root");
  const store = `file://${join(dir, "fleet")}`;
  const env = { HOME: join(dir, "home") };
  const flags = ["--root", root, "--sources-only", "--source", `claude-code=${projects}`];
  // The same passes with the root and the store named by a config file, as a user who wrote one runs
  // them (no --root or --store): the file is read and checked on every run.
  const configEnv = { ...env, XDG_CONFIG_HOME: join(dir, "xdg") };
  mkdirSync(join(dir, "xdg", "lake"), { recursive: true });
  writeFileSync(join(dir, "xdg", "lake", "config.json"), JSON.stringify({ root, store }));
  line("corpus", `${n} sessions (tool_heavy.jsonl, fresh ids)`);
  collector(["collect", ...flags, "--json"], env);
  collector(["push", "--root", root, "--store", store, "--json"], env);
  // The setup wrote some 20,000 files: their write-back is let finish before anything is timed
  // (an fsync meanwhile waits on it), as it has long finished before a collector's everyday pass.
  spawnSync("sync");

  // In turns (one run of each subject per round), so a machine whose load changes slows all alike:
  // node -e 0, a no-op collect and push, then collect and push after appending to 10 sessions.
  let round = 0;
  let noopOut: { unchanged_sessions: number } = { unchanged_sessions: 0 };
  let incOut: { landed_files: number; unchanged_sessions: number } = { landed_files: 0, unchanged_sessions: 0 };
  const append = () => {
    round++;
    for (let i = 0; i < 10; i++) {
      const k = (i * Math.floor(n / 10) + round) % n;
      appendFileSync(files[k]!, userLine(ids[k]!, round * 100 + i, `appended in round ${round}`));
    }
  };
  const push = () => collector(["push", "--root", root, "--store", store, "--json"], env);
  const [node0, noop, noopPush, incCollect, incPush, noopConfig, noopPushConfig] = await measureRounds(
    [
      { name: "node -e 0", fn: () => spawnSync(process.execPath, ["-e", "0"], { env: startupEnv() }) },
      { name: "collect, nothing new", fn: () => (noopOut = JSON.parse(collector(["collect", ...flags, "--json"], env))) },
      { name: "push, nothing new", fn: push },
      { name: `collect after appending to 10 of ${n}`, before: append, fn: () => (incOut = JSON.parse(collector(["collect", ...flags, "--json"], env))) },
      { name: "push after it", fn: push },
      { name: "collect, nothing new, root from a config file", fn: () => collector(["collect", ...flags.slice(2), "--json"], configEnv) },
      { name: "push, nothing new, root and store from a config file", fn: () => collector(["push", "--json"], configEnv) },
    ],
    // Eleven rounds: a median of five moved by a tenth from run to run on this machine.
    { runs: 11, warmup: 1 },
  );
  const inc = { name: `collect + push after appending to 10 of ${n} (sum of medians)`, medianMs: incCollect!.medianMs + incPush!.medianMs, runs: incCollect!.runs };
  report("passes over unchanged sessions (ratio: node -e 0 time / subject time; goals ≥ 0.33x no-op, ≥ 0.125x 10-of-1000)", node0!, [noop!, noopPush!, incCollect!, incPush!, inc, noopConfig!, noopPushConfig!], [
    `no-op collect: ${noopOut.unchanged_sessions} of ${n} sessions unchanged by their cursors = ${(noop!.medianMs / node0!.medianMs).toFixed(1)}x node -e 0 (goal ≤ 3x)`,
    `no-op push = ${(noopPush!.medianMs / node0!.medianMs).toFixed(1)}x node -e 0 (goal ≤ 3x)`,
    `10 of ${n}: ${incOut.landed_files} files landed, ${incOut.unchanged_sessions} sessions unchanged; collect = ${(incCollect!.medianMs / node0!.medianMs).toFixed(1)}x, push = ${(incPush!.medianMs / node0!.medianMs).toFixed(1)}x, collect + push = ${(inc.medianMs / node0!.medianMs).toFixed(1)}x node -e 0 (goal ≤ 8x)`,
    `with a config file instead of flags: no-op collect = ${(noopConfig!.medianMs / node0!.medianMs).toFixed(1)}x, no-op push = ${(noopPushConfig!.medianMs / node0!.medianMs).toFixed(1)}x node -e 0`,
  ]);

  // A push that seals every session (all idle; nothing new to send): the first push after a quiet day.
  let sealedOut: { sealed: number } = { sealed: 0 };
  const sealAll = await measure(`push sealing ${n} idle sessions (--seal-idle 0)`, () => (sealedOut = JSON.parse(collector(["push", "--root", root, "--store", store, "--seal-idle", "0", "--json"], env))), { runs: 1, warmup: 0 });
  report("a push that only seals (ratio: no-op push time / subject time)", noopPush!, [sealAll], [`${sealedOut.sealed} sessions sealed: ${(sealAll.medianMs / sealedOut.sealed || 0).toFixed(2)} ms per session`]);
} finally {
  cleanupTempDirs();
}

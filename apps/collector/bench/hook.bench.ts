// lake-collector bench: `lake-collector hook` (one PostToolUse event appended to the spool, fsynced)
// against `node -e 0`, the floor of any node program, in the same run; and, for scale, node loading
// the whole @lake/wal (its record schemas are zod) without writing anything. The hook imports
// @lake/wal/writer, which loads no schema for the spool's records. Goal: hook ≤ 1.5× node -e 0.
// And the hook on a session whose spool already holds some 8 MB of events (a long session): it goes
// on from the spool's tail cache, so it takes what it takes on an empty spool. And a 20 KB event, and
// the hook as `hooks install` runs it (no --root: the root from a config file).
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { line, measure, report, startupEnv, type Sample } from "@lake/tooling/bench";
import { WalWriter } from "@lake/wal/writer";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { BIN } from "../test/helpers.js";

const WAL = fileURLToPath(new URL("../../../packages/wal/dist/index.js", import.meta.url));

try {
  const root = join(tempDir("hook-bench"), "root");
  const event = JSON.stringify({
    session_id: "3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b",
    transcript_path: "/home/dev/.claude/projects/-home-dev-p/3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b.jsonl",
    cwd: "/home/dev/p",
    permission_mode: "default",
    hook_event_name: "PostToolUse",
    tool_name: "Bash",
    tool_input: { command: "ls -la src", description: "List the source directory" },
    tool_response: { stdout: "total 8\ndrwxr-xr-x 2 dev dev 4096 cli.ts\n".repeat(20), stderr: "", interrupted: false, isImage: false },
  });
  // Every process without NODE_EXTRA_CA_CERTS (startupEnv: it slowed `node -e 0` alone).
  const env = startupEnv();
  // A large event too (a tool result of 20 KB, as a file read gives): past 4 KiB the frame's digest is
  // node:crypto's, loaded for it (@lake/wal "The writer"); the event above is 1.3 KB.
  const large = JSON.stringify({ ...JSON.parse(event), session_id: "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f", tool_response: { stdout: "export function f() { return 1; }\n".repeat(600), stderr: "", interrupted: false, isImage: false } });
  const hookRun = (at: string, input = event) => () => {
    const r = spawnSync(process.execPath, [BIN, "hook", "--root", at], { input, env });
    if (r.status !== 0) throw new Error(`lake-collector hook exited ${r.status}: ${String(r.stderr)}`);
  };
  // And as `hooks install` runs it, without --root: the root from the environment or, here, a config file.
  const home = tempDir("hook-bench-home");
  mkdirSync(join(home, ".config", "lake"), { recursive: true });
  writeFileSync(join(home, ".config", "lake", "config.json"), JSON.stringify({ root: join(home, "root"), store: "s3://team-bucket/lake" }));
  const configured = () => {
    const r = spawnSync(process.execPath, [BIN, "hook"], { input: event, env: { ...env, HOME: home, XDG_CONFIG_HOME: "", LAKE_ROOT: "" } });
    if (r.status !== 0) throw new Error(`lake-collector hook exited ${r.status}: ${String(r.stderr)}`);
  };
  // The long session's spool: events like this one appended by @lake/wal's writer, as the hook writes them.
  const long = join(tempDir("hook-bench-long"), "root");
  const spool = join(long, "_hooks", "spool");
  const w = await WalWriter.open(join(spool, `${JSON.parse(event).session_id}.wal`), { fsync: "manual", featureFloorPath: join(spool, "wal-feature-floor") });
  while (w.size < 8 * 1024 * 1024) await w.append({ type: "lake_hook_event", received_at: new Date().toISOString(), payload: JSON.parse(event) });
  await w.sync();
  await w.close();
  line("long session's spool", `${(w.size / 1e6).toFixed(1)} MB, ${w.lastSeq} events`);
  const subjects: [string, () => unknown][] = [
    ["node -e 0", () => spawnSync(process.execPath, ["-e", "0"], { env })],
    ["lake-collector hook", hookRun(root)],
    ["lake-collector hook, 8 MB spool", hookRun(long)],
    ["lake-collector hook, a 20 KB event", hookRun(root, large)],
    ["lake-collector hook, root from a config file", configured],
    ["node importing all of @lake/wal (zod schemas)", () => spawnSync(process.execPath, ["--input-type=module", "-e", `await import(${JSON.stringify(WAL)})`], { env })],
  ];
  // Rounds interleave the subjects, so a change of machine load shifts them alike.
  const rounds = 31;
  const times = subjects.map(() => [] as number[]);
  for (const [, fn] of subjects) fn(); // warm the file cache
  for (let r = 0; r < rounds; r++) {
    for (const [i, [name, fn]] of subjects.entries()) times[i]!.push((await measure(name, fn, { runs: 1, warmup: 0 })).medianMs);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const [node0, hook, longHook, largeHook, configHook, wal] = subjects.map(([name], i): Sample => ({ name, medianMs: median(times[i]!), runs: rounds }));
  report(`hook latency (median of ${rounds} interleaved rounds)`, node0!, [hook!, longHook!, largeHook!, configHook!, wal!], ["ratio < 1: slower than a bare node start by 1/ratio"]);
  line("hook / node -e 0", `${(hook!.medianMs / node0!.medianMs).toFixed(2)}x (goal ≤ 1.5x)`);
  line("hook on the 8 MB spool / hook on a new one", `${(longHook!.medianMs / hook!.medianMs).toFixed(2)}x`);
  line("hook of a 20 KB event / node -e 0", `${(largeHook!.medianMs / node0!.medianMs).toFixed(2)}x`);
  line("hook, root from a config file / node -e 0", `${(configHook!.medianMs / node0!.medianMs).toFixed(2)}x`);
  line("hook over a bare node start", `${(hook!.medianMs - node0!.medianMs).toFixed(1)} ms`);
} finally {
  cleanupTempDirs();
}

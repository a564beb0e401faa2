// The one crash-step hook. Every durable step calls `step?.(name)` before it acts; a crash test
// passes a hook that kills the process at one of them. Apps that run as real processes in crash
// tests take the hook from the environment (`envStepHook`):
//   LAKE_TEST_KILL_AT=N      SIGKILL at the N-th step this process reaches (1-based)
//   LAKE_TEST_KILL_AT=name   SIGKILL at the first step called `name`
//   LAKE_TEST_STEPS=FILE     append `<n> <name>` for every step reached (to count a run's steps)
//   LAKE_TEST_STEP_DELAY_MS=MS  stall the whole process MS ms at every step (a test that signals it
//                            from outside at some step is never outrun by a fast machine)
// Without any of them `envStepHook()` is undefined and nothing is called.
import { appendFileSync } from "node:fs";

/** Called before every durable step (`label:what`); a crash test kills the process in it. */
export type StepHook = (step: string) => void;

/** Kill this process with SIGKILL now: a real crash (no exit handlers, no flushing, no cleanup). */
export function crashNow(): never {
  process.kill(process.pid, "SIGKILL");
  // SIGKILL is delivered before the next instruction returns to user code on Linux and macOS;
  // stay here until it is, so nothing after a crash point ever runs.
  for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
}

/**
 * The hook `LAKE_TEST_KILL_AT` / `LAKE_TEST_STEPS` / `LAKE_TEST_STEP_DELAY_MS` describe, or undefined when none is set (read
 * from `env` once per call; a process calls this once at start-up).
 */
export function envStepHook(env: NodeJS.ProcessEnv = process.env): StepHook | undefined {
  const killAt = env.LAKE_TEST_KILL_AT === "0" ? "" : (env.LAKE_TEST_KILL_AT ?? "");
  const stepsFile = env.LAKE_TEST_STEPS;
  const delayMs = Number(env.LAKE_TEST_STEP_DELAY_MS ?? "0");
  if (killAt === "" && !stepsFile && !(delayMs > 0)) return undefined;
  const atCount = /^\d+$/.test(killAt) ? Number(killAt) : 0;
  const atName = atCount === 0 && killAt !== "" ? killAt : undefined;
  let count = 0;
  return (name: string) => {
    count++;
    if (stepsFile) appendFileSync(stepsFile, `${count} ${name}\n`);
    if (count === atCount || name === atName) crashNow();
    if (delayMs > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, delayMs);
  };
}

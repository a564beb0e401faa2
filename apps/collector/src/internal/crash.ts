// Crash-test hook. With LAKE_TEST_KILL_AT=N in the environment, the process SIGKILLs itself when it
// reaches its N-th durable step (store landing/cursor steps, chain publication steps, push steps),
// so tests can stop a real collector at every point it reaches. LAKE_TEST_STEPS=FILE appends each
// step's name to FILE (to count the steps of a run). LAKE_TEST_STEP_DELAY_MS=MS stalls the process
// for MS ms at every step, so a test that signals it from outside at some step is never outrun by a
// fast machine. Without any of these variables this does nothing.
import { appendFileSync } from "node:fs";

const killAt = Number(process.env.LAKE_TEST_KILL_AT ?? "0");
const stepsFile = process.env.LAKE_TEST_STEPS;
const delayMs = Number(process.env.LAKE_TEST_STEP_DELAY_MS ?? "0");
let count = 0;

/** Record reaching a durable step; the crash hook may kill the process here. */
export function step(name: string): void {
  if (!crashTesting) return;
  count++;
  if (stepsFile) appendFileSync(stepsFile, `${count} ${name}\n`);
  if (count === killAt) process.kill(process.pid, "SIGKILL");
  if (delayMs > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, delayMs);
}

/** True when a crash test is observing this process (pass step hooks down only then). */
export const crashTesting = killAt > 0 || stepsFile !== undefined || delayMs > 0;

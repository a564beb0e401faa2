// Crash-test hook: @lake/durable's one step hook, taken from the environment. With
// LAKE_TEST_KILL_AT=N the process SIGKILLs itself when it reaches its N-th durable step (store
// landing/cursor steps, chain publication steps, push steps), so tests can stop a real collector at
// every point it reaches. LAKE_TEST_STEPS=FILE appends each step's name to FILE (to count the steps
// of a run). LAKE_TEST_STEP_DELAY_MS=MS stalls the process for MS ms at every step, so a test that
// signals it from outside at some step is never outrun by a fast machine. Without any of these
// variables this does nothing.
import { envStepHook } from "@lake/durable";

const hook = envStepHook();

/** Record reaching a durable step; the crash hook may kill the process here. */
export function step(name: string): void {
  hook?.(name);
}

/** True when a crash test is observing this process (pass step hooks down only then). */
export const crashTesting = hook !== undefined;

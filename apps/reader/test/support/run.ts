// Run the CLI in-process and capture its output.
import { main } from "../../src/cli.js";

export interface Run {
  code: number;
  out: string;
  err: string;
}

/** Run lake-reader with argv and an environment (defaults isolate it from the host's). */
export async function run(argv: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  let out = "";
  let err = "";
  const code = await main(argv, { out: (s) => (out += s), err: (s) => (err += s), env: { PATH: process.env.PATH, TZ: "UTC", ...env } });
  return { code, out, err };
}

/** Run and parse stdout as JSON (throws with stderr when the exit code is not 0). */
export async function runJson<T = unknown>(argv: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<T> {
  const r = await run(argv, env);
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.err}`);
  return JSON.parse(r.out) as T;
}

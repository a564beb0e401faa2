import { spawn } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const CHILD = new URL("./bin/child.mjs", import.meta.url).pathname;

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: Record<string, unknown> | undefined;
  stderr: string;
}

/** Start the child script with these arguments; resolves when it exits. */
export function runChild(args: string[], env: Record<string, string> = {}): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [CHILD, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    p.on("error", reject);
    p.on("close", (code, signal) => {
      const line = stdout.trim().split("\n").filter(Boolean).pop();
      resolve({ code, signal, out: line ? (JSON.parse(line) as Record<string, unknown>) : undefined, stderr });
    });
  });
}

/** Start `n` children that wait at a barrier in `dir`, release them together, and collect their results. */
export async function race(n: number, dir: string, args: (i: number) => string[]): Promise<ChildResult[]> {
  const runs = Array.from({ length: n }, (_, i) => runChild([...args(i), dir]));
  const deadline = Date.now() + 60_000;
  while (readdirSync(dir).filter((f) => f.startsWith("ready-")).length < n) {
    if (Date.now() > deadline) throw new Error("racers did not reach the barrier");
    await new Promise((r) => setTimeout(r, 10));
  }
  writeFileSync(join(dir, "go"), "");
  const results = await Promise.all(runs);
  if (!existsSync(join(dir, "go"))) throw new Error("barrier vanished");
  return results;
}

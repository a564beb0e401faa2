// Child processes of the contract suite that race each other (worker.ts, run from the build).
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

// The built worker: this module sits three levels below the package in src/ and in dist/ alike, so
// the path holds whether it runs from the sources (the package's own tests) or from the build.
const workerPath = fileURLToPath(new URL("../../../dist/internal/testing/worker.js", import.meta.url));

/** Start a worker child process (plain node over dist/) with the given arguments. */
export function startWorker(args: readonly string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [workerPath, ...args], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/** Collect a child's stdout lines and wait for it to exit; rejects on a non-zero exit. */
function finish(child: ChildProcess): Promise<string[]> {
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.on("exit", (code) => (code === 0 ? resolve(out.split("\n").filter((l) => l && l !== "ready")) : reject(new Error(`worker exited ${code}: ${err.slice(-2000)}`))));
  });
}

/** Wait until a child printed "ready". */
export function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let buf = "";
    const on = (d: Buffer) => {
      buf += d.toString();
      if (buf.includes("ready\n")) {
        child.stdout!.off("data", on);
        resolve();
      }
    };
    child.stdout!.on("data", on);
    child.on("exit", (code) => reject(new Error(`worker exited ${code} before ready`)));
  });
}

/**
 * Run several worker processes that all start their race at once (GO_GATE), and return each one's
 * last JSON line, parsed.
 */
export async function race<T>(argsList: readonly (readonly string[])[]): Promise<T[]> {
  const children = argsList.map((a) => startWorker(a, { GO_GATE: "1" }));
  const done = children.map((c) => finish(c));
  await Promise.all(children.map((c) => ready(c)));
  for (const c of children) c.stdin!.end("go\n");
  const outs = await Promise.all(done);
  return outs.map((lines) => JSON.parse(lines[lines.length - 1]!) as T);
}

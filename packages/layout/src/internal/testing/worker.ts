// A child process for the contract suite's cross-process races. Usage:
//   worker.js incr  <storeUrl> <key> <workers> <increments>
//   worker.js lease <storeUrl> <repo> <resource> <ttlSeconds> <owner>...
//   worker.js spin  <storeUrl> <key>            (increments forever; the parent kills it)
// Prints one JSON line with its results. Waits for "go" on stdin when GO_GATE=1, so every process
// starts its race at the same moment.
// Run from the build, so a child starts in a fraction of a second even on a loaded machine.
import { acquireLease, casUpdate, openStore } from "../../index.js";

async function gate(): Promise<void> {
  if (process.env.GO_GATE !== "1") return;
  await new Promise<void>((resolve) => {
    process.stdout.write("ready\n");
    process.stdin.once("data", () => resolve());
  });
}

const arg = (i: number): string => {
  const a = process.argv[2 + i];
  if (a === undefined) throw new Error(`worker: argument ${i + 1} missing (${process.argv.slice(2).join(" ")})`);
  return a;
};
const mode = arg(0);
const store = openStore(arg(1));
type Counter = { n?: number };
try {
  if (mode === "incr") {
    const [key, workers, increments] = [arg(2), Number(arg(3)), Number(arg(4))];
    await gate();
    let attempts = 0;
    await Promise.all(
      Array.from({ length: workers }, async () => {
        for (let i = 0; i < increments; i++) {
          const r = await casUpdate<Counter>(store, key, (cur) => ({ n: (cur?.n ?? 0) + 1 }), { maxAttempts: 1000 });
          attempts += r.attempts;
        }
      }),
    );
    process.stdout.write(JSON.stringify({ attempts }) + "\n");
  } else if (mode === "lease") {
    const [repo, resource, ttl] = [arg(2), arg(3), Number(arg(4))];
    const owners = process.argv.slice(7);
    await gate();
    const results = await Promise.all(owners.map((owner) => acquireLease(store, { repo, resource, owner, ttlSeconds: ttl })));
    process.stdout.write(JSON.stringify(results) + "\n");
  } else if (mode === "spin") {
    const key = arg(2);
    process.stdout.write("ready\n");
    for (;;) await casUpdate<Counter>(store, key, (cur) => ({ n: (cur?.n ?? 0) + 1 }), { maxAttempts: 1000 });
  } else {
    throw new Error(`worker: unknown mode ${mode}`);
  }
} finally {
  store.close();
}

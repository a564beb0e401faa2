// A child process for the contract suite's cross-process races. Usage:
//   worker.mjs incr  <storeUrl> <key> <workers> <increments>
//   worker.mjs lease <storeUrl> <repo> <resource> <ttlSeconds> <owner>...
//   worker.mjs spin  <storeUrl> <key>            (increments forever; the parent kills it)
// Prints one JSON line with its results. Waits for "go" on stdin when GO_GATE=1, so every process
// starts its race at the same moment.
// Plain JS over the built dist (the test task builds first), so a child starts in a fraction of a
// second even on a loaded machine.
import { acquireLease, casUpdate, openStore } from "../../dist/index.js";

async function gate() {
  if (process.env.GO_GATE !== "1") return;
  await new Promise((resolve) => {
    process.stdout.write("ready\n");
    process.stdin.once("data", () => resolve());
  });
}

const [mode, url, ...rest] = process.argv.slice(2);
const store = openStore(url);
try {
  if (mode === "incr") {
    const [key, workers, increments] = [rest[0], Number(rest[1]), Number(rest[2])];
    await gate();
    let attempts = 0;
    await Promise.all(
      Array.from({ length: workers }, async () => {
        for (let i = 0; i < increments; i++) {
          const r = await casUpdate(store, key, (cur) => ({ n: (cur?.n ?? 0) + 1 }), { maxAttempts: 1000 });
          attempts += r.attempts;
        }
      }),
    );
    process.stdout.write(JSON.stringify({ attempts }) + "\n");
  } else if (mode === "lease") {
    const [repo, resource, ttl, ...owners] = rest;
    await gate();
    const results = await Promise.all(owners.map((owner) => acquireLease(store, { repo, resource, owner, ttlSeconds: Number(ttl) })));
    process.stdout.write(JSON.stringify(results) + "\n");
  } else if (mode === "spin") {
    const key = rest[0];
    process.stdout.write("ready\n");
    for (;;) await casUpdate(store, key, (cur) => ({ n: (cur?.n ?? 0) + 1 }), { maxAttempts: 1000 });
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
} finally {
  store.close();
}

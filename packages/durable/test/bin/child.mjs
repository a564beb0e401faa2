// One racer or crash victim in its own process. Prints one JSON line with what it did.
//   node child.mjs lock     <lockPath> <logFile> <holdMs> <waitMs> [barrierDir]
//       take the lock, append "+<pid>" to logFile, hold holdMs, append "-<pid>", release
//   node child.mjs hold     <lockPath>           take the lock, print it, then wait to be killed
//   node child.mjs replace  <path> <text>        writeAtomic (LAKE_TEST_KILL_AT may kill it)
//   node child.mjs install  <path> <text> <mode> [barrierDir]   installNoReplace
//   node child.mjs lease    <dir> <logFile> <holdMs> <waitMs> [barrierDir]
//       take the directory lease (retrying until waitMs), log "+<pid>", hold, log "-<pid>", release
//   node child.mjs hold-lease <dir>              take the directory lease, print it, wait to be killed
//   node child.mjs move     <from> <to> [barrierDir]   moveDir (LAKE_TEST_KILL_AT may kill it)
//   node child.mjs batch    <dir> <text> <n>     writeAtomic f1..fn in dir with one DirSync, then flush
//   node child.mjs scratch  <parent> <prefix>    take a scratch directory (LAKE_TEST_KILL_AT may kill it), write a file in it, print it, wait to be killed
// barrierDir: write <dir>/ready-<pid>, then spin until <dir>/go exists (all racers start together).
import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import { acquireDirLease, acquireLock, DirSync, envStepHook, installNoReplace, moveDir, scratchDir, writeAtomic } from "@lake/durable";

const [cmd, path, ...rest] = process.argv.slice(2);
const step = envStepHook();
const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
function barrier(dir) {
  if (!dir) return;
  writeFileSync(`${dir}/ready-${process.pid}`, "");
  while (!existsSync(`${dir}/go`)) {
    // spin
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

if (cmd === "lock") {
  const [log, holdMs, waitMs, bar] = rest;
  barrier(bar);
  const h = await acquireLock(path, { waitMs: Number(waitMs), ...(step ? { step } : {}) });
  if (!h.held) {
    out({ busy: h.holder?.pid ?? null });
  } else {
    appendFileSync(log, `+${process.pid}\n`);
    await sleep(Number(holdMs));
    appendFileSync(log, `-${process.pid}\n`);
    h.release();
    out({ held: true, recovered: h.recovered });
  }
} else if (cmd === "hold") {
  const h = await acquireLock(path);
  out({ held: h.held, token: h.held ? h.token : null });
  setInterval(() => {}, 1000);
} else if (cmd === "replace") {
  writeAtomic(path, rest[0], step ? { step } : {});
  out({ replaced: true });
} else if (cmd === "install") {
  const [text, mode, bar] = rest;
  barrier(bar);
  const r = installNoReplace(path, text, { installMode: mode, readOnly: true, ...(step ? { step } : {}) });
  out(r);
} else if (cmd === "lease") {
  const [log, holdMs, waitMs, bar] = rest;
  barrier(bar);
  const deadline = Date.now() + Number(waitMs);
  let h = acquireDirLease(path, step ? { step } : {});
  let recovered = h.held && h.recovered;
  while (!h.held && Date.now() < deadline) {
    await sleep(5 + Math.random() * 20);
    h = acquireDirLease(path, step ? { step } : {});
    if (h.held && h.recovered) recovered = true;
  }
  if (!h.held) {
    out({ busy: h.owner?.pid ?? null });
  } else {
    appendFileSync(log, `+${process.pid}\n`);
    await sleep(Number(holdMs));
    appendFileSync(log, `-${process.pid}\n`);
    h.release();
    out({ held: true, recovered });
  }
} else if (cmd === "hold-lease") {
  const h = acquireDirLease(path, step ? { step } : {});
  out({ held: h.held, token: h.held ? h.owner.token : null });
  setInterval(() => {}, 1000);
} else if (cmd === "move") {
  const [to, bar] = rest;
  barrier(bar);
  out({ moved: moveDir(path, to, step ? { step } : {}) });
} else if (cmd === "batch") {
  const [text, n] = rest;
  const dirSync = new DirSync(step ? { step } : {});
  for (let i = 1; i <= Number(n); i++) writeAtomic(`${path}/f${i}`, text, { label: "batch", dirSync, ...(step ? { step } : {}) });
  dirSync.flush();
  out({ synced: dirSync.synced, saved: dirSync.saved });
} else if (cmd === "scratch") {
  const s = scratchDir(rest[0], { parent: path, ...(step ? { step } : {}) });
  writeFileSync(`${s.dir}/spill.tmp`, "x".repeat(4096));
  out({ dir: s.dir });
  setInterval(() => {}, 1000);
}

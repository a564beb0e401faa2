// A parser in its own process, for crash and concurrency tests. Prints one JSON line with what it did.
//   node chain-child.mjs parse   <root> <session> <installMode> <crashStep|-> <startAtMs>
//   node chain-child.mjs publish <root> <bodyJsonPath> <installMode> <crashStep|-> <startAtMs>
// startAt "barrier:<dir>": write <dir>/ready-<pid>, then spin until <dir>/go exists.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { isChainError, parse, publishRound } from "@lake/chain";

const [cmd, root, arg, installMode, crashAt, startAt] = process.argv.slice(2);
const onStep = (step) => {
  if (step === crashAt) process.kill(process.pid, "SIGKILL");
};
if (startAt?.startsWith("barrier:")) {
  const dir = startAt.slice("barrier:".length);
  writeFileSync(`${dir}/ready-${process.pid}`, "");
  while (!existsSync(`${dir}/go`)) {
    // spin: every racer starts at the same moment
  }
}
try {
  if (cmd === "parse") {
    const r = await parse(root, arg, { installMode, onStep });
    process.stdout.write(`${JSON.stringify({ published: r.published?.file ?? null })}\n`);
  } else {
    const body = JSON.parse(readFileSync(arg, "utf8"));
    const r = await publishRound(root, body, { installMode, onStep });
    process.stdout.write(`${JSON.stringify({ published: r.file })}\n`);
  }
} catch (e) {
  process.stdout.write(`${JSON.stringify({ error: isChainError(e) ? e.code : String(e) })}\n`);
  process.exitCode = 2;
}

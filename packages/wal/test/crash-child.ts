// Child process for the writer crash test: appends records forever with fsync "always" and prints
// each acknowledged seq on its own line. The parent kills it with SIGKILL at a random moment.
import { WalWriter } from "../src/index.js";

const path = process.argv[2]!;
const w = await WalWriter.open(path, { fsync: "always", fence: BigInt(process.pid) });
for (let i = 0; ; i++) {
  const big = "x".repeat(i % 7 === 0 ? 200_000 : 50);
  const r = await w.append(i % 5 === 0 ? { type: "steered", input: [big] } : { type: "tool_batch_finished", batch_id: `b${i}-${big}` });
  process.stdout.write(`${r.seq}\n`);
}

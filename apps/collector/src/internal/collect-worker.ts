// A convert worker of a pooled collect pass (collect-pool.ts): complete lines of a stateless
// line-based source → adapter records → masked canonical records, the same code the main thread
// runs (collect-mask.ts), so a pooled pass lands the same bytes as a one-thread pass. It reads no
// file and writes nothing: the lines come in a message, the records go back in one.
import { parentPort, workerData } from "node:worker_threads";
import { getAdapter, type DiscoveredSource, type SourceLine } from "@lake/adapters";
import { maskRecord, passRedactor } from "./collect-mask.js";
import type { ConvertRequest, ConvertReply } from "./collect-pool.js";

const { root } = workerData as { root: string };
// The key exists: the main thread made its redactor (and with it the key) before asking.
const redactor = passRedactor(root);

function convert(req: ConvertRequest): ConvertReply {
  const { id, src, bytes, meta } = req;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lines: SourceLine[] = [];
  for (let i = 0; i < meta.length; i += 4) lines.push({ bytes: buf.subarray(meta[i]!, meta[i + 1]!), offset: meta[i + 2]!, line: meta[i + 3]! });
  const adapter = getAdapter(src.runtime);
  try {
    return { id, records: adapter.parseLines(src as DiscoveredSource, lines, adapter.initialState(src as DiscoveredSource)).map((r) => maskRecord(redactor, r)) };
  } catch {
    // The main thread converts these lines itself and meets the failure where a one-thread pass does.
    return { id, failed: true };
  }
}

parentPort!.on("message", (req: ConvertRequest) => parentPort!.postMessage(convert(req)));
parentPort!.postMessage({ ready: true });

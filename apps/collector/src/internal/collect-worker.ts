// A convert worker of a pooled collect pass (collect-pool.ts): a piece of a window of a stateless
// line-based source → adapter records → masked canonical records → landed lines and index facts,
// the same code the main thread runs (collect-mask.ts, the store's encoder), so a pooled pass lands
// the same bytes as a one-thread pass. It reads no file and writes nothing: the lines come in a
// message, the encoded records go back in one.
import { parentPort, workerData } from "node:worker_threads";
// The line adapters alone (@lake/adapters/discover), as the main thread's pass takes them: not the
// package root, which would load broca's WAL decoder and its record schemas into every worker.
import { lineAdapter, type DiscoveredSource } from "@lake/adapters/discover";
import { encodeWindow } from "@lake/store/records";
import type { Convert } from "@lake/store";
import { maskRecord, maskUnknownText, passRedactor } from "./collect-mask.js";
import type { ConvertRequest, ConvertReply } from "./collect-pool.js";

const { root } = workerData as { root: string };
// The key exists: the main thread made its redactor (and with it the key) before asking.
const redactor = passRedactor(root);
const maskUnknown = maskUnknownText(redactor);

async function convert(req: ConvertRequest): Promise<{ reply: ConvertReply; transfer: ArrayBuffer[] }> {
  const { id, src, sessionId, ref, bytes, offset, ord } = req;
  const adapter = lineAdapter(src.runtime);
  if (!adapter) return { reply: { id, failed: true }, transfer: [] };
  const lines: Convert = (ls) => adapter.parseLines(src as DiscoveredSource, ls, adapter.initialState(src as DiscoveredSource)).map((r) => maskRecord(redactor, r));
  try {
    const enc = await encodeWindow(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { offset, ord }, { sessionId, source: ref }, lines, maskUnknown);
    const body = new Uint8Array(enc.body.reduce((n, b) => n + b.length, 0));
    let at = 0;
    for (const b of enc.body) {
      body.set(b, at);
      at += b.length;
    }
    return { reply: { id, body, records: enc.records, facts: enc.facts, sourceLines: enc.sourceLines, ...(enc.lastId !== undefined ? { lastId: enc.lastId } : {}) }, transfer: [body.buffer] };
  } catch {
    // The main thread converts the window itself and meets the failure where a one-thread pass does.
    return { reply: { id, failed: true }, transfer: [] };
  }
}

parentPort!.on("message", (req: ConvertRequest) => {
  void convert(req).then(({ reply, transfer }) => parentPort!.postMessage(reply, transfer));
});
parentPort!.postMessage({ ready: true });

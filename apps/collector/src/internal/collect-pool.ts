// The convert pool of a collect pass: worker threads (collect-worker.ts) that turn complete lines of
// stateless line-based sources (Claude Code) into masked canonical records while the main thread
// reads, lands, indexes and publishes. The main thread keeps every durable step: each session still
// has one writer that lands its files in seq order; the pool only computes. A window's lines are cut
// into chunks spread over the workers and put back in order, so the records are the ones the main
// thread would have made. A chunk a worker could not convert (an adapter error, a worker that died)
// is converted on the main thread, where a failure is met and reported as in a one-thread pass.
import { Worker } from "node:worker_threads";
import type { CanonicalRecord } from "@lake/events/record";
import type { DiscoveredSource } from "@lake/adapters/discover";

/** One chunk of lines to convert: their bytes packed in `bytes`, and per line [start, end, offset, line] in `meta`. */
export interface ConvertRequest {
  readonly id: number;
  readonly src: DiscoveredSource;
  readonly bytes: Uint8Array;
  readonly meta: Float64Array;
}

/** A worker's answer: the chunk's records in order, or `failed` (the main thread converts the chunk). */
export type ConvertReply = { readonly id: number; readonly records: CanonicalRecord[] } | { readonly id: number; readonly failed: true };

/** A line as the store hands it to convert. */
export interface PoolLine {
  readonly bytes: Buffer;
  readonly offset: number;
  readonly line: number;
}

/** Bytes above which a chunk is cut (a window of the default 2 MiB budget becomes a few chunks per worker). */
const CHUNK_BYTES = 256 * 1024;

interface Slot {
  readonly worker: Worker;
  ready: boolean;
  dead: boolean;
  /** It answered a chunk with records. */
  used: boolean;
  /** Bytes sent and not answered yet. */
  load: number;
  /** Requests sent and not answered yet. */
  readonly outstanding: Map<number, { readonly size: number; readonly done: (r: ConvertReply) => void }>;
}

export class ConvertPool {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private readonly waiters: Array<() => void> = [];

  private constructor(size: number, root: string) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(new URL("./collect-worker.js", import.meta.url), { workerData: { root } });
      const slot: Slot = { worker, ready: false, dead: false, used: false, load: 0, outstanding: new Map() };
      worker.unref();
      worker.on("message", (m: ConvertReply | { ready: true }) => {
        if ("ready" in m) {
          slot.ready = true;
          this.wake();
          return;
        }
        slot.used = true;
        const o = slot.outstanding.get(m.id);
        if (!o) return;
        slot.outstanding.delete(m.id);
        slot.load -= o.size;
        if (slot.outstanding.size === 0) worker.unref();
        o.done(m);
      });
      const lost = () => {
        if (slot.dead) return;
        slot.dead = true;
        slot.ready = false;
        this.wake();
        // Whatever it held is converted on the main thread.
        for (const [id, o] of slot.outstanding) o.done({ id, failed: true });
        slot.outstanding.clear();
      };
      worker.on("error", lost);
      worker.on("exit", lost);
      this.slots.push(slot);
    }
  }

  /** Start `size` workers for the storage root `root` (its redaction key must exist). */
  static start(size: number, root: string): ConvertPool {
    return new ConvertPool(size, root);
  }

  /** Workers started and not dead. */
  get size(): number {
    return this.slots.filter((s) => !s.dead).length;
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves once a worker is ready (true) or every worker is gone (false). */
  async whenReady(): Promise<boolean> {
    while (!this.ready && this.size > 0) await new Promise<void>((wake) => this.waiters.push(wake));
    return this.ready;
  }

  /** Workers that converted lines. */
  get used(): number {
    return this.slots.filter((s) => s.used).length;
  }

  /** True once a worker is ready to take lines. */
  get ready(): boolean {
    return this.slots.some((s) => s.ready);
  }

  /**
   * Convert a run of lines of `src`: cut into chunks over the ready workers, answered in order.
   * `local` converts a chunk on the main thread (a chunk a worker could not take).
   */
  async convert(src: DiscoveredSource, lines: readonly PoolLine[], local: (lines: readonly PoolLine[]) => readonly CanonicalRecord[]): Promise<CanonicalRecord[]> {
    const ready = this.slots.filter((s) => s.ready);
    if (ready.length === 0 || lines.length === 0) return [...local(lines)];
    let total = 0;
    for (const l of lines) total += l.bytes.length;
    const target = Math.max(1, Math.min(CHUNK_BYTES, Math.ceil(total / ready.length)));
    const parts: Promise<readonly CanonicalRecord[]>[] = [];
    let i = 0;
    while (i < lines.length) {
      let j = i;
      let size = 0;
      while (j < lines.length && (j === i || size + lines[j]!.bytes.length <= target)) size += lines[j++]!.bytes.length;
      const chunk = lines.slice(i, j);
      parts.push(this.send(src, chunk, size).then((r) => ("failed" in r ? local(chunk) : r.records)));
      i = j;
    }
    const out: CanonicalRecord[] = [];
    for (const p of await Promise.all(parts)) for (const r of p) out.push(r);
    return out;
  }

  private send(src: DiscoveredSource, chunk: readonly PoolLine[], size: number): Promise<ConvertReply> {
    const id = this.nextId++;
    let slot: Slot | undefined;
    for (const s of this.slots) if (s.ready && (!slot || s.load < slot.load)) slot = s;
    if (!slot) return Promise.resolve({ id, failed: true });
    const bytes = new Uint8Array(size);
    const meta = new Float64Array(chunk.length * 4);
    let at = 0;
    chunk.forEach((l, k) => {
      bytes.set(l.bytes, at);
      meta[k * 4] = at;
      meta[k * 4 + 1] = at + l.bytes.length;
      meta[k * 4 + 2] = l.offset;
      meta[k * 4 + 3] = l.line;
      at += l.bytes.length;
    });
    const target = slot;
    return new Promise((done) => {
      target.outstanding.set(id, { size, done });
      target.load += size;
      if (target.outstanding.size === 1) target.worker.ref();
      const req: ConvertRequest = { id, src, bytes, meta };
      target.worker.postMessage(req, [bytes.buffer, meta.buffer]);
    });
  }

  /** Stop every worker. */
  async close(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.worker.terminate().catch(() => undefined)));
  }
}

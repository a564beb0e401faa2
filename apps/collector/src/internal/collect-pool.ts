// The convert pool of a collect pass: worker threads (collect-worker.ts) that turn windows of
// stateless line-based sources (Claude Code) into masked canonical records, encoded for landing by
// the store's own encoder (@lake/store/records), while the main thread reads, lands, indexes and
// publishes. The main thread keeps every durable step: each session still has one writer that lands
// its files in seq order; the pool only computes. A window is cut at line ends into pieces spread
// over the workers and joined in order, so the bytes are the ones the main thread would have
// landed. A window a worker could not convert (an adapter error, a worker that died) is converted on
// the main thread, where a failure is met and reported as in a one-thread pass.
import { Worker } from "node:worker_threads";
import type { DiscoveredSource } from "@lake/adapters/discover";
import { joinEncoded, windowPieces, type EncodedWindow } from "@lake/store/records";
import type { SourceRef } from "@lake/store";

/** The source a piece comes from, as the store's encoder needs it (SourceRef without its functions). */
export type PieceSource = Pick<SourceRef, "path" | "source" | "stream" | "kind" | "runtime" | "adapter" | "adapterVersion">;

/** One piece of a window to convert and encode: its lines' bytes, where its first line is. */
export interface ConvertRequest {
  readonly id: number;
  readonly src: DiscoveredSource;
  readonly sessionId: string;
  readonly ref: PieceSource;
  readonly bytes: Uint8Array;
  readonly offset: number;
  readonly ord: number;
}

/** A worker's answer: the piece's records encoded for landing, or `failed` (the main thread converts the window). */
export type ConvertReply =
  | { readonly id: number; readonly body: Uint8Array; readonly records: number; readonly facts: EncodedWindow["facts"]; readonly lastId?: string; readonly sourceLines: number }
  | { readonly id: number; readonly failed: true };

/** Bytes above which a piece is cut (a window of the default 2 MiB budget becomes a few pieces per worker). */
const CHUNK_BYTES = 256 * 1024;

/** The longest piece a worker takes: a piece is longer than CHUNK_BYTES only when one line is. */
const MAX_PIECE_BYTES = 4 * 1024 * 1024;

interface Slot {
  readonly worker: Worker;
  ready: boolean;
  dead: boolean;
  /** It answered a piece with records. */
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
  /** Pieces a worker answered `failed` or lost (each converted again on the main thread). */
  failed = 0;

  private constructor(size: number, root: string) {
    for (let i = 0; i < size; i++) {
      // A worker keeps nothing between pieces, and takes no piece over MAX_PIECE_BYTES (a window
      // with a longer line is converted on the main thread, whose heap is not bounded): its heap is
      // bounded (a young generation of 16 MB, an old one of 64 MB), so garbage it has not collected
      // yet does not add some 100 MB to a pass's peak RSS. A worker that still runs out of memory is
      // lost: what it held is converted on the main thread. (16 MB, not 8: a 537 MB first collect
      // took 11.0 s at 8 and 9.7 s at 16, the worker's scavenges fewer, at the same peak RSS; 32 MB
      // was no faster and added ~40 MB.)
      const worker = new Worker(new URL("./collect-worker.js", import.meta.url), { workerData: { root }, resourceLimits: { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 64 } });
      const slot: Slot = { worker, ready: false, dead: false, used: false, load: 0, outstanding: new Map() };
      worker.unref();
      worker.on("message", (m: ConvertReply | { ready: true }) => {
        if ("ready" in m) {
          slot.ready = true;
          this.wake();
          return;
        }
        const o = slot.outstanding.get(m.id);
        if (!o) return;
        if ("failed" in m) this.failed++;
        else slot.used = true;
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
        for (const [id, o] of slot.outstanding) {
          this.failed++;
          o.done({ id, failed: true });
        }
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
   * Convert and encode a window of `src` (its text as the store's encoder takes it): cut into pieces
   * over the ready workers, joined in order. Undefined when no worker is ready or a piece could not
   * be converted, or one of its lines is longer than MAX_PIECE_BYTES: the pass then converts the
   * window on the main thread.
   */
  async encode(src: DiscoveredSource, sessionId: string, ref: PieceSource, text: Buffer, at: { readonly offset: number; readonly ord: number }): Promise<EncodedWindow | undefined> {
    const ready = this.slots.filter((s) => s.ready);
    if (ready.length === 0) return undefined;
    const target = Math.max(1, Math.min(CHUNK_BYTES, Math.ceil(text.length / ready.length)));
    const pieces = windowPieces(text, at, target);
    if (pieces.some((p) => p.end - p.start > MAX_PIECE_BYTES)) return undefined;
    const replies = await Promise.all(pieces.map((p) => this.send(src, sessionId, ref, text.subarray(p.start, p.end), p.offset, p.ord)));
    const parts: EncodedWindow[] = [];
    for (const r of replies) {
      if ("failed" in r) return undefined;
      parts.push({ body: [r.body], records: r.records, facts: r.facts, sourceLines: r.sourceLines, ...(r.lastId !== undefined ? { lastId: r.lastId } : {}) });
    }
    return joinEncoded(parts);
  }

  private send(src: DiscoveredSource, sessionId: string, ref: PieceSource, piece: Buffer, offset: number, ord: number): Promise<ConvertReply> {
    const id = this.nextId++;
    let slot: Slot | undefined;
    for (const s of this.slots) if (s.ready && (!slot || s.load < slot.load)) slot = s;
    if (!slot) return Promise.resolve({ id, failed: true });
    const bytes = new Uint8Array(piece);
    const size = bytes.length;
    const target = slot;
    return new Promise((done) => {
      target.outstanding.set(id, { size, done });
      target.load += size;
      if (target.outstanding.size === 1) target.worker.ref();
      const req: ConvertRequest = { id, src, sessionId, ref, bytes, offset, ord };
      target.worker.postMessage(req, [bytes.buffer]);
    });
  }

  /** Stop every worker. */
  async close(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.worker.terminate().catch(() => undefined)));
  }
}

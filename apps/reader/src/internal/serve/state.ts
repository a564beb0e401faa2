// What `serve` keeps of the fleet between requests: one state per fleet fingerprint (what
// resolveFleet found: every followed key with its size and etag, the compacted generations, the
// snapshot), holding its read model — its rows and deduplicated events materialized once, and the
// counted usage of `usage_counted`, so a page's queries neither re-read the Parquet files nor
// dedupe again — and the answers built over it. A request resolves the fleet first (requests that
// arrive together share one resolution, started after they arrived); a changed fingerprint is a
// new state, and the old one is dropped (its model closed once its queries are done). Queries on
// one model run one at a time.
import type { FleetCache } from "../context.js";
import type { FleetFiles } from "../fleet.js";
import type { ReadModel } from "../readmodel.js";

interface State {
  readonly fingerprint: string;
  /** The resolution it was made current by. */
  readonly seq: number;
  /** Opened on first use. */
  model: Promise<ReadModel> | undefined;
  /** The tail of the queue of queries on this model. */
  queue: Promise<unknown>;
  readonly answers: Map<string, Promise<unknown>>;
}

/** Open a read model of `files` as `serve` keeps it (tables instead of the heavier views). */
async function openKept(files: FleetFiles, labelsFile: string): Promise<ReadModel> {
  const { ReadModel } = await import("../readmodel.js");
  const rm = await ReadModel.open(files, { labelsFile, materialize: true });
  try {
    // The deduplicated events once, as a table; every view over `events` then reads it. The same
    // for the counted usage (its dedupe spans sessions, so a session's rows need all of it).
    await rm.query("CREATE TABLE _events_kept AS SELECT * FROM events");
    await rm.query("CREATE OR REPLACE VIEW events AS SELECT * FROM _events_kept");
    await rm.query("CREATE TABLE _usage_counted_kept AS SELECT * FROM usage_counted");
    await rm.query("CREATE OR REPLACE VIEW usage_counted AS SELECT * FROM _usage_counted_kept");
  } catch (e) {
    rm.close();
    throw e;
  }
  return rm;
}

/** A {@link FleetCache} holding the latest fleet state. */
export class FleetState implements FleetCache {
  private current: State | undefined;
  private running: Promise<FleetFiles> | undefined;
  private next: Promise<FleetFiles> | undefined;
  private closed = false;
  /** The order resolutions started in: an answer over an older resolution never replaces a newer state. */
  private readonly order = new WeakMap<FleetFiles, number>();
  private started = 0;

  files(resolve: () => Promise<FleetFiles>): Promise<FleetFiles> {
    // A resolution queued and not started yet starts after this call: join it.
    if (this.next) return this.next;
    if (!this.running) return this.start(resolve);
    const next = this.running.then(
      () => undefined,
      () => undefined,
    ).then(() => {
      this.next = undefined;
      return this.start(resolve);
    });
    this.next = next;
    return next;
  }

  private start(resolve: () => Promise<FleetFiles>): Promise<FleetFiles> {
    const n = ++this.started;
    const run = resolve().then((files) => {
      this.order.set(files, n);
      return files;
    });
    this.running = run;
    const done = () => {
      if (this.running === run) this.running = undefined;
    };
    run.then(done, done);
    return run;
  }

  /** The state of `files`, made current when it is new. */
  private stateOf(files: FleetFiles): State {
    const cur = this.current;
    if (cur && cur.fingerprint === files.fingerprint) return cur;
    const seq = this.order.get(files) ?? 0;
    const fresh: State = { fingerprint: files.fingerprint, seq, model: undefined, queue: Promise.resolve(), answers: new Map() };
    // Files resolved before the current state's (a request that started before a change) are
    // answered from a state of their own, used once.
    if (this.closed || (cur && seq < cur.seq)) {
      void Promise.resolve().then(() => this.drop(fresh));
      return fresh;
    }
    this.current = fresh;
    if (cur) void this.drop(cur);
    return fresh;
  }

  private async drop(s: State): Promise<void> {
    await s.queue;
    (await s.model?.catch(() => undefined))?.close();
  }

  use<T>(files: FleetFiles, labelsFile: string, fn: (rm: ReadModel) => Promise<T>): Promise<T> {
    const s = this.stateOf(files);
    if (!s.model) {
      const model = openKept(files, labelsFile);
      s.model = model;
      // A model that failed to open is dropped, so the next request tries again.
      model.catch(() => {
        if (s.model === model) s.model = undefined;
      });
    }
    const model = s.model;
    const run = s.queue.then(async () => fn(await model));
    s.queue = run.catch(() => undefined);
    return run;
  }

  keep<T>(files: FleetFiles, key: string, build: () => Promise<T>): Promise<T> {
    const s = this.stateOf(files);
    const hit = s.answers.get(key) as Promise<T> | undefined;
    if (hit) return hit;
    const made = build();
    s.answers.set(key, made);
    // A failed build is not kept: the next request builds again.
    made.catch(() => {
      if (s.answers.get(key) === made) s.answers.delete(key);
    });
    return made;
  }

  /** How many answers the current state keeps. */
  get size(): number {
    return this.current?.answers.size ?? 0;
  }

  /** Drop the current state and close its model (after its queries). */
  async close(): Promise<void> {
    this.closed = true;
    const cur = this.current;
    this.current = undefined;
    if (cur) await this.drop(cur);
  }
}

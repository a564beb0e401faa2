// The read models `serve` keeps open: one per fleet fingerprint, its rows and its deduplicated
// events materialized once, so a page's queries do not re-read the Parquet files or dedupe again. A changed fleet (new fingerprint) opens a new one
// and closes the old one once its queries are done. Queries on one model run one at a time.
import type { ReadModelSource } from "../context.js";
import type { FleetFiles } from "../fleet.js";
import type { ReadModel } from "../readmodel.js";

interface Open {
  readonly fingerprint: string;
  readonly model: Promise<ReadModel>;
  /** The tail of the queue of queries on this model. */
  queue: Promise<unknown>;
}

/** A {@link ReadModelSource} holding the latest fleet's read model open. */
export class OpenModels implements ReadModelSource {
  private current: Open | undefined;

  use<T>(files: FleetFiles, labelsFile: string, fn: (rm: ReadModel) => Promise<T>): Promise<T> {
    let cur = this.current;
    if (!cur || cur.fingerprint !== files.fingerprint) {
      const old = cur;
      const model = import("../readmodel.js").then(async ({ ReadModel }) => {
        const rm = await ReadModel.open(files, { labelsFile, materialize: true });
        try {
          // The deduplicated events once, as a table; every view over `events` then reads it.
          await rm.query("CREATE TABLE _events_kept AS SELECT * FROM events");
          await rm.query("CREATE OR REPLACE VIEW events AS SELECT * FROM _events_kept");
        } catch (e) {
          rm.close();
          throw e;
        }
        return rm;
      });
      cur = this.current = { fingerprint: files.fingerprint, model, queue: Promise.resolve() };
      // A model that failed to open is dropped, so the next request tries again.
      model.catch(() => {
        if (this.current === cur) this.current = undefined;
      });
      if (old) void old.queue.then(async () => (await old.model.catch(() => undefined))?.close());
    }
    const open = cur;
    const run = open.queue.then(async () => fn(await open.model));
    open.queue = run.catch(() => undefined);
    return run;
  }

  /** Close every model (after their queries). */
  async close(): Promise<void> {
    const cur = this.current;
    this.current = undefined;
    if (cur) {
      await cur.queue;
      (await cur.model.catch(() => undefined))?.close();
    }
  }
}

// Several entries in a directory, one directory fsync: a batch of the directories whose creates,
// renames or unlinks are not durable yet. A replace given the batch (`writeAtomic(…, {dirSync})`)
// fsyncs its file and renames it as always, and leaves the directory fsync to the batch; an install
// given the batch fsyncs the directory at once (a landed name is a barrier) and so also makes every
// earlier entry of that directory durable: the batch forgets it. `flush()` fsyncs each directory
// still pending, once. What must be durable before what stays the caller's: flush before anything
// that relies on the deferred entries having reached the disk.
import { fsyncDir } from "./fsync.js";
import type { StepHook } from "./step.js";

/** Options of a {@link DirSync} batch. */
export interface DirSyncOptions {
  /** Crash-step hook: `<label>:fsync-dir` before each directory fsync of `flush()`. */
  readonly step?: StepHook;
  /** Step label (default `dirs`). */
  readonly label?: string;
  /** false: `flush()` fsyncs nothing (only for tests that kill processes, not machines). */
  readonly sync?: boolean;
}

/** Directories with entries not yet made durable; one fsync each at {@link DirSync.flush}. */
export class DirSync {
  private readonly dirs = new Set<string>();
  private readonly o: DirSyncOptions;
  /** Directory fsyncs this batch did (in `flush`). */
  synced = 0;
  /** Directory fsyncs this batch saved: entries whose directory was already pending, or made durable by an install. */
  saved = 0;

  constructor(options: DirSyncOptions = {}) {
    this.o = options;
  }

  /** An entry of `dir` changed and is not durable yet. */
  defer(dir: string): void {
    if (this.dirs.has(dir)) this.saved++;
    else this.dirs.add(dir);
  }

  /** `dir` was just fsynced (an install's barrier): its earlier entries are durable. */
  covered(dir: string): void {
    if (this.dirs.delete(dir)) this.saved++;
  }

  /** Directories still pending, in the order first deferred. */
  pending(): string[] {
    return [...this.dirs];
  }

  /**
   * fsync every pending directory once, in the order first deferred (`@lake/durable`'s directory
   * policy: a refusal of a file system that cannot sync directories is tolerated, any other error
   * throws and leaves that directory and the ones after it pending).
   */
  flush(): void {
    const label = this.o.label ?? "dirs";
    for (const d of [...this.dirs]) {
      this.o.step?.(`${label}:fsync-dir`);
      if (this.o.sync !== false) fsyncDir(d);
      this.dirs.delete(d);
      this.synced++;
    }
  }
}

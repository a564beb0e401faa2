// The answers `serve` keeps between requests (folded conversations), each under a key naming what
// it was built from, so a changed input is a new key and an old entry is never served for it. The
// most recently used entries are kept; one build runs per key at a time; a failed build is not kept.
import type { Memo } from "../context.js";

/** A {@link Memo} keeping the `limit` most recently used values. */
export class KeptAnswers implements Memo {
  private readonly kept = new Map<string, Promise<unknown>>();

  constructor(private readonly limit = 16) {}

  get<T>(key: string, build: () => Promise<T>): Promise<T> {
    const hit = this.kept.get(key) as Promise<T> | undefined;
    if (hit) {
      // Most recently used last.
      this.kept.delete(key);
      this.kept.set(key, hit);
      return hit;
    }
    const made = build();
    this.kept.set(key, made);
    made.catch(() => {
      if (this.kept.get(key) === made) this.kept.delete(key);
    });
    while (this.kept.size > this.limit) this.kept.delete(this.kept.keys().next().value as string);
    return made;
  }

  /** How many values are kept. */
  get size(): number {
    return this.kept.size;
  }
}

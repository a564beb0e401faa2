// Which sessions discovery no longer finds have had their pruning check (its own module: the
// collector's start-up path reads it without loading the session store).
import { listSessionIdsWhere } from "./scan.js";

/**
 * Remembers which sessions discovery no longer finds have been checked, so each is checked once,
 * and again only after discovery has found it in between. A watching collector keeps one.
 */
export class LostSessionTracker {
  private checked: Set<string>;
  /** Start from the sessions a previous process checked (pass.state's lost_checked). */
  constructor(checked: Iterable<string> = []) {
    this.checked = new Set(checked);
  }
  /** The sessions checked and not found again since, to carry to the next process. */
  checkedIds(): string[] {
    return [...this.checked].sort();
  }
  /** Tell the tracker which sessions discovery found in this rediscovery. */
  noteFound(ids: Iterable<string>): void {
    for (const id of ids) this.checked.delete(id);
  }
  /** @internal */
  isChecked(id: string): boolean {
    return this.checked.has(id);
  }
  /** @internal */
  markChecked(id: string): void {
    this.checked.add(id);
  }
}

/**
 * The sessions of the root that `checkLostSessions` would check now: directories discovery did not
 * find (`found`) and the tracker has not checked since they were last found. One listing of the
 * root; tells the tracker what was found.
 */
export function lostToCheck(root: string, found: ReadonlySet<string>, tracker?: LostSessionTracker): string[] {
  tracker?.noteFound(found);
  return listSessionIdsWhere(root, (id) => !found.has(id) && !tracker?.isChecked(id));
}

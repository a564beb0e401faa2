// Finishing a removal a stopped run left, before a pass lands, parses or sends anything. Finding
// out whether there is one reads the forget records and `_removed/` only (@lake/store/pass); the
// removal itself (forget.ts: the adapters, the store, push.state's codec) is loaded when there is.
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { listForgotten, readForgetRecord, REMOVED_DIR } from "@lake/store/pass";
import type { RemovalResult } from "@lake/store";

/** True when `_removed` holds something, or is not a plain directory (then the removal step says why). */
function leftovers(root: string): boolean {
  const dir = join(root, REMOVED_DIR);
  try {
    if (!lstatSync(dir).isDirectory()) return true;
    return readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}

/**
 * Finish what a stopped removal left, before a pass lands, parses or sends anything: `_removed/`
 * emptied, every removal still in progress taken to its end. `holdsExportLock`: the caller (push)
 * holds `_export/.lock` already. A `_removed` that is a symbolic link or not a directory stops the
 * removals (nothing is deleted); the reason goes to `warn` and the pass goes on.
 */
export async function finishPending(root: string, options: { holdsExportLock?: boolean; warn?: (line: string) => void } = {}): Promise<RemovalResult[]> {
  const pending = listForgotten(root).filter((id) => {
    try {
      return readForgetRecord(root, id)?.state === "removing";
    } catch {
      return false;
    }
  });
  if (pending.length === 0 && !leftovers(root)) return [];
  const { finishRemovalsNow } = await import("./forget.js");
  return finishRemovalsNow(root, options);
}

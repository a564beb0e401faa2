// Where the hook spool of a root lives (its own module: collect's discovery needs the path, not the writer).
import { join } from "node:path";

/** Where the spool of a root lives. */
export function spoolDir(root: string): string {
  return join(root, "_hooks", "spool");
}

import { join } from "node:path";
import { StoreError } from "./errors.js";
import { checkId } from "./names.js";
import { readLandedPath, type LandedFile, type ParseLandedOptions } from "./landed.js";
import { scanSession } from "./scan.js";

/**
 * Read one landed file of a session by its sequence number (or its path relative to the session
 * directory): header, record rows (exact text), whole-file SHA-256 (`options.sha256`: the digest it
 * landed with, see parseLanded). Throws `NotFound` or `Corrupt`.
 */
export function readLanded(root: string, sessionId: string, which: number | string, options: ParseLandedOptions = {}): LandedFile & { readonly rel: string } {
  checkId("session id", sessionId);
  const dir = join(root, sessionId);
  let rel: string;
  if (typeof which === "number") {
    const ref = scanSession(dir).landed.find((l) => l.seq === which);
    if (!ref) throw new StoreError("NotFound", `${dir}: no landed file with sequence ${which}`, { data: { file: dir, seq: which } });
    rel = ref.rel;
  } else {
    if (which.split("/").some((p) => p === ".." || p === "")) throw new StoreError("InvalidArgument", `${which}: not a path inside the session`);
    rel = which;
  }
  return { ...readLandedPath(join(dir, rel), options), rel };
}

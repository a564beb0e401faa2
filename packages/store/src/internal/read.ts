import { join } from "node:path";
import { StoreError } from "./errors.js";
import { checkId } from "./names.js";
import { parseLandedBytes, readLandedBuffer, readLandedPath, type LandedBytes, type LandedFile, type ParseLandedOptions } from "./landed.js";
import { scanSession } from "./scan.js";

/**
 * Read one landed file of a session by its sequence number (or its path relative to the session
 * directory): header, record rows (exact text), whole-file SHA-256 (`options.sha256`: the digest it
 * landed with, see parseLanded). Throws `NotFound` or `Corrupt`.
 */
export function readLanded(root: string, sessionId: string, which: number | string, options: ParseLandedOptions = {}): LandedFile & { readonly rel: string } {
  const { path, rel } = landedPath(root, sessionId, which);
  return { ...readLandedPath(path, options), rel };
}

/**
 * {@link readLanded}, the record rows left as the file's bytes (one view per line, no newline, never
 * decoded or parsed): for a caller that hands the lines on as they are.
 */
export function readLandedBytes(root: string, sessionId: string, which: number | string, options: ParseLandedOptions = {}): LandedBytes & { readonly rel: string } {
  const { path, rel } = landedPath(root, sessionId, which);
  return { ...parseLandedBytes(readLandedBuffer(path), path, options), rel };
}

/** A session's landed file named by sequence number or relative path: its path and relative path. */
function landedPath(root: string, sessionId: string, which: number | string): { path: string; rel: string } {
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
  return { path: join(dir, rel), rel };
}

import { readFileSync } from "node:fs";
import { writeAtomic } from "@lake/durable";
import { ioError, WalError } from "./errors.js";
import { isFeatureName } from "./features.js";

/** File name of the feature floor in the state root (next to wal/). */
export const FEATURE_FLOOR_FILE = "wal-feature-floor";

/**
 * Read a feature floor file: one feature name per line. A missing file is an empty floor.
 * A malformed line is refused (Corrupt) naming the file.
 */
export function readFeatureFloor(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as { code?: unknown }).code === "ENOENT") return [];
    throw ioError(path, "cannot read feature floor", e);
  }
  const names = text.split("\n").filter((l) => l.length > 0);
  for (const n of names) {
    if (!isFeatureName(n)) throw new WalError("Corrupt", `feature floor line ${JSON.stringify(n)} is not a feature name`, { data: { file: path } });
  }
  return names;
}

let tmpCounter = 0;

/**
 * Raise the feature floor to include `features`: the union of the old floor and the new names,
 * sorted, written to a temporary file (0600, fsynced) and renamed over the old one, then the
 * directory is fsynced. The floor only grows. Returns the names that were added (empty when the
 * floor already covered them, in which case nothing is written). Any failure is a FeatureFloor
 * WalError and leaves the old floor in place.
 */
export function raiseFeatureFloor(path: string, features: readonly string[]): string[] {
  const current = readFeatureFloor(path);
  const have = new Set(current);
  const added = [...new Set(features)].filter((f) => !have.has(f)).sort();
  if (added.length === 0) return [];
  for (const f of added) {
    if (!isFeatureName(f)) throw new WalError("InvalidArgument", `feature name ${JSON.stringify(f)} is malformed`, { data: { file: path } });
  }
  const next = [...new Set([...current, ...added])].sort();
  const tmp = `${path}.tmp-${process.pid}-${++tmpCounter}`;
  try {
    // Leaves no temporary file behind on failure; the old floor is untouched.
    writeAtomic(path, next.map((n) => `${n}\n`).join(""), { temp: tmp, mode: 0o600, label: "feature-floor" });
  } catch (e) {
    throw new WalError("FeatureFloor", `cannot raise the feature floor to ${added.join(", ")}: ${(e as Error).message}`, { data: { file: path }, cause: e });
  }
  return added;
}

/** fsync a directory so a rename or create in it is durable (@lake/durable's error policy). */
export { fsyncDir } from "@lake/durable";

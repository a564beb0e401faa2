// Temporary directories for tests, removed after the test file unless LAKE_KEEP_TMP is set.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];

/** A fresh empty directory under the OS temp dir. */
export function tempDir(label = "lake"): string {
  const dir = mkdtempSync(join(tmpdir(), `${label}-`));
  made.push(dir);
  return dir;
}

/** Remove every directory tempDir made in this process (call from afterAll). */
export function cleanupTempDirs(): void {
  if (process.env.LAKE_KEEP_TMP) return;
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

// Temporary directories for tests, removed after the test file unless LAKE_KEEP_TMP is set.
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];

/**
 * A fresh empty directory under the OS temp dir. `memory: true` puts it on /dev/shm (tmpfs) when
 * that exists and is writable: for a test whose setup lands thousands of files, where waiting for
 * fsync on a shared disk would cost minutes and is not what the test measures.
 */
export function tempDir(label = "lake", options: { memory?: boolean } = {}): string {
  let base = tmpdir();
  if (options.memory) {
    try {
      accessSync("/dev/shm", constants.W_OK);
      base = "/dev/shm";
    } catch {
      /* no tmpfs here: the OS temp dir */
    }
  }
  const dir = mkdtempSync(join(base, `${label}-`));
  made.push(dir);
  return dir;
}

/** Remove every directory tempDir made in this process (call from afterAll). */
export function cleanupTempDirs(): void {
  if (process.env.LAKE_KEEP_TMP) return;
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

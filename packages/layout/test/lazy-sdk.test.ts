// Importing the package and using file:// stores must not load @aws-sdk/client-s3 (about 0.35 s of
// CPU per process start); opening an s3:// store loads it. Checked in a fresh child over dist/.
import { execFile } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { createTestBucket, s3Env } from "@lake/tooling/s3";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";

afterAll(() => cleanupTempDirs());

const child = fileURLToPath(new URL("./workers/sdk-load.mjs", import.meta.url));

interface Counts {
  afterImport: number;
  cryptoAfterImport: boolean;
  afterFile: number;
  localRead: string;
  afterS3Open?: number;
  s3Read?: string;
}

async function run(args: readonly string[]): Promise<Counts> {
  const { stdout } = await promisify(execFile)(process.execPath, [child, ...args], { env: { ...process.env, ...s3Env() } });
  return JSON.parse(stdout.trim()) as Counts;
}

describe("@aws-sdk/client-s3 is loaded lazily", () => {
  it("is not loaded by importing the package or using a file:// store", async () => {
    const r = await run([pathToFileURL(tempDir("layout-lazy")).href]);
    expect(r.localRead).toBe("local");
    expect(r.afterImport).toBe(0);
    expect(r.afterFile).toBe(0);
    // Nor node:crypto: random names come from @lake/durable, and the first hash loads it.
    expect(r.cryptoAfterImport).toBe(false);
  });

  it("is loaded when an s3:// store is opened, which then works", async () => {
    const { url } = await createTestBucket("layout-lazy");
    const r = await run([pathToFileURL(tempDir("layout-lazy")).href, url]);
    expect(r.afterFile).toBe(0);
    expect(r.afterS3Open).toBeGreaterThan(0);
    expect(r.s3Read).toBe("remote");
  });
});

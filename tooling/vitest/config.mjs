// Shared vitest configuration for every lake package and app.
// Each test run writes test-results.json (vitest's JSON reporter) beside the package, which
// .ci/run sums into one "N passed, N failed" line.
import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";

const s3Setup = fileURLToPath(new URL("./s3-global-setup.mjs", import.meta.url));

/**
 * @param {{ s3?: boolean, testTimeout?: number, include?: string[] }} [options]
 *   s3: the package has tests that need the S3 test server; a global setup starts radosgw once
 *   for the run (or uses the one named by LAKE_TEST_S3_ENDPOINT) and fails the run when it cannot.
 */
export function lakeVitestConfig(options = {}) {
  return defineConfig({
    test: {
      include: options.include ?? ["test/**/*.test.ts"],
      // Generous: crash, race and S3 tests run real processes and servers on a small (2-core) machine.
      testTimeout: options.testTimeout ?? 120_000,
      hookTimeout: 120_000,
      pool: "forks",
      globalSetup: options.s3 ? [s3Setup] : [],
      reporters: ["default", ["json", { outputFile: "test-results.json" }]],
      env: {
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      },
    },
  });
}

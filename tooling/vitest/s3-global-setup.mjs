// One S3 server per test run. When LAKE_TEST_S3_ENDPOINT is set (the README's test command
// starts radosgw once for all packages and exports it), that server is used. Otherwise this
// setup starts radosgw itself with tooling/scripts/rgw-start.sh and stops it at teardown.
// A server that cannot be reached or started fails the run with a clear message: never a skip.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const scripts = fileURLToPath(new URL("../scripts/", import.meta.url));

async function reachable(endpoint) {
  try {
    const res = await fetch(endpoint, { signal: AbortSignal.timeout(5000) });
    return res.status > 0;
  } catch {
    return false;
  }
}

/** @param {import('vitest/node').TestProject} project */
export default async function setup(project) {
  let endpoint = process.env.LAKE_TEST_S3_ENDPOINT;
  let accessKeyId = process.env.LAKE_TEST_S3_ACCESS_KEY ?? "test";
  let secretAccessKey = process.env.LAKE_TEST_S3_SECRET_KEY ?? "testsecret";
  let dir;
  if (endpoint) {
    if (!(await reachable(endpoint))) {
      throw new Error(`S3 test server at LAKE_TEST_S3_ENDPOINT=${endpoint} does not answer`);
    }
  } else {
    let out;
    try {
      out = execFileSync("bash", [scripts + "rgw-start.sh"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 300_000,
      });
    } catch (err) {
      const detail = String(err.stderr ?? err.message).trim().split("\n").slice(-3).join(" | ");
      throw new Error(`S3 test server (radosgw) could not start: ${detail}`);
    }
    const env = Object.fromEntries(
      out
        .split("\n")
        .filter((l) => l.includes("="))
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    endpoint = env.LAKE_TEST_S3_ENDPOINT;
    accessKeyId = env.LAKE_TEST_S3_ACCESS_KEY ?? accessKeyId;
    secretAccessKey = env.LAKE_TEST_S3_SECRET_KEY ?? secretAccessKey;
    dir = env.LAKE_TEST_RGW_DIR;
    if (!endpoint) throw new Error(`S3 test server (radosgw) printed no endpoint: ${out}`);
  }
  project.provide("s3", { endpoint, accessKeyId, secretAccessKey, region: "us-east-1" });
  return () => {
    if (dir) execFileSync("bash", [scripts + "rgw-stop.sh", dir], { stdio: "ignore" });
  };
}

// Lease acquire/release latency and CAS throughput on the local and S3 backends, each against a
// baseline measured in the same run on the same backend: a plain unconditional put of the same bytes.
// S3 rows need LAKE_TEST_S3_ENDPOINT (+ _ACCESS_KEY, _SECRET_KEY); without it they are skipped with a note.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { line, measure, report, scale } from "@lake/tooling/bench";
import { acquireLease, casUpdate, openStore, releaseLease, type ObjectStore } from "../src/index.js";

const n = (base: number) => Math.max(3, Math.round(base * scale()));
const body = Buffer.from(JSON.stringify({ status: "held", owner: "bench", epoch: 1, nonce: "0".repeat(32), prev_nonces: [], expires_at: new Date().toISOString() }) + "\n");

async function benchBackend(label: string, store: ObjectStore): Promise<void> {
  const runs = n(40);
  let a = 0;
  let r = 0;
  const baseline = await measure(`${label}: put (unconditional)`, () => store.put("bench/plain.json", body), { runs });
  // acquire a fresh lease each run (create), then release each of them in the same order (CAS)
  const acquire = await measure(`${label}: lease acquire (new lease)`, async () => {
    await acquireLease(store, { repo: "bench", resource: `r${a++}`, owner: "bench", ttlSeconds: 60 });
  }, { runs });
  const release = await measure(`${label}: lease release`, async () => {
    await releaseLease(store, { repo: "bench", resource: `r${r++}`, owner: "bench" });
  }, { runs });
  const cycle = await measure(`${label}: acquire + release (same lease)`, async () => {
    await acquireLease(store, { repo: "bench", resource: "hot", owner: "bench", ttlSeconds: 60 });
    await releaseLease(store, { repo: "bench", resource: "hot", owner: "bench" });
  }, { runs });
  const cas = await measure(`${label}: casUpdate increment (1 writer)`, () => casUpdate<{ n: number }>(store, "bench/counter.json", (c) => ({ n: (c?.n ?? 0) + 1 })), { runs });
  report(`${label}: lease latency and CAS (median per operation)`, baseline, [acquire, release, cycle, cas]);
  // contended throughput: W writers, K increments each, on one key
  for (const writers of [1, 4, 16]) {
    const per = n(writers === 1 ? 40 : 10);
    const key = `bench/contended-${writers}.json`;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: writers }, async () => {
      for (let k = 0; k < per; k++) await casUpdate<{ n: number }>(store, key, (c) => ({ n: (c?.n ?? 0) + 1 }), { maxAttempts: 10_000 });
    }));
    const secs = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    await Promise.all(Array.from({ length: writers }, async (_, w) => {
      for (let k = 0; k < per; k++) await store.put(`bench/plain-${w}.json`, body);
    }));
    const plainSecs = (performance.now() - t1) / 1000;
    line(`${label}: CAS throughput, ${writers} writer(s) on one key`, `${((writers * per) / secs).toFixed(1)} ops/s (plain puts, same writers: ${((writers * per) / plainSecs).toFixed(1)} ops/s; ratio ${(plainSecs / secs).toFixed(2)}x)`);
  }
}

const dir = mkdtempSync(join(tmpdir(), "layout-bench-"));
try {
  const local = openStore(pathToFileURL(join(dir, "fleet")).href);
  await benchBackend("local", local);
  local.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const endpoint = process.env.LAKE_TEST_S3_ENDPOINT;
if (!endpoint) {
  console.log("\n  note: LAKE_TEST_S3_ENDPOINT is not set — S3 rows skipped (source /tmp/rgw.env or start the test server to include them)");
} else {
  const accessKeyId = process.env.LAKE_TEST_S3_ACCESS_KEY ?? "test";
  const secretAccessKey = process.env.LAKE_TEST_S3_SECRET_KEY ?? "testsecret";
  Object.assign(process.env, { AWS_ENDPOINT_URL_S3: endpoint, AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_REGION: "us-east-1", AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" });
  const bucket = `layout-bench-${Date.now().toString(36)}`;
  const admin = new S3Client({ endpoint, region: "us-east-1", forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
  await admin.send(new CreateBucketCommand({ Bucket: bucket }));
  admin.destroy();
  const s3 = openStore(`s3://${bucket}/lake`);
  await benchBackend("s3", s3);
  s3.close();
}

// S3 test helpers: the server the global setup started (vitest `inject("s3")`), and a fresh
// bucket per test so tests never see each other's keys.
import { randomBytes } from "node:crypto";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { inject } from "vitest";

export interface S3TestServer {
  readonly endpoint: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly region: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    s3: S3TestServer;
  }
}

/** The S3 server of this test run. Throws when the package's vitest config did not ask for one. */
export function s3Server(): S3TestServer {
  const server = inject("s3");
  if (!server) throw new Error("no S3 test server: set `s3: true` in this package's lakeVitestConfig");
  return server;
}

/** An S3 client for the test server (path-style, static test credentials). */
export function s3Client(server: S3TestServer = s3Server()): S3Client {
  return new S3Client({
    endpoint: server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
}

/**
 * Create a fresh bucket on the test server and set the AWS environment so code under test that
 * uses the SDK's default chain reaches it. Returns the bucket name and an `s3://bucket/prefix` URL.
 */
export async function createTestBucket(label = "t"): Promise<{ bucket: string; url: string; server: S3TestServer }> {
  const server = s3Server();
  const bucket = `${label.toLowerCase().replace(/[^a-z0-9-]/g, "-").slice(0, 30)}-${randomBytes(6).toString("hex")}`;
  const client = s3Client(server);
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    client.destroy();
  }
  useS3Env(server);
  return { bucket, url: `s3://${bucket}/lake`, server };
}

/** The environment an SDK default chain (and a child process) needs to reach the test server. */
export function s3Env(server: S3TestServer = s3Server()): Record<string, string> {
  return {
    AWS_ENDPOINT_URL_S3: server.endpoint,
    AWS_ACCESS_KEY_ID: server.accessKeyId,
    AWS_SECRET_ACCESS_KEY: server.secretAccessKey,
    AWS_REGION: server.region,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  };
}

/** Put s3Env into this process's environment. */
export function useS3Env(server: S3TestServer = s3Server()): void {
  Object.assign(process.env, s3Env(server));
}

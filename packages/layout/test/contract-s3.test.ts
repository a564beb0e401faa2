import { afterAll } from "vitest";
import { createTestBucket } from "@lake/tooling/s3";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { storeContract } from "../src/testing.js";

afterAll(() => cleanupTempDirs());

storeContract({
  name: "S3 (radosgw)",
  async fresh(label) {
    return (await createTestBucket(`layout-${label}`)).url;
  },
  sibling(url, name) {
    return url.replace(/\/[^/]*$/, `/${name}`);
  },
});

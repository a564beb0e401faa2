import { dirname, join } from "node:path";
import { pathToFileURL, fileURLToPath } from "node:url";
import { afterAll } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { storeContract } from "../src/testing.js";

afterAll(() => cleanupTempDirs());

storeContract({
  name: "local directory",
  async fresh(label) {
    return pathToFileURL(join(tempDir(`layout-${label}`), "fleet")).href;
  },
  sibling(url, name) {
    return pathToFileURL(join(dirname(fileURLToPath(url)), name)).href;
  },
});

import { dirname, join } from "node:path";
import { pathToFileURL, fileURLToPath } from "node:url";
import { readdirSync, rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { storeContract } from "../src/testing.js";
import { openStore } from "../src/index.js";

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

describe("local directory: its temp directory", () => {
  it("is made once, and again when it was removed while the store was open; no temp file is left", async () => {
    const url = pathToFileURL(join(tempDir("layout-tmpdir"), "fleet")).href;
    const store = openStore(url);
    await store.put("a/one", Buffer.from("1"));
    const tmp = join(fileURLToPath(url), ".lake-store", "tmp");
    expect(readdirSync(tmp)).toEqual([]);
    rmSync(tmp, { recursive: true });
    await store.put("a/two", Buffer.from("2"));
    expect(await store.putIfAbsent("a/three", Buffer.from("3"))).toMatchObject({ status: "written" });
    expect(Buffer.from((await store.get("a/two"))!.body).toString()).toBe("2");
    expect(readdirSync(tmp)).toEqual([]);
  });
});

// The records every real fixture gives, as the bytes a landed file holds (JSON.stringify of each
// canonical record, key order included), against digests in test/vectors/record-bytes.json. A change
// to how records are built (their fields, their order) shows here: deliberate ones bump the adapter's
// version and regenerate the vectors (LAKE_UPDATE_VECTORS=1 pnpm vitest run test/record-bytes.test.ts).
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { canonicalize } from "@lake/events";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { parseFile } from "../src/index.js";
import { fixtureFiles } from "./helpers.js";

afterAll(cleanupTempDirs);

const VECTORS = new URL("./vectors/record-bytes.json", import.meta.url);

/** The SHA-256 of a file's records as landed lines (each record's JSON and `\n`), and how many. */
async function digest(f: { path: string; runtime: string; root: string }): Promise<{ records: number; sha256: string }> {
  const h = createHash("sha256");
  let records = 0;
  for await (const r of parseFile(f.path, { runtime: f.runtime, root: f.root })) {
    h.update(JSON.stringify(canonicalize(r, records % 3 === 0 ? ["rule-b", "rule-a", "rule-b"] : [])) + "\n");
    records++;
  }
  return { records, sha256: h.digest("hex") };
}

describe("records as landed bytes", () => {
  it("every fixture gives the records (fields and their order) its vector holds", async () => {
    const got: Record<string, { records: number; sha256: string }> = {};
    for (const f of fixtureFiles().sort((a, b) => (a.path < b.path ? -1 : 1))) got[`${f.runtime}/${f.path.slice(f.root.length + 1)}`] = await digest(f);
    if (process.env.LAKE_UPDATE_VECTORS === "1") writeFileSync(VECTORS, JSON.stringify(got, null, 2) + "\n");
    const want = JSON.parse(readFileSync(VECTORS, "utf8")) as typeof got;
    expect(Object.keys(got).length).toBeGreaterThanOrEqual(10);
    expect(got).toEqual(want);
  });
});

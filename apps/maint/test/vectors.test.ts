// Golden vectors of the on-disk formats (README): compaction gen, derived claim id, digest bytes.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, expect, it } from "vitest";
import { digestKey } from "@lake/layout";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { derivedClaimId } from "../src/internal/claims.js";
import { generationOf } from "../src/internal/compact.js";
import { fixtureRecords, freshStore, initStore, pushSession, row, run, split } from "./helpers.js";

afterAll(cleanupTempDirs);

const vector = (name: string) => JSON.parse(readFileSync(new URL(`./vectors/${name}`, import.meta.url), "utf8"));

it("compaction gen: 32 hex of SHA-256 over the canonical JSON of the sealed-session set", () => {
  const v = vector("compaction-gen.json");
  expect(generationOf(v.dt, v.fleet, v.sessions)).toBe(v.gen);
  expect(generationOf(v.dt, v.fleet, [...v.sessions].reverse())).toBe(v.gen); // order of listing does not matter
  expect(createHash("sha256").update(v.canonical).digest("hex").slice(0, 32)).toBe(v.gen);
});

it("derived claim id", () => {
  const norm = (x: string) => x.trim().replace(/\s+/g, " ");
  for (const v of vector("claim-id.json")) {
    expect(derivedClaimId(v.repo, v.subject, v.text)).toBe(v.claim_id);
    expect("c" + createHash("sha256").update(`${v.repo}\0${norm(v.subject)}\0${norm(v.text)}`).digest("hex").slice(0, 32)).toBe(v.claim_id);
  }
});

it("digest.json bytes of tool_heavy.jsonl in 3 segments", async () => {
  const part = { dt: "2026-02-10", fleet: "f1", runtime: "claude-code", agent: "host-a", session: "d6e0bada-1959-4eec-a9d2-0bfade768d8f" };
  const url = await freshStore("local", "vec");
  const store = await initStore(url);
  await pushSession(store, part, split((await fixtureRecords("tool_heavy.jsonl", part.session)).map((r) => row(r, "host-a")), 3));
  expect((await run(["digest", "--store", url])).code).toBe(0);
  const got = Buffer.from((await store.get(digestKey(part)))!.body).toString("utf8");
  expect(got).toBe(readFileSync(new URL("./vectors/digest-tool_heavy.json", import.meta.url), "utf8"));
  store.close();
});

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { decodeTombstone, encodeTombstone, isLayoutError, listTombstones, openStore, parseKey, tombstoneKey } from "../src/index.js";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";

afterAll(cleanupTempDirs);

const VEC = readFileSync(new URL("./vectors/tombstone.json", import.meta.url));
const ID = "258c7280-ae70-4798-800f-63464d01a85d";

describe("tombstone", () => {
  it("golden vector: key, decode, encode byte for byte", () => {
    expect(createHash("sha256").update(VEC).digest("hex")).toBe("1cae5f09d851501038f4caeaff2c91dc0c43ba9eb3513bad422b2e97ba20d940");
    expect(tombstoneKey(ID)).toBe(`tombstones/${ID}.json`);
    expect(parseKey(`tombstones/${ID}.json`)).toEqual({ kind: "tombstone", session: ID });
    const t = decodeTombstone(VEC, tombstoneKey(ID));
    expect(t).toEqual({ format: 1, session_id: ID, forgotten_at: "2026-08-31T09:12:04.481Z", by: "lake-maint@host-a:4242:0a1b2c" });
    expect(Buffer.from(encodeTombstone(t))).toEqual(VEC);
  });
  it("strict: unknown field, other format, bad time, another key's session, not JSON are Corrupt naming the key", () => {
    const o = JSON.parse(VEC.toString()) as Record<string, unknown>;
    const cases: [unknown, string][] = [
      [{ ...o, text: "x" }, tombstoneKey(ID)],
      [{ ...o, format: 2 }, tombstoneKey(ID)],
      [{ ...o, forgotten_at: "later" }, tombstoneKey(ID)],
      [o, tombstoneKey("other-session")],
    ];
    for (const [v, key] of cases) {
      try {
        decodeTombstone(Buffer.from(JSON.stringify(v)), key);
        expect.unreachable();
      } catch (e) {
        expect(isLayoutError(e) && e.code === "Corrupt" && e.message.startsWith(`${key}: not a tombstone`)).toBe(true);
      }
    }
    expect(() => decodeTombstone(VEC.subarray(0, 20), "k")).toThrow(/k: not a tombstone/);
  });
  it("listTombstones finds every tombstone of a store in one listing", async () => {
    const store = openStore(`file://${tempDir("tomb")}`);
    await store.putIfAbsent(tombstoneKey(ID), encodeTombstone({ format: 1, session_id: ID, forgotten_at: new Date().toISOString(), by: "t" }));
    await store.putIfAbsent("tombstones/not-json.txt", new Uint8Array([1]));
    expect([...(await listTombstones(store))]).toEqual([ID]);
    store.close();
  });
});

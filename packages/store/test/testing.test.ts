// @lake/store/testing: landRoot builds a root through the real store that verify accepts, whose
// index and landed files hold the records given, and that a second landing leaves unchanged.
import { afterAll, describe, expect, it } from "vitest";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { listSessions, readIndex, readLanded, verify } from "../src/index.js";
import { landRoot } from "../src/testing.js";
import { convert } from "./helpers.js";

afterAll(cleanupTempDirs);

const line = (r: Record<string, unknown>) => JSON.stringify(r) + "\n";

describe("landRoot", () => {
  it("lands each session's sources in one pass: verify is clean, the index and files hold the records, a second landing lands nothing", async () => {
    const dir = tempDir("store-testing");
    const root = join(dir, "root");
    const a = join(dir, "a.jsonl");
    const b = join(dir, "b.jsonl");
    const meta = join(dir, "meta.json");
    writeFileSync(a, line({ kind: "user", record_id: "u1", text: "hello" }) + line({ kind: "assistant", record_id: "a1", parent_id: "u1", text: "hi" }) + "not json\n");
    writeFileSync(b, line({ kind: "user", record_id: "u2", text: "other session" }));
    writeFileSync(meta, JSON.stringify({ kind: "meta", record_id: "m1", text: "a sidecar" }, null, 2));
    const first = await landRoot(root, [
      { session: "s-one", path: a },
      { session: "s-one", path: meta, stream: "main", kind: "meta", cursor: "snapshot" },
      { session: "s-two", path: b, runtime: "claude-code", convert },
    ]);
    expect([...first.keys()]).toEqual(["s-one", "s-two"]);
    expect(first.get("s-one")).toMatchObject({ landed: 2, records: 4, failed: false });
    expect(first.get("s-two")).toMatchObject({ landed: 1, records: 1, failed: false });
    const v = verify(root);
    expect(v.problems).toEqual([]);
    expect(v).toMatchObject({ ok: true, sessions: 2, files: 3, records: 5 });
    expect(listSessions(root).sort()).toEqual(["s-one", "s-two"]);

    const idx = readIndex(root, "s-one");
    expect(idx.indexedSeq).toBe(2);
    expect(idx.entries.map((e) => [e.kind, e.record_id ?? null, e.file_kind])).toEqual([
      ["user", "u1", "transcript"], ["assistant", "a1", "transcript"], ["unknown", null, "transcript"], ["meta", "m1", "meta"],
    ]);
    const rows = readLanded(root, "s-one", 1).rows.map((r) => JSON.parse(r) as { text?: string; raw?: string });
    expect(rows.map((r) => r.text ?? r.raw)).toEqual(["hello", "hi", "not json"]);
    expect(rows[0]).toMatchObject({ runtime: "test", session_id: "s-one", stream: "main", source_path: "a.jsonl", source_line: 1, adapter: "lake-test" });
    // The stand-in adapter of this package's tests decides kind from `type`: its records landed as it made them.
    expect(readIndex(root, "s-two").entries.map((e) => e.kind)).toEqual(["meta"]);

    const again = await landRoot(root, [{ session: "s-one", path: a }, { session: "s-two", path: b, convert }]);
    expect(again.get("s-one")).toMatchObject({ landed: 0, records: 0 });
    expect(again.get("s-two")).toMatchObject({ landed: 0, records: 0 });

    appendFileSync(a, line({ kind: "user", record_id: "u3", text: "more" }));
    const grown = await landRoot(root, [{ session: "s-one", path: a }]);
    expect(grown.get("s-one")).toMatchObject({ landed: 1, records: 1 });
    expect(readIndex(root, "s-one").entries.map((e) => e.record_id ?? null)).toEqual(["u1", "a1", null, "m1", "u3"]);
    expect(verify(root).ok).toBe(true);
  });
});

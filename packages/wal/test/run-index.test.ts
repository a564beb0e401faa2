import Database from "better-sqlite3";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { isWalError, RunIndexReader } from "../src/run-index.js";

afterAll(cleanupTempDirs);

/** A run-index.db as broca keeps it: journal_mode=WAL, one writer connection left open. */
function brocaDb(path: string, instance: string): Database.Database {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("wal_autocheckpoint = 0");
  db.exec(`
    CREATE TABLE IF NOT EXISTS export_facts (export_seq INTEGER PRIMARY KEY AUTOINCREMENT, fact_id TEXT NOT NULL UNIQUE, run_id TEXT NOT NULL, segment_json TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS export_facts_run_id ON export_facts(run_id);
    CREATE TABLE IF NOT EXISTS export_meta (id INTEGER PRIMARY KEY CHECK (id = 1), source_epoch INTEGER NOT NULL DEFAULT 1, source_instance_id TEXT NOT NULL, high_water INTEGER NOT NULL DEFAULT 0);
  `);
  db.prepare("INSERT OR REPLACE INTO export_meta (id, source_epoch, source_instance_id, high_water) VALUES (1, 1, ?, 0)").run(instance);
  return db;
}

function insertFact(db: Database.Database, n: number, usage: Record<string, number> = { input_tokens: n }): void {
  const seg = {
    run_id: `run-${n}`,
    session: { project_root: "/p", harness: "h", session: "s" },
    segment_ordinal: 0,
    fact_id: `f${n}`,
    provider: "anthropic",
    model: "claude",
    auth_selection: null,
    charge_basis: n % 2 ? "metered_api" : "a_future_basis",
    usage,
    retries_used: 0,
    occurred_at_precision: "terminal",
    some_future_field: true,
  };
  db.transaction(() => {
    db.prepare("INSERT OR IGNORE INTO export_facts (fact_id, run_id, segment_json) VALUES (?, ?, ?)").run(`f${n}`, `run-${n}`, JSON.stringify(seg));
    db.prepare("UPDATE export_meta SET high_water = (SELECT MAX(export_seq) FROM export_facts) WHERE id = 1").run();
  })();
}

describe("RunIndexReader", () => {
  it("reads committed rows still in the -wal sidecar (mode=ro, not immutable) with an incremental cursor", () => {
    const path = join(tempDir("wal-ri"), "run-index.db");
    const writer = brocaDb(path, "inst-1");
    for (let i = 1; i <= 5; i++) insertFact(writer, i, i === 3 ? {} : { input_tokens: i, output_tokens: 0 });
    expect(existsSync(`${path}-wal`)).toBe(true);
    const r = RunIndexReader.open(path);
    const b1 = r.readFacts(null, { limit: 3 });
    expect(b1.reset).toBe(false);
    expect(b1.meta).toEqual({ sourceInstanceId: "inst-1", sourceEpoch: 1, highWater: 5 });
    expect(b1.facts.map((f) => f.exportSeq)).toEqual([1, 2, 3]);
    expect(b1.facts[2]!.segment.usage).toEqual({});
    expect(b1.facts[1]!.segment.usage).toEqual({ input_tokens: 2, output_tokens: 0 });
    expect(b1.facts[1]!.segment.charge_basis).toBe("a_future_basis");
    expect(b1.facts[0]!.segment["some_future_field"]).toBe(true);
    const b2 = r.readFacts(b1.cursor);
    expect(b2.facts.map((f) => f.exportSeq)).toEqual([4, 5]);
    // New rows committed by the live writer appear on the next read.
    insertFact(writer, 6);
    const b3 = r.readFacts(b2.cursor);
    expect(b3.facts.map((f) => f.runId)).toEqual(["run-6"]);
    expect(r.readFacts(b3.cursor).facts).toEqual([]);
    expect(r.readFacts(b3.cursor).cursor).toEqual(b3.cursor);
    r.close();
    writer.close();
  });

  it("a new source_instance_id resets the cursor", () => {
    const dir = tempDir("wal-ri");
    const path = join(dir, "run-index.db");
    const w1 = brocaDb(path, "inst-A");
    for (let i = 1; i <= 3; i++) insertFact(w1, i);
    const r1 = RunIndexReader.open(path);
    const c = r1.readFacts(null).cursor;
    expect(c).toEqual({ sourceInstanceId: "inst-A", sourceEpoch: 1, exportSeq: 3 });
    r1.close();
    w1.close();
    // The database is replaced: a different export stream.
    const path2 = join(dir, "run-index-2.db");
    const w2 = brocaDb(path2, "inst-B");
    for (let i = 1; i <= 4; i++) insertFact(w2, 10 + i);
    const r2 = RunIndexReader.open(path2);
    const b = r2.readFacts(c);
    expect(b.reset).toBe(true);
    expect(b.facts.map((f) => f.exportSeq)).toEqual([1, 2, 3, 4]);
    expect(b.cursor.sourceInstanceId).toBe("inst-B");
    expect(r2.readFacts(b.cursor).reset).toBe(false);
    r2.close();
    w2.close();
  });

  it("refuses a missing database and malformed segment_json with a WalError naming the file", () => {
    const dir = tempDir("wal-ri");
    try {
      RunIndexReader.open(join(dir, "nope.db"));
      expect.unreachable();
    } catch (e) {
      expect(isWalError(e) && e.message.includes("nope.db")).toBe(true);
    }
    const path = join(dir, "run-index.db");
    const w = brocaDb(path, "i");
    w.prepare("INSERT INTO export_facts (fact_id, run_id, segment_json) VALUES ('f', 'r', '{oops')").run();
    const r = RunIndexReader.open(path);
    try {
      r.readFacts(null);
      expect.unreachable();
    } catch (e) {
      expect(isWalError(e) && e.code).toBe("Corrupt");
    }
    r.close();
    w.close();
  });
});

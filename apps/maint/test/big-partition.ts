// A large partition from real rows: the records of one real Claude Code session (the long fixture)
// written once as a bronze segment, then copied under fresh session ids (and usage keys) until the
// partition holds the rows asked for — each copy a hashed segment (copyParquet) with its _SEALED,
// uploaded as push lays them out.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { encodeSealed, sealedKey, segmentKey, type ObjectStore, type SessionPartition } from "@lake/layout";
import { copyParquet, sqlString, writeSegment } from "@lake/segments";
import { fixtureRecords } from "./helpers.js";

/** What {@link bigPartition} wrote. */
export interface BigPartition {
  readonly rows: number;
  readonly sessions: number;
  readonly segments: number;
  /** Local copies of the segments, in segment order. */
  readonly paths: string[];
}

/**
 * Fill (dt, fleet) of `store` with at least `rows` rows in sealed sessions of `segmentsPerSession`
 * segments. `overlap`: each segment after a session's first starts that many rows early, repeating
 * the end of the segment before (as a push that sent rows again would): copies compaction drops.
 * `repeatFirst`: each session gets one more segment, a copy of its first (a push that sent a whole
 * segment again): all its rows dropped but those without content.
 */
export async function bigPartition(store: ObjectStore, dir: string, o: { rows: number; dt: string; fleet: string; segmentsPerSession?: number; overlap?: number; repeatFirst?: boolean }): Promise<BigPartition> {
  mkdirSync(dir, { recursive: true });
  const recs = await fixtureRecords("long_session.jsonl", "template");
  const template = join(dir, "template.parquet");
  await writeSegment(template, recs.map((r) => ({ ...r, agent: "host-a" })), "bronze");
  const per = o.segmentsPerSession ?? 2;
  const cut = Math.ceil(recs.length / per);
  const db = await DuckDBInstance.create(":memory:", { threads: "1" });
  const conn = await db.connect();
  const paths: string[] = [];
  let rows = 0;
  let sessions = 0;
  try {
    await conn.run(`CREATE TABLE t AS SELECT *, file_row_number AS _rn FROM read_parquet(${sqlString(template)}, file_row_number = true)`);
    while (rows < o.rows) {
      const sid = `big-${String(sessions).padStart(5, "0")}`;
      const part: SessionPartition = { dt: o.dt, fleet: o.fleet, runtime: "claude-code", agent: "host-a", session: sid };
      let n = 0;
      let firstRows = 0;
      for (let s = 0; s < per; s++) {
        const path = join(dir, `${sid}-${s}.parquet`);
        const from = Math.max(0, s * cut - (s > 0 ? (o.overlap ?? 0) : 0));
        const sel = `SELECT * EXCLUDE (_rn, file_row_number) REPLACE (${sqlString(sid)} AS session_id, usage_key || ${sqlString(`:${sid}`)} AS usage_key) FROM t WHERE _rn >= ${from} AND _rn < ${(s + 1) * cut} ORDER BY _rn`;
        const info = await copyParquet(conn, sel, path);
        await store.upload(segmentKey(part, s), { path });
        paths.push(path);
        n += info.rows;
        if (s === 0) firstRows = info.rows;
      }
      if (o.repeatFirst) {
        const first = paths[paths.length - per]!;
        await store.upload(segmentKey(part, per), { path: first });
        paths.push(first);
        n += firstRows;
      }
      await store.putIfAbsent(sealedKey(part), encodeSealed({ sealed_at: "2026-01-16T00:00:00.000Z", segments: per + (o.repeatFirst ? 1 : 0), rows: n }));
      rows += n;
      sessions++;
    }
  } finally {
    conn.closeSync();
    db.closeSync();
  }
  return { rows, sessions, segments: paths.length, paths };
}

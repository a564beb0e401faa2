// `snapshot`: fold the promoted claims into one SQLite file (deterministic bytes), publish it as
// snapshot/<sha256>.sqlite, then swap snapshot/latest.json (both through @lake/layout).
import { join } from "node:path";
import Database from "better-sqlite3";
import { SNAPSHOT_CLAIM_COLUMNS, SNAPSHOT_DDL, SNAPSHOT_SCHEMA_VERSION, publishSnapshot, type ObjectStore } from "@lake/layout";
import { scratch, withLease, type MaintContext } from "./context.js";
import { listFleetClaims, type FleetClaim } from "./claims.js";
import { MaintError } from "./errors.js";

export { SNAPSHOT_DDL, SNAPSHOT_SCHEMA_VERSION };

/** Every promoted claim, sorted by claim_id. */
export async function readFleetClaims(store: ObjectStore): Promise<FleetClaim[]> {
  return (await listFleetClaims(store)).map((c) => c.claim);
}

/**
 * Write the snapshot file for `claims` at `path` (which must not exist). The same claims give the
 * same bytes: fixed page size, rows inserted in claim_id order in one transaction, FTS rebuilt,
 * then VACUUM; no time or random value is stored.
 */
export function buildSnapshotFile(path: string, claims: readonly FleetClaim[]): void {
  const db = new Database(path);
  try {
    db.pragma("page_size = 4096");
    db.pragma("journal_mode = DELETE");
    db.pragma("encoding = 'UTF-8'");
    const sorted = [...claims].sort((a, b) => (a.claim_id < b.claim_id ? -1 : a.claim_id > b.claim_id ? 1 : 0));
    db.transaction(() => {
      for (const ddl of SNAPSHOT_DDL) db.exec(ddl);
      const ins = db.prepare(`INSERT INTO claims (${SNAPSHOT_CLAIM_COLUMNS.join(", ")}) VALUES (${SNAPSHOT_CLAIM_COLUMNS.map((c) => (c === "embedding" ? "NULL" : "?")).join(", ")})`);
      for (const c of sorted) ins.run(c.claim_id, c.agent, c.repo, c.subject, c.text, c.kind, c.proposed_at, c.promoted_at);
      db.exec("INSERT INTO claims_fts(claims_fts) VALUES('rebuild')");
      const meta = db.prepare("INSERT INTO meta (key, value) VALUES (?, ?)");
      meta.run("schema_version", String(SNAPSHOT_SCHEMA_VERSION));
      meta.run("claims", String(sorted.length));
    })();
    db.exec("VACUUM");
  } finally {
    db.close();
  }
}

/** What snapshot did. */
export interface SnapshotReport {
  readonly status: "published" | "unchanged" | "held";
  readonly content_hash?: string;
  readonly previous?: string | undefined;
  readonly claims?: number;
  readonly epoch?: number;
  readonly held_by?: string;
}

/** `snapshot`: fold, publish the blob (create-only), swap latest.json; unchanged folds publish nothing. */
export async function runSnapshot(ctx: MaintContext): Promise<SnapshotReport> {
  const r = await withLease(ctx, "snapshot", async (lease): Promise<SnapshotReport> => {
    const claims = await readFleetClaims(ctx.store);
    const tmp = scratch("snapshot");
    try {
      const path = join(tmp.dir, "snapshot.sqlite");
      buildSnapshotFile(path, claims);
      await lease.check();
      const p = await publishSnapshot(ctx.store, { path }, { accept: () => !lease.lost });
      if (lease.lost) throw new MaintError("LeaseLost", `snapshot/latest.json: lease snapshot (epoch ${lease.epoch}) lost before the swap`, { data: { store: ctx.store.url } });
      return { status: p.swapped ? "published" : "unchanged", content_hash: p.content_hash, previous: p.previous, claims: claims.length, epoch: lease.epoch };
    } finally {
      tmp.done();
    }
  });
  if (!r.held) return { status: "held", held_by: r.owner };
  return r.value;
}

// The snapshot pointer `snapshot/latest.json` ({content_hash}, swapped by compare-and-swap) and the
// schema of the blob it names, `snapshot/<sha256>.sqlite` (a SQLite file: promoted claims + FTS5).
import { corrupt, jsonObject } from "./json.js";

/** snapshot/latest.json: the content hash of the current blob (plus casUpdate's nonce fields). */
export interface SnapshotPointer {
  readonly content_hash: string;
}

/** Decode snapshot/latest.json strictly; Corrupt (naming `key`) unless content_hash is 64 lowercase hex digits. */
export function decodeSnapshotPointer(key: string, body: Uint8Array): SnapshotPointer {
  const v = jsonObject(key, body);
  if (typeof v.content_hash !== "string" || !/^[0-9a-f]{64}$/.test(v.content_hash)) throw corrupt(key, "content_hash is not 64 hex digits");
  return { content_hash: v.content_hash };
}

/** Schema version recorded in the snapshot's meta table (`meta.schema_version`). */
export const SNAPSHOT_SCHEMA_VERSION = 1;

/** The snapshot schema, exactly: the writer runs these statements, readers rely on them. */
export const SNAPSHOT_DDL = [
  "CREATE TABLE claims (claim_id TEXT PRIMARY KEY, agent TEXT NOT NULL, repo TEXT, subject TEXT, text TEXT NOT NULL, kind TEXT, proposed_at TEXT, promoted_at TEXT, embedding BLOB)",
  "CREATE VIRTUAL TABLE claims_fts USING fts5(subject, text, content='claims', content_rowid='rowid')",
  "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
] as const;

/** The claims table's columns in order (the INSERT the writer runs; `embedding` is NULL for now). */
export const SNAPSHOT_CLAIM_COLUMNS = ["claim_id", "agent", "repo", "subject", "text", "kind", "proposed_at", "promoted_at", "embedding"] as const;

/** Decode a blob's `meta` rows; Corrupt (naming `key`) unless schema_version is the one this package knows and claims is a count. */
export function decodeSnapshotMeta(key: string, rows: readonly { readonly key: string; readonly value: string }[]): { schema_version: number; claims: number } {
  const m = new Map(rows.map((r) => [r.key, r.value]));
  const v = Number(m.get("schema_version"));
  if (v !== SNAPSHOT_SCHEMA_VERSION) throw corrupt(key, `meta.schema_version ${JSON.stringify(m.get("schema_version"))} is not ${SNAPSHOT_SCHEMA_VERSION}`);
  const n = Number(m.get("claims"));
  if (!Number.isSafeInteger(n) || n < 0) throw corrupt(key, `meta.claims ${JSON.stringify(m.get("claims"))} is not a count`);
  return { schema_version: v, claims: n };
}

import { createRequire } from "node:module";
import type Database from "better-sqlite3";

// better-sqlite3 (a native module) is loaded only when a run-index reader is opened, so the
// frame codec and the writer start without it (a hook appends a frame on every tool call).
const requireCjs = createRequire(import.meta.url);
let sqlite: typeof Database | undefined;
function openDatabase(path: string, options: Database.Options): Database.Database {
  sqlite ??= requireCjs("better-sqlite3") as typeof Database;
  return new sqlite(path, options);
}
import { z } from "zod";
import { ioError, WalError } from "./errors.js";
import { SessionTripleSchema, UsageSchema } from "./records.js";

/** export_meta's single row: the identity of an export stream. */
export interface ExportMeta {
  /** Minted once when the database is created; part of every fact_id. */
  readonly sourceInstanceId: string;
  /** Written as 1 and never changed. */
  readonly sourceEpoch: number;
  /** MAX(export_seq) after the latest fact batch. */
  readonly highWater: number;
}

/** An incremental reader's position in one export stream. */
export interface ExportCursor {
  readonly sourceInstanceId: string;
  readonly sourceEpoch: number;
  /** The last export_seq read (0 before the first). */
  readonly exportSeq: number;
}

/** segment_json: one billing-homogeneous slice of a finished run. Unknown members are kept. */
export const ExportSegmentSchema = z.looseObject({
  run_id: z.string(),
  session: SessionTripleSchema,
  segment_ordinal: z.number(),
  fact_id: z.string(),
  provider: z.string(),
  model: z.string(),
  auth_selection: z.string().nullable().optional(),
  account_ref: z.string().optional(),
  resolved_credential_id: z.string().optional(),
  vault_request: z.unknown().optional(),
  work_class: z.string().optional(),
  /** metered_api, subscription_included, unknown, or a later build's value. */
  charge_basis: z.string(),
  charge_basis_mapping_version: z.unknown().optional(),
  charge_basis_overrides: z.string().optional(),
  usage_policy_version: z.unknown().optional(),
  usage: UsageSchema,
  usage_by_service_tier: z.record(z.string(), UsageSchema).optional(),
  retries_used: z.number().optional(),
  pricing_at_ms: z.number().optional(),
  pricing_at_precision: z.string().optional(),
  occurred_at_ms: z.number().optional(),
  occurred_at_precision: z.string().optional(),
  terminal_reason: z.string().optional(),
});

/** A decoded export_facts segment. */
export type ExportSegment = z.output<typeof ExportSegmentSchema>;

/** One export_facts row. */
export interface ExportFact {
  readonly exportSeq: number;
  readonly factId: string;
  readonly runId: string;
  /** The parsed segment_json. */
  readonly segment: ExportSegment;
}

/** One incremental read. */
export interface ExportBatch {
  /** The stream's identity at the time of the read. */
  readonly meta: ExportMeta;
  /** Facts after the cursor, in export_seq order. */
  readonly facts: readonly ExportFact[];
  /** The cursor to pass to the next read. */
  readonly cursor: ExportCursor;
  /** True when the given cursor belonged to another stream (new source_instance_id or epoch) and reading restarted from the beginning. */
  readonly reset: boolean;
}

/**
 * A read-only reader of run-index.db's export lane. Opened with SQLITE_OPEN_READONLY (mode=ro),
 * never immutable=1 (which would hide rows still in the -wal sidecar). Every read is one short
 * read transaction; nothing is held open between calls.
 */
export class RunIndexReader {
  readonly path: string;
  #db: Database.Database;

  private constructor(path: string, db: Database.Database) {
    this.path = path;
    this.#db = db;
  }

  /** Open run-index.db read-only. The file must exist. */
  static open(path: string): RunIndexReader {
    try {
      const db = openDatabase(path, { readonly: true, fileMustExist: true });
      return new RunIndexReader(path, db);
    } catch (e) {
      throw ioError(path, "cannot open run-index.db read-only", e);
    }
  }

  #meta(): ExportMeta {
    const row = this.#db
      .prepare("SELECT source_instance_id AS s, source_epoch AS e, high_water AS h FROM export_meta WHERE id = 1")
      .get() as { s: unknown; e: unknown; h: unknown } | undefined;
    if (row === undefined) throw new WalError("NotFound", "export_meta has no row", { data: { file: this.path } });
    if (typeof row.s !== "string" || typeof row.e !== "number" || typeof row.h !== "number") {
      throw new WalError("Corrupt", "export_meta row has unexpected column types", { data: { file: this.path } });
    }
    return { sourceInstanceId: row.s, sourceEpoch: row.e, highWater: row.h };
  }

  #wrap<T>(what: string, fn: () => T): T {
    try {
      return this.#db.transaction(fn)();
    } catch (e) {
      throw ioError(this.path, what, e);
    }
  }

  /** Read export_meta (one short read transaction). */
  meta(): ExportMeta {
    return this.#wrap("cannot read export_meta", () => this.#meta());
  }

  /**
   * Read up to `limit` facts after `cursor` (all facts when the cursor is null) in one short read
   * transaction. A cursor from another stream (different source_instance_id or source_epoch) is
   * reset: reading restarts from the first fact and `reset` is true.
   */
  readFacts(cursor: ExportCursor | null, options: { readonly limit?: number } = {}): ExportBatch {
    const limit = options.limit ?? 10_000;
    return this.#wrap("cannot read export_facts", () => {
      const meta = this.#meta();
      const same = cursor !== null && cursor.sourceInstanceId === meta.sourceInstanceId && cursor.sourceEpoch === meta.sourceEpoch;
      const after = same ? cursor.exportSeq : 0;
      const rows = this.#db
        .prepare("SELECT export_seq AS q, fact_id AS f, run_id AS r, segment_json AS j FROM export_facts WHERE export_seq > ? ORDER BY export_seq LIMIT ?")
        .all(after, limit) as { q: number; f: string; r: string; j: string }[];
      const facts: ExportFact[] = rows.map((row) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(row.j);
        } catch {
          throw new WalError("Corrupt", `export_facts row ${row.q} segment_json is not JSON`, { data: { file: this.path } });
        }
        const s = ExportSegmentSchema.safeParse(parsed);
        if (!s.success) {
          const i = s.error.issues[0];
          throw new WalError("Corrupt", `export_facts row ${row.q} segment_json does not decode (${i?.path.join(".") ?? ""}: ${i?.message ?? ""})`, { data: { file: this.path } });
        }
        return { exportSeq: row.q, factId: row.f, runId: row.r, segment: s.data };
      });
      const last = facts.at(-1)?.exportSeq ?? after;
      return {
        meta,
        facts,
        cursor: { sourceInstanceId: meta.sourceInstanceId, sourceEpoch: meta.sourceEpoch, exportSeq: last },
        reset: cursor !== null && !same,
      };
    });
  }

  /** Close the connection. */
  close(): void {
    this.#db.close();
  }
}

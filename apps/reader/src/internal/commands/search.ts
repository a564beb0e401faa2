// search: SQLite FTS5 over the snapshot's claims and over a local index of event text.
import { decodeSnapshotMeta, isLayoutError } from "@lake/layout/formats";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { replaceFrom } from "@lake/durable";
import Database from "better-sqlite3";
import { count, flag, type RunContext } from "@lake/cli";
import { COMMON, fleetFiles, keptAnswer, locations, useReadModel, usageError, type Io, type Locations } from "../context.js";
import { ReaderError } from "../errors.js";
import { clip, renderTable, toJson } from "../format.js";
import { ReadModel, firstLine } from "../readmodel.js";
import { readerCommand } from "./parse.js";

/** TEXT as an FTS5 query: every word quoted (so operators and punctuation are literal), all required. */
export function ftsQuery(text: string): string {
  const words = text.split(/\s+/).filter((w) => w.length > 0);
  return words.map((w) => `"${w.replace(/"/g, '""')}"`).join(" ");
}

const SEARCH_OPTIONS = {
  ...COMMON,
  limit: count("N", "at most N hits of each kind (default 20)", { min: 1, default: 20 }),
  json: flag('print {"query", "events": [...], "claims": [...]}'),
} as const;

async function search({ values, positionals, io }: RunContext<typeof SEARCH_OPTIONS, Io>): Promise<number> {
  const text = positionals.join(" ").trim();
  if (!text) throw usageError("search: expected TEXT");
  const { events, claims, snapshot } = await searchFleet(locations(values, io.env, io.damaged), text, values.limit);
  if (values.json) {
    io.out(toJson({ query: text, events, claims }) + "\n");
    return 0;
  }
  const out: string[] = [];
  out.push(`events (${events.length})`);
  if (events.length) out.push(renderTable(["Session", "Stream", "Time (UTC)", "Kind", "Match"], events.map((e) => [e.session_id, e.stream, (e.ts ?? "").slice(0, 19).replace("T", " "), e.kind, clip(e.snippet, 100)])));
  out.push(`claims (${claims.length})${snapshot ? "" : " — the store has no snapshot"}`);
  if (claims.length) out.push(renderTable(["Claim", "Agent", "Subject", "Match"], claims.map((c) => [c.claim_id, c.agent, clip(c.subject ?? "", 30), clip(c.snippet, 90)])));
  io.out(out.join("\n") + "\n");
  return 0;
}

/** `lake-reader search`. */
export const searchCommand = readerCommand({
  usage: "TEXT [options]",
  description: `Full-text search (SQLite FTS5): the claims of the current snapshot (snapshot/latest.json), and the
text of every event (user and assistant text, tool input and output) through an index the reader
builds in its cache (<cache>/search/<fingerprint>.sqlite, rebuilt when the store changes). Every
word of TEXT must match; results are ranked by bm25. No hit is not an error.`,
  options: SEARCH_OPTIONS,
  positionals: { names: "TEXT", min: 0, max: Number.MAX_SAFE_INTEGER },
  run: search,
});

/** Search a fleet: the hits `search TEXT --json` prints, whether the store has a snapshot, and the fingerprint of the fleet state searched. */
export async function searchFleet(loc: Locations, text: string, limit: number): Promise<{ events: EventHit[]; claims: ClaimHit[]; snapshot: boolean; fingerprint: string }> {
  const files = await fleetFiles(loc);
  const q = ftsQuery(text);
  const index = await ensureIndex(files, loc.cache, loc.fleet ? loc : undefined);
  const events = queryIndex(index, q, limit);
  const claims = files.snapshot ? queryClaims(files.snapshot, q, limit) : [];
  return { events, claims, snapshot: files.snapshot !== undefined, fingerprint: files.fingerprint };
}

/** An event hit. */
export interface EventHit {
  session_id: string;
  stream: string;
  ts: string | null;
  kind: string;
  tool_name: string | null;
  snippet: string;
}

/** A claim hit. */
export interface ClaimHit {
  claim_id: string;
  agent: string;
  repo: string | null;
  subject: string | null;
  kind: string | null;
  snippet: string;
}

/**
 * Build (once per fingerprint) the local FTS5 index of event text; returns its path. `kept`: the
 * locations of a long-running process, whose kept read model the index is built from (once: the
 * build is one of the fleet state's answers).
 */
export async function ensureIndex(files: Awaited<ReturnType<typeof fleetFiles>>, cacheDir: string, kept?: Locations): Promise<string> {
  const path = join(cacheDir, "search", `events-${files.fingerprint.slice(0, 24)}.sqlite`);
  if (existsSync(path)) return path;
  if (kept) return keptAnswer(kept, files, "search-index", () => useReadModel(kept, files, (rm) => buildIndex(rm, path)));
  const rm = await ReadModel.open(files);
  try {
    return await buildIndex(rm, path);
  } finally {
    rm.close();
  }
}

async function buildIndex(rm: ReadModel, path: string): Promise<string> {
  if (existsSync(path)) return path;
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  rmSync(tmp, { force: true });
  let db: Database.Database | undefined;
  try {
    db = new Database(tmp);
    db.pragma("journal_mode = OFF");
    db.pragma("synchronous = OFF");
    db.exec(
      "CREATE VIRTUAL TABLE events_fts USING fts5(text, session_id UNINDEXED, stream UNINDEXED, ts UNINDEXED, kind UNINDEXED, tool_name UNINDEXED, tokenize = 'unicode61')",
    );
    const ins = db.prepare("INSERT INTO events_fts (text, session_id, stream, ts, kind, tool_name) VALUES (?, ?, ?, ?, ?, ?)");
    const res = await rm.conn.stream(`
      SELECT concat_ws(' ', text, tool_input, CASE WHEN kind = 'unknown' THEN raw END) AS body, session_id, stream,
        strftime(ts, '%Y-%m-%dT%H:%M:%S.%gZ') AS ts, kind, tool_name
      FROM events WHERE NOT coalesce(replayed, false) AND (text IS NOT NULL OR tool_input IS NOT NULL OR raw IS NOT NULL)`);
    const insertChunk = db.transaction((cols: unknown[][], n: number) => {
      for (let i = 0; i < n; i++) ins.run(cols[0]![i] ?? "", cols[1]![i], cols[2]![i], cols[3]![i] ?? null, cols[4]![i], cols[5]![i] ?? null);
    });
    for (;;) {
      const chunk = await res.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      insertChunk(chunk.getColumns() as unknown[][], chunk.rowCount);
    }
    db.exec("INSERT INTO events_fts(events_fts) VALUES ('optimize')");
    db.close();
    db = undefined;
    replaceFrom(tmp, path, { syncTemp: true });
  } catch (e) {
    db?.close();
    rmSync(tmp, { force: true });
    if (e instanceof ReaderError) throw e;
    throw new ReaderError("Io", `${path}: cannot build the search index: ${firstLine((e as Error).message)}`, { data: { file: path }, cause: e });
  }
  return path;
}

function queryIndex(path: string, q: string, limit: number): EventHit[] {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare(
        `SELECT session_id, stream, ts, kind, tool_name, snippet(events_fts, 0, '[', ']', '…', 16) AS snippet
         FROM events_fts WHERE events_fts MATCH ? ORDER BY rank LIMIT ?`,
      )
      .all(q, limit) as EventHit[];
  } catch (e) {
    throw new ReaderError("Corrupt", `${path}: search failed: ${firstLine((e as Error).message)}`, { data: { file: path }, cause: e });
  } finally {
    db.close();
  }
}

function openSnapshot(path: string): Database.Database {
  try {
    return new Database(path, { readonly: true, fileMustExist: true });
  } catch (e) {
    throw new ReaderError("Corrupt", `${path}: cannot open the snapshot: ${firstLine((e as Error).message)}`, { data: { file: path }, cause: e });
  }
}

/** Every claim of the current snapshot, by claim id, and the snapshot's content hash (null when the store has none). */
export async function snapshotClaims(loc: Locations): Promise<{ snapshot: string | null; claims: Record<string, unknown>[] }> {
  const files = await fleetFiles(loc);
  if (!files.snapshot) return { snapshot: null, claims: [] };
  const hash = /([0-9a-f]{64})\.sqlite/.exec(files.snapshot.replace(/\\/g, "/"))?.[1] ?? null;
  const db = openSnapshot(files.snapshot);
  try {
    const claims = db.prepare("SELECT claim_id, agent, repo, subject, text, kind, proposed_at, promoted_at FROM claims ORDER BY claim_id").all() as Record<string, unknown>[];
    return { snapshot: hash, claims };
  } catch (e) {
    throw new ReaderError("Corrupt", `${files.snapshot}: cannot read claims: ${firstLine((e as Error).message)}`, { data: { file: files.snapshot }, cause: e });
  } finally {
    db.close();
  }
}

/** Search the claims of a snapshot SQLite (claims + claims_fts). */
export function queryClaims(path: string, q: string, limit: number): ClaimHit[] {
  const db = openSnapshot(path);
  try {
    // The blob's schema is @lake/layout's: refuse one of another schema version, naming it.
    try {
      decodeSnapshotMeta(path, db.prepare("SELECT key, value FROM meta").all() as { key: string; value: string }[]);
    } catch (e) {
      if (isLayoutError(e, "Corrupt")) throw new ReaderError("Corrupt", e.message, { data: { file: path }, cause: e });
      throw e;
    }
    return db
      .prepare(
        `SELECT c.claim_id, c.agent, c.repo, c.subject, c.kind, snippet(claims_fts, 1, '[', ']', '…', 16) AS snippet
         FROM claims_fts JOIN claims c ON c.rowid = claims_fts.rowid
         WHERE claims_fts MATCH ? ORDER BY rank LIMIT ?`,
      )
      .all(q, limit) as ClaimHit[];
  } catch (e) {
    throw new ReaderError("Corrupt", `${path}: snapshot search failed: ${firstLine((e as Error).message)}`, { data: { file: path }, cause: e });
  } finally {
    db.close();
  }
}

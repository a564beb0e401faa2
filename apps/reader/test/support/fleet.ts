// Build real fleet stores for tests: bronze segments written by @lake/segments under the layout's
// keys, _SEALED markers, compacted generations with _COMPACTED, snapshots.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { recordDay, type CanonicalRecord } from "@lake/events";
import { SegmentWriter, type FleetRow } from "@lake/segments";

/** Where one session's bronze lives. */
export interface PushedSession {
  readonly dt: string;
  readonly runtime: string;
  readonly agent: string;
  readonly session: string;
  readonly dir: string;
}

/** Session id as a safe partition value (the collector's rule is the layout's; test ids are safe). */
export function sessionDirKey(fleet: string, s: { dt: string; runtime: string; agent: string; session: string }): string {
  return `sessions/dt=${s.dt}/fleet=${fleet}/runtime=${s.runtime}/agent=${s.agent}/session=${s.session}/`;
}

/**
 * Push records as bronze: one session directory per session (dt = the UTC day of its first
 * timestamp), the rows split over `segments` seg-NNNNNN.parquet files, and _SEALED when `seal`.
 */
export async function pushBronze(
  root: string,
  records: readonly CanonicalRecord[],
  opts: { fleet?: string; agent?: string; segments?: number; seal?: boolean | ((session: string) => boolean); dt?: string; part?: number } = {},
): Promise<PushedSession[]> {
  const fleet = opts.fleet ?? "f1";
  const agent = opts.agent ?? "host-a";
  const bySession = new Map<string, CanonicalRecord[]>();
  for (const r of records) {
    let l = bySession.get(r.session_id);
    if (!l) bySession.set(r.session_id, (l = []));
    l.push(r);
  }
  const w = await SegmentWriter.open();
  const out: PushedSession[] = [];
  try {
    for (const [session, recs] of bySession) {
      const first = recs.map((r) => r.ts).filter((t): t is string => !!t).sort()[0];
      const dt = opts.dt ?? (first ? recordDay({ ts: first }) : "2026-01-01");
      const runtime = recs[0]!.runtime;
      // A session's later part (pushed after its seal) has its own directory, `<id>.<part>`.
      const label = opts.part !== undefined && opts.part > 1 ? `${session}.${opts.part}` : session;
      const dir = join(root, sessionDirKey(fleet, { dt, runtime, agent, session: label }));
      mkdirSync(dir, { recursive: true });
      const n = Math.max(1, Math.min(opts.segments ?? 1, recs.length));
      const per = Math.ceil(recs.length / n);
      for (let i = 0; i < n; i++) {
        const rows: FleetRow[] = recs.slice(i * per, (i + 1) * per).map((r, k) => ({ ...r, agent, landed_seq: i + 1, landed_row: k }));
        if (rows.length) await w.write(join(dir, `seg-${String(i).padStart(6, "0")}.parquet`), rows, "bronze");
      }
      const seal = typeof opts.seal === "function" ? opts.seal(session) : opts.seal ?? true;
      // The collector's _SEALED (lake-maint compacts only sessions whose marker matches their segments).
      if (seal) writeFileSync(join(dir, "_SEALED"), `${JSON.stringify({ rows: recs.length, sealed_at: "2026-03-01T00:00:00.000Z", segments: n })}\n`);
      out.push({ dt, runtime, agent, session: label, dir });
    }
  } finally {
    w.close();
  }
  return out;
}

/**
 * Compact a (dt, fleet) partition the way maint does: every row of the named sessions into
 * gen=<hash>/part-000000.parquet (compacted layout), then the _COMPACTED marker naming them.
 */
export async function compactPartition(
  root: string,
  dt: string,
  fleet: string,
  sessions: readonly { session: string; rows: readonly FleetRow[] }[],
  opts: { markerSessions?: "ids" | "keys"; keys?: readonly string[] } = {},
): Promise<{ gen: string; part: string }> {
  const gen = createHash("sha256").update(sessions.map((s) => s.session).sort().join("\n")).digest("hex").slice(0, 32);
  const prefix = `sessions/compacted/dt=${dt}/fleet=${fleet}/`;
  const part = `${prefix}gen=${gen}/part-000000.parquet`;
  mkdirSync(dirname(join(root, part)), { recursive: true });
  const w = await SegmentWriter.open();
  try {
    await w.write(join(root, part), sessions.flatMap((s) => s.rows), "compacted");
  } finally {
    w.close();
  }
  const marker = {
    gen,
    sessions: opts.markerSessions === "keys" ? [...(opts.keys ?? [])] : sessions.map((s) => s.session),
    parts: [`part-000000.parquet`],
    rows: sessions.reduce((a, s) => a + s.rows.length, 0),
  };
  writeFileSync(join(root, prefix, "_COMPACTED"), JSON.stringify(marker));
  return { gen, part };
}

/** Write a snapshot SQLite with maint's schema and point snapshot/latest.json at it. */
export function writeSnapshot(root: string, claims: readonly { claim_id: string; agent: string; repo?: string; subject?: string; text: string; kind?: string }[]): string {
  const tmp = join(root, "snapshot", "building.sqlite");
  mkdirSync(dirname(tmp), { recursive: true });
  const db = new Database(tmp);
  db.exec(`CREATE TABLE claims (claim_id TEXT PRIMARY KEY, agent TEXT NOT NULL, repo TEXT, subject TEXT, text TEXT NOT NULL, kind TEXT, proposed_at TEXT, promoted_at TEXT, embedding BLOB);
    CREATE VIRTUAL TABLE claims_fts USING fts5(subject, text, content='claims', content_rowid='rowid');
    CREATE TABLE meta (key, value);`);
  const ins = db.prepare("INSERT INTO claims (claim_id, agent, repo, subject, text, kind) VALUES (?, ?, ?, ?, ?, ?)");
  for (const c of claims) ins.run(c.claim_id, c.agent, c.repo ?? null, c.subject ?? null, c.text, c.kind ?? null);
  db.exec("INSERT INTO claims_fts(claims_fts) VALUES ('rebuild')");
  db.close();
  const bytes = readFileSync(tmp);
  const hash = createHash("sha256").update(bytes).digest("hex");
  writeFileSync(join(root, "snapshot", `${hash}.sqlite`), bytes);
  writeFileSync(join(root, "snapshot", "latest.json"), JSON.stringify({ content_hash: hash }));
  return hash;
}

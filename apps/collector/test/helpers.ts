import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DuckDBInstance } from "@duckdb/node-api";
import { canonicalize, rowToRecord, usageBySession, type CanonicalRecord, type Usage } from "@lake/events";
import { listAdapters, parseFile } from "@lake/adapters";
import { openStore } from "@lake/layout";
import { sqlString } from "@lake/segments";

export const BIN = fileURLToPath(new URL("../bin/lake-collector.js", import.meta.url));
export const SAMPLES = fileURLToPath(new URL("../../../samples/", import.meta.url));

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run the built collector as a child process. */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}, input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    p.on("error", reject);
    p.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
    p.stdin.end(input ?? "");
  });
}

/** Synchronous variant for quick commands. */
export function runCliSync(args: readonly string[], env: NodeJS.ProcessEnv = {}): Run {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, encoding: "utf8" });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** Lay the bundled sample corpus out as vendor stores under `dir`; returns the --source flags. */
export function vendorTree(dir: string): { claude: string; codex: string; gemini: string; flags: string[] } {
  const claude = join(dir, "claude", "projects");
  const codex = join(dir, "codex");
  const gemini = join(dir, "gemini", "tmp");
  mkdirSync(dir, { recursive: true });
  cpSync(join(SAMPLES, "claude"), join(dir, "claude"), { recursive: true });
  cpSync(join(SAMPLES, "codex"), codex, { recursive: true });
  cpSync(join(SAMPLES, "gemini"), join(dir, "gemini"), { recursive: true });
  return { claude, codex, gemini, flags: ["--sources-only", "--source", `claude-code=${claude}`, "--source", `codex=${codex}`, "--source", `gemini=${gemini}`] };
}

/** The adapters' own per-session usage over the vendor tree (what the fleet must agree with). */
export async function adapterTotals(roots: Record<string, string>): Promise<Map<string, Usage>> {
  return new Map([...usageBySession(await adapterRecords(roots))].map(([k, v]) => [k, v.usage]));
}

/** Every file under `dir`, recursively. */
export function walk(dir: string): string[] {
  const out: string[] = [];
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

/** A fleet's segment rows (Hive columns too), in landing order, as JS objects. */
async function fleetRows(fleetDir: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  try {
    const glob = sqlString(join(fleetDir, "sessions/dt=*/fleet=*/runtime=*/agent=*/session=*/seg-*.parquet"));
    return (await conn.runAndReadAll(`SELECT * FROM read_parquet(${glob}, hive_partitioning = true) ORDER BY session_id, landed_seq, landed_row`)).getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** Read every bronze segment of a local fleet directory with DuckDB (hive partitioning) as records. */
export async function fleetRecords(fleetDir: string): Promise<(CanonicalRecord & Record<string, unknown>)[]> {
  return (await fleetRows(fleetDir)).map((r) => ({ ...rowToRecord(r), agent: r.agent, dt: r.dt, fleet: r.fleet, session: r.session }) as CanonicalRecord & Record<string, unknown>);
}

/** Where each row of a fleet's segments was landed: `session_id landed_seq landed_row`, in that order. */
export async function fleetLanded(fleetDir: string): Promise<string[]> {
  return (await fleetRows(fleetDir)).map((r) => `${String(r.session_id)} ${String(r.landed_seq)} ${String(r.landed_row)}`);
}

/** The adapters' own canonical records over vendor roots (runtime → root), unmasked. */
export async function adapterRecords(roots: Record<string, string>): Promise<CanonicalRecord[]> {
  const records: CanonicalRecord[] = [];
  for (const a of listAdapters()) {
    const root = roots[a.runtime];
    if (!root) continue;
    const d = await a.discover({ roots: [root] });
    for (const s of d.sources) for await (const r of parseFile(s.path, { source: s })) records.push(canonicalize(r));
  }
  return records;
}

/**
 * The read model's dedupe key of a fleet row (lake-reader's `events` view): (session_id, stream,
 * record_id), or (session_id, content_hash) for a row without a record id.
 */
export function dedupeKey(r: Pick<CanonicalRecord, "session_id" | "stream" | "record_id" | "content_hash">): string {
  return r.record_id ? `${r.session_id}\u001fi\u001f${r.stream}\u001f${r.record_id}` : `${r.session_id}\u001fh\u001f${r.content_hash}`;
}

/** SHA-256 (hex) and inode of every seg-*.parquet under a local fleet directory, by path. */
export function segmentFingerprints(fleetDir: string): Map<string, { sha256: string; ino: number }> {
  const out = new Map<string, { sha256: string; ino: number }>();
  let files: string[] = [];
  try {
    files = walk(join(fleetDir, "sessions"));
  } catch {
    return out;
  }
  for (const f of files) {
    if (!/\/seg-\d+\.parquet$/.test(f)) continue;
    const st = statSync(f);
    out.set(f, { sha256: createHash("sha256").update(readFileSync(f)).digest("hex"), ino: st.ino });
  }
  return out;
}

/** Copy a generated Claude Code corpus (`<dir>/projects/…`) into a vendor tree's projects root. */
export function addClaudeSessions(fromDir: string, claudeProjects: string): void {
  cpSync(join(fromDir, "projects"), claudeProjects, { recursive: true });
}

/** Download every object of the store at `url` under `prefix` into `dir`, at its key's path; returns `dir`. */
export async function mirrorStore(url: string, dir: string, prefix = ""): Promise<string> {
  const store = openStore(url);
  try {
    for await (const o of store.listAll(prefix)) await store.download(o.key, join(dir, o.key));
  } finally {
    store.close();
  }
  return dir;
}

/**
 * A Claude Code store of `n` sessions made from the real `tool_heavy.jsonl` sample, each a copy with
 * a fresh session id (file name and every line's sessionId), spread over ten project folders.
 * `lines` keeps only the sample's first lines. Returns the projects root and the files, in creation order.
 */
export function claudeSessions(dir: string, n: number, seed = 1, lines?: number): { projects: string; files: string[]; ids: string[] } {
  const whole = readFileSync(join(SAMPLES, "claude", "projects", "-home-marco-projects-spotter", "tool_heavy.jsonl"), "utf8");
  // The first `lines` lines only (a smaller corpus with the same real shapes).
  const sample = lines === undefined ? whole : whole.split("\n").slice(0, lines).join("\n") + "\n";
  const original = "d6e0bada-1959-4eec-a9d2-0bfade768d8f";
  const projects = join(dir, "projects");
  const files: string[] = [];
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const h = createHash("sha256").update(`${seed}:${i}`).digest("hex");
    const sid = `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
    const project = join(projects, `-home-dev-project-${i % 10}`);
    mkdirSync(project, { recursive: true });
    const file = join(project, `${sid}.jsonl`);
    writeFileSync(file, sample.replaceAll(original, sid));
    files.push(file);
    ids.push(sid);
  }
  return { projects, files, ids };
}

/** One Claude Code user line (with its newline) for session `sid`, its uuid made from `n`. */
export function userLine(sid: string, n: number, text: string): string {
  const uuid = `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
  return JSON.stringify({ parentUuid: null, isSidechain: false, userType: "external", type: "user", sessionId: sid, uuid, timestamp: new Date(Date.UTC(2026, 1, 12, 11, 0, 0) + n * 1000).toISOString(), message: { role: "user", content: text } }) + "\n";
}

// Test helpers: stores on both backends, fixture records (through @lake/adapters), and a builder
// that pushes bronze sessions like the collector does.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { canonicalize, type CanonicalRecord, type RawRecord } from "@lake/events";
import { claudeRecords } from "./convert.js";
import { openStore, sealedKey, segmentKey, type ObjectStore, type SessionPartition } from "@lake/layout";
import { writeSegment, type FleetRow } from "@lake/segments";
import { createTestBucket, s3Env } from "@lake/tooling/s3";
import { tempDir } from "@lake/tooling/tmp";
import { fixture } from "@lake/testdata";
import { main } from "../src/cli.js";

export const BIN = fileURLToPath(new URL("../bin/lake-maint.js", import.meta.url));
/** The real Claude Code transcripts the tests name (@lake/testdata claude-code/marot-spotter, SOURCES.md there). */
const TRANSCRIPTS: Readonly<Record<string, string>> = {
  "tool_heavy.jsonl": "claude-code/marot-spotter/tool_heavy.jsonl",
  /** A long session with failing commands (exit codes 1, 2, 128), repeated edits of one file, rejected tool calls. */
  "long_session.jsonl": "claude-code/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
};

/** The path of a transcript the tests name (`tool_heavy.jsonl`, `long_session.jsonl`). */
export function fixturePath(file: string): string {
  const rel = TRANSCRIPTS[file];
  if (rel === undefined) throw new Error(`no fixture ${file} (${Object.keys(TRANSCRIPTS).join(", ")})`);
  return fixture(rel);
}

export type Backend = "local" | "s3";
export const BACKENDS: Backend[] = ["local", "s3"];

/** A fresh empty store URL on the backend. */
export async function freshStore(backend: Backend, label = "maint"): Promise<string> {
  if (backend === "local") return pathToFileURL(tempDir(label)).href;
  return (await createTestBucket(label)).url;
}

/** Run the CLI in-process; capture stdout/stderr lines. */
export async function run(args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  let out = "";
  let err = "";
  const code = await main(args, { out: (s) => void (out += s), err: (s) => void (err += s), env: process.env });
  const lines = (s: string) => (s === "" ? [] : s.replace(/\n$/, "").split("\n"));
  return { code, out: lines(out), err: lines(err) };
}

/** Run the built bin as a child process. */
export function runBin(args: string[], env: Record<string, string> = {}, backend: Backend = "local"): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...(backend === "s3" ? s3Env() : {}), ...env }, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      const e = error as (NodeJS.ErrnoException & { code?: number | string; signal?: NodeJS.Signals }) | null;
      resolve({ code: e ? (typeof e.code === "number" ? e.code : null) : 0, signal: e?.signal ?? null, stdout, stderr });
    });
  });
}

/** Records of a fixture file. */
export function fixtureRecords(file: string, sessionId: string): Promise<CanonicalRecord[]> {
  return claudeRecords(fixturePath(file), sessionId);
}

/** A fleet row. */
export function row(rec: CanonicalRecord, agent: string): FleetRow {
  return { ...rec, agent };
}

/** A minimal synthetic record (for dedupe tests). */
export function rec(session: string, i: number, text: string | undefined, extra: Partial<RawRecord> = {}): CanonicalRecord {
  const raw: Record<string, unknown> = {
    runtime: "claude-code",
    session_id: session,
    stream: "main",
    record_id: `r-${session}-${i}`,
    ts: new Date(Date.UTC(2026, 1, 10, 12, 0, i)).toISOString(),
    kind: text === undefined ? "meta" : "user",
    source_path: "synthetic.jsonl",
    source_line: i + 1,
    adapter: "test",
    adapter_version: "0",
    ...extra,
  };
  if (text !== undefined) raw.text = text;
  return canonicalize(raw as unknown as RawRecord, []);
}

/**
 * Push one session like the collector: bronze segments (one per `segments` entry) under the
 * session's key, then `_SEALED` unless `seal` is false.
 */
export async function pushSession(store: ObjectStore, part: SessionPartition, segments: readonly FleetRow[][], opts: { seal?: boolean } = {}): Promise<void> {
  const dir = tempDir("push");
  let rows = 0;
  for (let i = 0; i < segments.length; i++) {
    const path = join(dir, `seg-${i}.parquet`);
    await writeSegment(path, segments[i]!, "bronze");
    const w = await store.upload(segmentKey(part, i), { path });
    if (w.status !== "written") throw new Error(`push ${segmentKey(part, i)}: ${w.status}`);
    rows += segments[i]!.length;
  }
  if (opts.seal !== false) {
    await store.putIfAbsent(sealedKey(part), Buffer.from(JSON.stringify({ sealed_at: "2026-02-11T00:00:00.000Z", segments: segments.length, rows }) + "\n"));
  }
}

/** Split rows into `k` segments of about equal size. */
export function split<T>(rows: readonly T[], k: number): T[][] {
  const out: T[][] = [];
  const size = Math.ceil(rows.length / k);
  for (let i = 0; i < k; i++) out.push(rows.slice(i * size, (i + 1) * size));
  return out.filter((x) => x.length > 0);
}

/** Open a store and init its fleet.json through the CLI. */
export async function initStore(url: string, fleet = "f1"): Promise<ObjectStore> {
  const r = await run(["init", "--store", url, "--fleet-id", fleet]);
  if (r.code !== 0) throw new Error(`init failed: ${r.err.join(" ")}`);
  return openStore(url);
}

/** Every key under a prefix. */
export async function keys(store: ObjectStore, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const x of store.listAll(prefix)) out.push(x.key);
  return out;
}

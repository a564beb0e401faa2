// Test helpers: stores on both backends, a TEST-ONLY Claude Code converter (until @lake/adapters
// is a devDependency of this app), and a builder that pushes bronze sessions like the collector does.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { canonicalize, type CanonicalRecord, type RawRecord, type Usage } from "@lake/events";
import { openStore, sealedKey, segmentKey, type ObjectStore, type SessionPartition } from "@lake/layout";
import { writeSegment, type FleetRow } from "@lake/segments";
import { createTestBucket, s3Env } from "@lake/tooling/s3";
import { tempDir } from "@lake/tooling/tmp";
import { main } from "../src/cli.js";

export const BIN = fileURLToPath(new URL("../bin/lake-maint.js", import.meta.url));
export const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));

export type Backend = "local" | "s3";
export const BACKENDS: Backend[] = ["local", "s3"];

/** A fresh empty store URL on the backend. */
export async function freshStore(backend: Backend, label = "maint"): Promise<string> {
  if (backend === "local") return pathToFileURL(tempDir(label)).href;
  return (await createTestBucket(label)).url;
}

/** Run the CLI in-process; capture stdout/stderr lines. */
export async function run(args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
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

// ---- TEST-ONLY Claude Code → canonical records converter ------------------------------------
// A small stand-in for @lake/adapters' Claude Code adapter (same field mapping for what the tests
// use: text, tool calls/results, exit codes, usage with requestId as usage key). Switch to
// @lake/adapters once this app lists it as a devDependency.

type Obj = Record<string, unknown>;
const o = (v: unknown): Obj | undefined => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : undefined);
const s = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const n = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

function contentText(c: unknown): string | undefined {
  if (typeof c === "string") return c;
  if (Array.isArray(c)) {
    const parts = c.map((b) => s(o(b)?.text)).filter((x): x is string => x !== undefined);
    return parts.length ? parts.join("\n") : undefined;
  }
  return undefined;
}

/** Convert a Claude Code JSONL transcript to canonical records (TEST-ONLY). */
export function claudeRecords(text: string, sessionId: string, sourcePath: string): CanonicalRecord[] {
  const out: CanonicalRecord[] = [];
  const lines = text.split("\n");
  let offset = 0;
  lines.forEach((line, idx) => {
    const lineOffset = offset;
    offset += Buffer.byteLength(line) + 1;
    if (line.trim() === "") return;
    const d = JSON.parse(line) as Obj;
    const m = o(d.message);
    const uuid = s(d.uuid) ?? `line${idx + 1}`;
    const base = {
      runtime: "claude-code",
      session_id: sessionId,
      stream: "main",
      parent_id: s(d.parentUuid),
      ts: s(d.timestamp) ?? s(o(d.snapshot)?.timestamp),
      cwd: s(d.cwd),
      branch: s(d.gitBranch),
      is_sidechain: d.isSidechain === true ? true : undefined,
      source_path: sourcePath,
      source_offset: lineOffset,
      source_line: idx + 1,
      adapter: "test-claude",
      adapter_version: "0",
    };
    let k = 0;
    const add = (r: { [K in keyof RawRecord]?: RawRecord[K] | undefined } & { kind: RawRecord["kind"] }) => {
      const raw = { ...base, record_id: k === 0 ? uuid : `${uuid}:${k}`, ...r } as Obj;
      k++;
      for (const key of Object.keys(raw)) if (raw[key] === undefined) delete raw[key];
      out.push(canonicalize(raw as unknown as RawRecord, []));
    };
    const type = s(d.type);
    if (type === "assistant" && m) {
      const u = o(m.usage);
      let usage: Usage | undefined;
      if (u) {
        const x: Record<string, number> = {};
        const pairs = [["input_tokens", u.input_tokens], ["cached_input_tokens", u.cache_read_input_tokens], ["cache_write_tokens", u.cache_creation_input_tokens], ["output_tokens", u.output_tokens]] as const;
        for (const [key, v] of pairs) if (n(v) !== undefined) x[key] = n(v)!;
        usage = x as Usage;
      }
      let first = true;
      const uf = () => {
        if (!first || !usage) return {};
        first = false;
        return { usage, usage_mode: "delta" as const, usage_key: s(d.requestId) ?? s(m.id) };
      };
      const shared = { role: "assistant", model: s(m.model), message_id: s(m.id), request_id: s(d.requestId) };
      for (const b of Array.isArray(m.content) ? m.content : []) {
        const c = o(b);
        if (!c) continue;
        if (c.type === "tool_use") add({ ...shared, ...uf(), kind: "tool_call", vendor_type: "assistant/tool_use", tool_name: s(c.name), tool_call_id: s(c.id), tool_input: JSON.stringify(c.input) });
        else if (c.type === "text") add({ ...shared, ...uf(), kind: "assistant", vendor_type: "assistant/text", text: s(c.text) });
        else add({ ...shared, ...uf(), kind: "assistant", vendor_type: `assistant/${String(c.type)}`, text: s(c.thinking) });
      }
      if (first && usage) add({ ...shared, ...uf(), kind: "assistant", vendor_type: "assistant" });
    } else if (type === "user" && m) {
      if (!Array.isArray(m.content)) {
        add({ kind: "user", vendor_type: "user", role: "user", text: s(m.content) });
        return;
      }
      const tur = o(d.toolUseResult);
      for (const b of m.content) {
        const c = o(b);
        if (!c) continue;
        if (c.type === "tool_result") {
          const ec = n(tur?.exitCode ?? tur?.exit_code);
          add({ kind: "tool_result", vendor_type: "user/tool_result", role: "user", tool_call_id: s(c.tool_use_id), text: contentText(c.content), is_error: c.is_error === true ? true : undefined, exit_code: ec });
        } else add({ kind: "user", vendor_type: "user", role: "user", text: contentText([c]) });
      }
    } else {
      // progress, system, snapshots, queue operations: envelopes without content (content_hash "").
      add({ kind: "meta", vendor_type: type ?? "unknown" });
    }
  });
  return out;
}

/** Records of a fixture file. */
export function fixtureRecords(file: string, sessionId: string): CanonicalRecord[] {
  return claudeRecords(readFileSync(join(FIXTURES, file), "utf8"), sessionId, file);
}

/** A fleet row. */
export function row(rec: CanonicalRecord, agent: string): FleetRow {
  return { ...rec, agent };
}

/** A minimal synthetic record (for dedupe tests). */
export function rec(session: string, i: number, text: string | undefined, extra: Partial<RawRecord> = {}): CanonicalRecord {
  const raw: Obj = {
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

// Registry and whole-file / whole-session conveniences over the incremental adapter interface.
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { canonicalize, type CanonicalRecord, type RawRecord } from "@lake/events/record";
import { brocaAdapter, readBrocaSource } from "./broca.js";
import { claudeCodeAdapter } from "./claude.js";
import { codexAdapter } from "./codex.js";
import { AdaptersError } from "./errors.js";
import { geminiAdapter } from "./gemini.js";
import { hookAdapter } from "./hook.js";
import { readLines } from "./lines.js";
import type { Adapter, DiscoverOptions, SourceLine, SourceRef } from "./types.js";

const registry = new Map<string, Adapter>();
for (const a of [claudeCodeAdapter, codexAdapter, geminiAdapter, hookAdapter, brocaAdapter]) registry.set(a.runtime, a);

/** Register an adapter (the broca adapter registers itself; tests may add their own). */
export function registerAdapter(adapter: Adapter): void {
  registry.set(adapter.runtime, adapter);
}

/** The adapter of a runtime id; throws AdaptersError `UnknownRuntime`. */
export function getAdapter(runtime: string): Adapter {
  const a = registry.get(runtime);
  if (!a) throw new AdaptersError("UnknownRuntime", `unknown runtime ${JSON.stringify(runtime)} (known: ${[...registry.keys()].join(", ")})`, { data: { runtime } });
  return a;
}

/** All registered adapters. */
export function listAdapters(): Adapter[] {
  return [...registry.values()];
}

/** Guess a file's runtime from its path (`.codex`/`rollout-*` → codex, `.gemini`/`session-*.json` → gemini, broca `.wal`, else claude-code). */
export function guessRuntime(path: string): string {
  const p = path.split("\\").join("/");
  const name = basename(p);
  if (p.includes("/.codex/") || name.startsWith("rollout-")) return "codex";
  if (p.includes("/.gemini/") || /^session-.*\.json$/.test(name) || p.includes("/chats/")) return "gemini";
  if (name.endsWith(".wal") && registry.has("broca")) return "broca";
  return "claude-code";
}

/** Options of `parseFile`. */
export interface ParseFileOptions {
  /** Runtime id (default: guessed from the path). */
  readonly runtime?: string;
  /** The runtime root the path lies under (for relative provenance and session ids). */
  readonly root?: string;
  /** A source description to use instead of `describe`. */
  readonly source?: SourceRef;
  /** Lines handed to the adapter per call (default 512). */
  readonly batch?: number;
}

/**
 * Stream a whole file's raw records. Append sources are read line by line through a stream (never
 * whole); snapshot sources are read whole, as the collector does. The vendor file is only read.
 */
export async function* parseFile(path: string, options: ParseFileOptions = {}): AsyncGenerator<RawRecord> {
  const adapter = getAdapter(options.source?.runtime ?? options.runtime ?? guessRuntime(path));
  const source = options.source ?? (await adapter.describe(path, options.root));
  if (source.runtime === "broca") {
    // Framed WAL (live file or archived member): decoded whole, as broca's own reader does (1 GiB pass limit).
    yield* adapter.parseSnapshot(source, await readBrocaSource(source));
    return;
  }
  if (source.mode === "snapshot") {
    let content: Buffer;
    try {
      content = await readFile(path);
    } catch (e) {
      throw new AdaptersError("Unreadable", `${path}: cannot read: ${(e as Error).message}`, { data: { path }, cause: e });
    }
    yield* adapter.parseSnapshot(source, content);
    return;
  }
  const state = adapter.initialState(source);
  const batch = options.batch ?? 512;
  let lines: SourceLine[] = [];
  for await (const l of readLines(path, { partial: true })) {
    lines.push(l);
    if (lines.length >= batch) {
      yield* adapter.parseLines(source, lines, state);
      lines = [];
    }
  }
  if (lines.length) yield* adapter.parseLines(source, lines, state);
}

/** Options of `readSession`. */
export interface ReadSessionOptions extends DiscoverOptions {}

/** A session read whole: its sources and its canonical (unmasked) records in source order. */
export interface SessionRead {
  readonly runtime: string;
  readonly session_id: string;
  readonly sources: SourceRef[];
  readonly records: CanonicalRecord[];
}

/**
 * Discover one session's sources under the runtime's roots and read them all (main transcript
 * first, then child streams and sidecars). Records are canonicalized without redaction: they are
 * raw text, for tests and local tools; the collector masks before landing.
 */
export async function readSession(runtime: string, sessionId: string, options: ReadSessionOptions = {}): Promise<SessionRead> {
  const adapter = getAdapter(runtime);
  const found = await adapter.discover(options);
  const sources = found.sources
    .filter((s) => s.session_id === sessionId)
    .sort((a, b) => (a.stream === b.stream ? (a.rel < b.rel ? -1 : 1) : a.stream === "main" ? -1 : b.stream === "main" ? 1 : a.stream < b.stream ? -1 : 1));
  const records: CanonicalRecord[] = [];
  for (const s of sources) for await (const r of parseFile(s.path, { source: s })) records.push(canonicalize(r));
  return { runtime, session_id: sessionId, sources, records };
}

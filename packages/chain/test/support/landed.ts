// Test support: land synthetic records as files in the storage-root layout and describe them as a session index.
// (The store's own landing + readIndex replace this where a test runs through @lake/store.)
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { IndexEntry, IndexFile, IndexLookup, SessionIndex } from "@lake/chain";

/** A synthetic record: the index-visible fields only. */
export interface Rec {
  kind: string;
  id?: string;
  parent?: string;
  call?: string;
  child?: string;
  vt?: string;
  dup?: boolean;
}

/** One landed file to write: its stream and records. */
export interface FileSpec {
  stream: string;
  records: Rec[];
}

const STAMP = "20260101T000000.000000000Z";

/** Path of landed file `seq` of `stream`. */
export function landedPath(root: string, session: string, stream: string, seq: number): string {
  return join(root, session, "streams", stream, `transcript-${STAMP}-${String(seq).padStart(6, "0")}.sd`);
}

/** Land `files` as seq `firstSeq`, `firstSeq + 1` … (read-only files), and return index rows for them. */
export function landFiles(root: string, session: string, files: FileSpec[], firstSeq = 1): { files: IndexFile[]; entries: IndexEntry[] } {
  const outFiles: IndexFile[] = [];
  const entries: IndexEntry[] = [];
  files.forEach((f, i) => {
    const seq = firstSeq + i;
    const path = landedPath(root, session, f.stream, seq);
    mkdirSync(join(path, ".."), { recursive: true });
    const lines = [JSON.stringify({ format: "test.sd", session, stream: f.stream, seq, records: f.records.length })];
    f.records.forEach((r, row) => {
      lines.push(JSON.stringify({ session_id: session, stream: f.stream, kind: r.kind, record_id: r.id, text: `record ${seq}/${row}` }));
      const e: IndexEntry = { seq, row, stream: f.stream, kind: r.kind, duplicate: r.dup ?? false };
      if (r.id !== undefined) e.record_id = r.id;
      if (r.parent !== undefined) e.parent_id = r.parent;
      if (r.call !== undefined) e.tool_call_id = r.call;
      if (r.child !== undefined) e.child_stream = r.child;
      if (r.vt !== undefined) e.vendor_type = r.vt;
      entries.push(e);
    });
    const bytes = Buffer.from(`${lines.join("\n")}\n`);
    writeFileSync(path, bytes, { flag: "wx" });
    chmodSync(path, 0o444);
    outFiles.push({ seq, name: path.split("/").pop() as string, stream: f.stream, kind: "transcript", sha256: createHash("sha256").update(bytes).digest("hex"), records: f.records.length });
  });
  return { files: outFiles, entries };
}

/** Build a session index (no files on disk) from file specs. */
export function indexOf(files: FileSpec[], firstSeq = 1): SessionIndex {
  const out: SessionIndex = { indexedSeq: firstSeq + files.length - 1, files: [], entries: [] };
  const fs: IndexFile[] = [];
  const es: IndexEntry[] = [];
  files.forEach((f, i) => {
    const seq = firstSeq + i;
    fs.push({ seq, name: `transcript-${STAMP}-${String(seq).padStart(6, "0")}.sd`, stream: f.stream, kind: "transcript", sha256: createHash("sha256").update(`file ${seq}`).digest("hex"), records: f.records.length });
    f.records.forEach((r, row) => {
      const e: IndexEntry = { seq, row, stream: f.stream, kind: r.kind, duplicate: r.dup ?? false };
      if (r.id !== undefined) e.record_id = r.id;
      if (r.parent !== undefined) e.parent_id = r.parent;
      if (r.call !== undefined) e.tool_call_id = r.call;
      if (r.child !== undefined) e.child_stream = r.child;
      if (r.vt !== undefined) e.vendor_type = r.vt;
      es.push(e);
    });
  });
  return { ...out, files: fs, entries: es };
}

/**
 * `index` as a read by range gives it: the entries from `from` on, without ids or links (the store's read for the
 * chain decodes only calls, launches and vendor types), and a lookup over every entry written here on its own (a scan
 * in (seq, row) order), which counts the entries it looked at and the answers it gave in `scanned`.
 */
export function rangeIndex(index: SessionIndex, from: number, scanned = { entries: 0, found: 0 }): SessionIndex {
  const every = [...index.entries].filter((e) => e.seq <= index.indexedSeq && !e.duplicate).sort((a, b) => a.seq - b.seq || a.row - b.row);
  const lookup: IndexLookup = {
    firstParents(streams) {
      const want = new Set(streams);
      const out = new Map<string, string>();
      for (const e of every) {
        scanned.entries++;
        if (want.has(e.stream) && e.parent_id !== undefined && !out.has(e.stream)) out.set(e.stream, e.parent_id);
      }
      scanned.found += out.size;
      return out;
    },
    firstEntries(ids) {
      const want = new Set(ids);
      const out = new Map<string, IndexEntry>();
      for (const e of every) {
        scanned.entries++;
        if (e.record_id !== undefined && want.has(e.record_id) && !out.has(e.record_id)) out.set(e.record_id, e);
      }
      scanned.found += out.size;
      return out;
    },
  };
  const held = index.entries.filter((e) => e.seq >= from).map(({ record_id: _r, parent_id: _p, ...e }) => e);
  return { ...index, entries: held, from, lookup };
}

/** An index cut at `seq` (what the index said when it covered only that far). */
export function cutIndex(index: SessionIndex, seq: number): SessionIndex {
  return { indexedSeq: seq, files: index.files.filter((f) => f.seq <= seq), entries: index.entries.filter((e) => e.seq <= seq) };
}

/** A small conversation touching every role: turns, a call with a child agent, steering, queue, compaction. */
export function sampleFiles(): FileSpec[] {
  return [
    { stream: "main", records: [
      { kind: "user", id: "u1" },
      { kind: "assistant", id: "a1", parent: "u1" },
      { kind: "tool_call", id: "c1", parent: "a1", call: "t1" },
      { kind: "meta", call: "t1", vt: "progress" },
    ] },
    { stream: "agentA", records: [
      { kind: "user", id: "x1" },
      { kind: "assistant", id: "x2", parent: "x1" },
      { kind: "tool_call", id: "x3", call: "tx" },
      { kind: "tool_result", id: "x4", call: "tx" },
    ] },
    { stream: "main", records: [
      { kind: "user", id: "u2", vt: "user" },
      { kind: "meta", vt: "queue-operation/enqueue" },
      { kind: "tool_result", id: "r1", call: "t1", child: "agentA" },
      { kind: "assistant", id: "a2" },
      { kind: "system", id: "cb", vt: "system/compact_boundary" },
      { kind: "user", id: "u3" },
      { kind: "assistant", id: "a3" },
      { kind: "tool_call", id: "c2", call: "t2" },
      { kind: "tool_result", id: "r2", call: "t2" },
      { kind: "user", id: "u2", dup: true },
    ] },
    { stream: "acomp", records: [
      { kind: "user", id: "y1", parent: "a2" },
      { kind: "assistant", id: "y2", parent: "y1" },
    ] },
  ];
}

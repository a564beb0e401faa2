// A landed root built through the real store, for tests: sources opened, read, converted and landed
// exactly as a collector pass does (session lock, cursors, landed files, session.state, index).
import { basename } from "node:path";
import { canonicalize, type CanonicalRecord, type RawRecord } from "@lake/events";
import type { Area } from "./names.js";
import type { Convert, PassSummary, SessionOptions, SourceRef } from "./contracts.js";
import { openSession } from "./session.js";

/** One source file to land, and where in the root it goes. */
export interface RootSource {
  /** The session it lands in. */
  readonly session: string;
  /** The source file, read in place. */
  readonly path: string;
  /** The source as its cursor records it (default: the file's name). */
  readonly source?: string;
  /** `streams` (default) or `runs`. */
  readonly area?: Area;
  /** The stream or run id (default `main`). */
  readonly stream?: string;
  /** The file kind (default `transcript`). */
  readonly kind?: string;
  /** `append` (default): the file's complete lines; `snapshot`: its whole content. */
  readonly cursor?: "append" | "snapshot";
  /** Runtime id of the records (default `test`). */
  readonly runtime?: string;
  /** Adapter name and version in every landed file's header (default `lake-test` 1). */
  readonly adapter?: string;
  readonly adapterVersion?: string;
  /** The converter (default {@link recordLines}). */
  readonly convert?: Convert;
}

/** Options of {@link landRoot}: the session options of every session, and whether to index. */
export interface LandRootOptions extends SessionOptions {
  /** Bring each session's index up to date at the end of its pass (default true). */
  readonly index?: boolean;
}

/**
 * The converter a test without an adapter uses: each JSON line of the source is a record already
 * (`kind`, `text`, `record_id` …); the fields a pass knows (runtime, session, stream, source path,
 * offset and line, adapter) are filled in where the line leaves them out, and the record is
 * canonicalized (content hash).
 */
export const recordLines: Convert = (lines, ctx) =>
  lines.map((l) => {
    const v = (typeof l.value === "object" && l.value !== null && !Array.isArray(l.value) ? l.value : { kind: "unknown", raw: l.text }) as Partial<RawRecord>;
    const raw = {
      runtime: ctx.source.runtime, session_id: ctx.sessionId, stream: ctx.source.stream, kind: "meta",
      source_path: ctx.source.source, source_offset: l.offset, source_line: l.line, adapter: ctx.source.adapter, adapter_version: ctx.source.adapterVersion,
      ...v,
    } as RawRecord;
    return canonicalize(raw) as CanonicalRecord;
  });

/**
 * Land `sources` into the storage root `root` through the real store: each session opened once
 * (under its lock), one pass collecting its sources in the order given, then session.state and
 * (unless `index: false`) the index. Landing the same unchanged sources again lands nothing.
 * @returns each session's pass summary, by session id.
 */
export async function landRoot(root: string, sources: readonly RootSource[], options: LandRootOptions = {}): Promise<Map<string, PassSummary>> {
  const { index, ...sessionOptions } = options;
  const bySession = new Map<string, RootSource[]>();
  for (const s of sources) (bySession.get(s.session) ?? bySession.set(s.session, []).get(s.session)!).push(s);
  const out = new Map<string, PassSummary>();
  for (const [session, list] of bySession) {
    const store = await openSession(root, session, sessionOptions);
    try {
      const pass = store.beginPass();
      for (const s of list) {
        const ref: SourceRef = {
          path: s.path, source: s.source ?? basename(s.path), stream: s.stream ?? "main", kind: s.kind ?? "transcript",
          runtime: s.runtime ?? "test", adapter: s.adapter ?? "lake-test", adapterVersion: s.adapterVersion ?? "1", ...(s.area ? { area: s.area } : {}),
        };
        const convert = s.convert ?? recordLines;
        await (s.cursor === "snapshot" ? pass.collectSnapshot(ref, convert) : pass.collectAppend(ref, convert));
      }
      out.set(session, pass.finish({ index: index !== false }));
    } finally {
      store.close();
    }
  }
  return out;
}

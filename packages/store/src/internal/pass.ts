import { lstatSync, type Stats } from "node:fs";
import { join } from "node:path";
import { StoreError, errno } from "./errors.js";
import { landNoReplace } from "./fsx.js";
import { checkId, checkKind, isoMicros, landedName, nowNs, type Area } from "./names.js";
import type { Cursor } from "./cursor.js";
import { buildLandedBody } from "./landed.js";
import { encodeLines, type EncodedRecords } from "./records.js";
import { pendingFile } from "./indexer.js";
import type { Convert, ConvertContext, Mutable, PassSummary, SourceLine, SourceOutcome, SourceRef } from "./contracts.js";
import type { SessionStore } from "./session.js";
import { appendSteps } from "./append.js";
import { snapshotSteps } from "./snapshot.js";

/** One pass over a session's sources. */
export class Pass {
  readonly session: SessionStore;
  /** The pass's UTC stamp, `20260831T091204.481523000Z`. */
  readonly stamp: string;
  private visited = new Set<string>();
  private landedFiles = 0;
  private records = 0;
  private pending = 0;
  private conflicts = 0;
  private gone = 0;
  private newConflicts: Array<{ file: string; reason: string }> = [];
  private problems: Array<{ file: string; reason: string }> = [];

  /** @internal use SessionStore.beginPass. */
  constructor(session: SessionStore, stamp: string) {
    this.session = session;
    this.stamp = stamp;
  }

  private log(line: string): void {
    (this.session.opts.logger ?? ((l: string) => process.stderr.write(l + "\n")))(line);
  }

  /**
   * The cursor slot of a source. Two files can feed one stream (the same session reached twice: a
   * copied project folder, two Codex rollouts with one session id): each gets its own cursor. The
   * first keeps `<kind>.cursor`; another takes the first free `<kind>_<n>.cursor` (n = 2, 3 …) and
   * its files are named with that kind. A slot whose cursor names this source is always its slot.
   * Their records share the stream, so the index marks a record id already landed as a re-land.
   */
  private place(src: SourceRef): { area: Area; dirRel: string; cursorRel: string; src: SourceRef } {
    checkId("stream", src.stream);
    checkKind(src.kind);
    const area = src.area ?? "streams";
    if (area !== "streams" && area !== "runs") throw new StoreError("InvalidArgument", `invalid area ${JSON.stringify(area)}`);
    const dirRel = `${area}/${src.stream}`;
    const rel = (kind: string) => `${dirRel}/${kind}.cursor`;
    const sourceOf = (r: string): string | undefined => {
      try {
        return this.session.loadCursor(r)?.source;
      } catch {
        return "\u0000"; // an undecodable cursor: its slot is taken (verify reports it)
      }
    };
    let kind = src.kind;
    const primary = rel(kind);
    if (this.visited.has(primary) || (sourceOf(primary) ?? src.source) !== src.source) {
      let free: string | undefined;
      let mine: string | undefined;
      for (let n = 2; n < 10_000; n++) {
        const k = `${src.kind}_${n}`;
        const r = rel(k);
        if (this.visited.has(r)) continue;
        const owner = sourceOf(r);
        if (owner === undefined) {
          free = k;
          break;
        }
        if (owner === src.source) {
          mine = k;
          break;
        }
      }
      // A cursor of this source wins; else the kind's own cursor while no other source of this
      // pass holds it (the slot then names another path, and the bytes decide); else a free slot.
      kind = mine ?? (this.visited.has(primary) ? free : src.kind) ?? src.kind;
    }
    const cursorRel = rel(kind);
    if (this.visited.has(cursorRel)) throw new StoreError("InvalidArgument", `${cursorRel}: two sources share one cursor in one pass (${src.source})`, { data: { file: cursorRel } });
    this.visited.add(cursorRel);
    return { area, dirRel, cursorRel, src: kind === src.kind ? src : { ...src, kind } };
  }

  /** @internal step 1: the file is gone; an active cursor becomes source_gone. */
  gone_(cursorRel: string, cur: Cursor | undefined): SourceOutcome {
    if (cur && cur.state === "active") {
      this.session.saveCursor(cursorRel, { ...cur, state: "source_gone", updated_at: isoMicros(nowNs()) });
      this.gone++;
    }
    return { status: "gone", landed: [], bytesRead: 0 };
  }

  /** @internal a source this pass could not read (`problem`) or refused (`rejected`). */
  problem(src: SourceRef, status: "problem" | "rejected", reason: string): SourceOutcome {
    this.problems.push({ file: src.path, reason });
    return { status, landed: [], bytesRead: 0, reason };
  }

  /** @internal a source found in conflict: its cursor says so, and the logger names it. */
  conflict(src: SourceRef, cursorRel: string, cur: Cursor, reason: string, st: Stats | undefined): SourceOutcome {
    const c = { ...cur, state: "conflict" as const, conflict_reason: reason, updated_at: isoMicros(nowNs()) };
    this.session.saveCursor(cursorRel, c);
    this.session.knownConflicts.add(cursorRel);
    this.conflicts++;
    this.newConflicts.push({ file: src.path, reason });
    this.log(`lake-store: conflict: ${src.path}: ${reason}`);
    void st;
    return { status: "conflict", landed: [], bytesRead: 0, reason };
  }

  /** @internal a source already in conflict: skipped, only counted. */
  inConflict(): SourceOutcome {
    this.conflicts++;
    return { status: "in_conflict", landed: [], bytesRead: 0 };
  }

  /** @internal a source left with complete lines after the window limit. */
  notePending(): void {
    this.pending++;
  }

  /** @internal convert a window's lines and encode the records: once, straight into the landed file's body. */
  toRecords(src: SourceRef, lines: SourceLine[], invalid: boolean[], convert: Convert, sizeHint: number): Promise<EncodedRecords> {
    const ctx: ConvertContext = { sessionId: this.session.sessionId, source: src };
    return encodeLines(lines, invalid, ctx, convert, this.session.opts.maskUnknown, sizeHint);
  }

  /** @internal land a window's records as the session's next file. */
  land(src: SourceRef, area: Area, dirRel: string, cursor: "append" | "snapshot", range: { first_offset: number; end_offset: number; first_line: number; last_line: number }, out: EncodedRecords, contentSha?: string): { seq: number; rel: string; records: number; bytes: number } {
    const s = this.session;
    const records = out.records;
    // Records may come from outside the store (a caller's encoder): the body must hold exactly
    // `records` newline-terminated lines, one fact each, before a sequence number is taken.
    let lines = 0;
    let last = 0x0a;
    for (const b of out.body) {
      for (let i = b.indexOf(0x0a); i !== -1; i = b.indexOf(0x0a, i + 1)) lines++;
      if (b.length > 0) last = b[b.length - 1]!;
    }
    if (out.facts.length !== records || lines !== records || last !== 0x0a) {
      throw new StoreError("InvalidArgument", `session ${s.sessionId}: source ${src.source}: encoded records do not match (records ${records}, facts ${out.facts.length}, ${lines} body lines${last !== 0x0a ? ", body not newline-terminated" : ""})`, { data: { file: src.path, records } });
    }
    const seq = s.issueSeq();
    const name = landedName(src.kind, this.stamp, seq);
    const built = buildLandedBody(
      {
        session: s.sessionId, area, stream: src.stream, kind: src.kind, cursor, source: src.source, seq, collected_at: this.stamp, ...range,
        ...(contentSha !== undefined ? { content_sha256: contentSha } : {}), adapter: src.adapter, adapter_version: src.adapterVersion,
      },
      out.body,
      records,
    );
    const dir = join(s.dir, dirRel);
    s.ensureDir(dir);
    landNoReplace(dir, name, built.chunks, s.opts.onStep, s.opts.fsync !== false, s.dirSync);
    const rel = `${dirRel}/${name}`;
    s.noteLanded({ seq, name, area, stream: src.stream, kind: src.kind, stamp: this.stamp, rel });
    s.pendingIndex.set(seq, pendingFile({ seq, name, area, stream: src.stream, kind: src.kind, sha256: built.sha256, records, rel }, out.facts));
    this.landedFiles++;
    this.records += records;
    return { seq, rel, records, bytes: built.bytes };
  }
  /**
   * Take an append source through the eight steps: gone → source_gone; shorter than offset →
   * conflict; same size and inode → nothing read; the 1 MiB before offset must match
   * tail_sha256; read windows of up to max_delta_bytes cut at the last complete newline; convert;
   * land, then save the cursor; at most `maxWindows` windows, then the source is pending.
   */
  async collectAppend(source: SourceRef, convert: Convert): Promise<SourceOutcome> {
    this.session.assertOpen();
    if (source.encode && source.carry) throw new StoreError("InvalidArgument", `session ${this.session.sessionId}: source ${source.source}: encode and carry together (windows encoded elsewhere would not advance the carried state)`, { data: { file: source.path, argument: "encode" } });
    const placed = this.place(source);
    return { ...(await appendSteps(this, placed, convert)), cursor: placed.cursorRel };
  }

  /**
   * Take a snapshot source through its pass: read it whole, trim trailing newlines, digest; when the
   * digest differs from content_sha256 the content lands as a new file of the records `convert`
   * makes of it: one for a sidecar or manifest; several for a whole-file session document (a
   * legacy Gemini CLI chat), whose unchanged records the index then marks as re-landed copies. An
   * empty file lands nothing.
   */
  async collectSnapshot(source: SourceRef, convert: Convert): Promise<SourceOutcome> {
    this.session.assertOpen();
    const placed = this.place(source);
    return { ...(await snapshotSteps(this, placed, convert)), cursor: placed.cursorRel };
  }

  /**
   * Pruned sources: after the session's discovered sources, look at every other cursor of the session.
   * An `active` cursor whose file no longer exists becomes `source_gone`. `resolve` maps a cursor's
   * source to the absolute path this adapter would read, or undefined for a path it does not produce
   * (left alone). A permission or other error leaves the cursor as it is.
   * @returns the number of cursors set to source_gone.
   */
  pruneUnseen(resolve: (source: string, where: { area: Area; stream: string; kind: string }) => string | undefined): number {
    const s = this.session;
    s.assertOpen();
    let n = 0;
    for (const rel of [...s.cursorFiles].sort()) {
      if (this.visited.has(rel)) continue;
      let cur: Cursor | undefined;
      try {
        cur = s.loadCursor(rel);
      } catch {
        continue; // a corrupt cursor is verify's to report
      }
      if (!cur || cur.state !== "active") continue;
      const [area, stream, file] = rel.split("/") as [Area, string, string];
      const p = resolve(cur.source, { area, stream, kind: file.slice(0, -".cursor".length) });
      if (p === undefined) continue;
      try {
        lstatSync(p);
        continue;
      } catch (e) {
        if (errno(e) !== "ENOENT" && errno(e) !== "ENOTDIR") continue;
      }
      s.saveCursor(rel, { ...cur, state: "source_gone", updated_at: isoMicros(nowNs()) });
      n++;
    }
    this.gone += n;
    return n;
  }

  /**
   * End the pass: save session.state and (unless `index: false`) bring the index up to date.
   * `failed` carries a single pass's non-zero exit semantics (pending or conflicts).
   */
  finish(options: { index?: boolean } = {}): PassSummary {
    const s = this.session;
    s.assertOpen();
    s.flushDirs();
    s.saveState();
    // A directory this open created holds no landed file unless this pass landed one: no index to write.
    const index = options.index === false || (s.createdDir && this.landedFiles === 0) ? undefined : s.updateIndex();
    const out: Mutable<PassSummary> = {
      stamp: this.stamp, landed: this.landedFiles, records: this.records, pending: this.pending, conflicts: this.conflicts,
      newConflicts: this.newConflicts, gone: this.gone, problems: this.problems, failed: this.pending > 0 || this.conflicts > 0 || this.problems.length > 0,
      seq: s.highestSeqHint().seq,
    };
    if (index) out.index = index;
    if (index?.damaged?.length) {
      for (const d of index.damaged) this.problems.push(d);
      out.problems = this.problems;
      out.failed = true;
    }
    return out;
  }
}

import { closeSync, constants as fsConstants, fstatSync, openSync, type Stats } from "node:fs";
import { join } from "node:path";
import { StoreError, errno } from "./errors.js";
import { isoMicros, nowNs, type Area } from "./names.js";
import { CURSOR_SCHEMA, type SnapshotCursor } from "./cursor.js";
import type { Convert, SourceLine, SourceOutcome, SourceRef } from "./contracts.js";
import { NOT_JSON, inspectSource, mtimeSec, parseLine, readAt, sha256, sourceReason } from "./window.js";
import type { Pass } from "./pass.js";

/**
 * Take a snapshot source through its pass: read it whole, trim trailing newlines, digest; when the
 * digest differs from content_sha256 the content lands as a new file of the records `convert`
 * makes of it: one for a sidecar or manifest; several for a whole-file session document (a
 * legacy Gemini CLI chat), whose unchanged records the index then marks as re-landed copies. An
 * empty file lands nothing.
 */
export async function snapshotSteps(pass: Pass, { area, dirRel, cursorRel, src }: { area: Area; dirRel: string; cursorRel: string; src: SourceRef }, convert: Convert): Promise<SourceOutcome> {
  const s = pass.session;
  const existing = s.loadCursor(cursorRel);
  if (existing && existing.kind !== "snapshot") throw new StoreError("InvalidArgument", `${join(s.dir, cursorRel)}: is an ${existing.kind} cursor, source ${src.source} collected as snapshot`, { data: { file: cursorRel } });
  let cur = existing as SnapshotCursor | undefined;
  if (cur?.state === "conflict") return pass.inConflict();
  const look = inspectSource(src.path);
  if (look.gone) return pass.gone_(cursorRel, cur);
  if (look.problem !== undefined) return pass.problem(src, "problem", look.problem);
  let content: Buffer;
  let st: Stats;
  try {
    const fd = openSync(src.path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    try {
      st = fstatSync(fd);
      if (!st.isFile()) return pass.problem(src, "problem", "not a regular file");
      content = readAt(fd, 0, st.size, src.path);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    if (errno(e) === "ENOENT" || errno(e) === "ENOTDIR") return pass.gone_(cursorRel, cur);
    return pass.problem(src, "problem", sourceReason(e));
  }
  let reactivated = false;
  if (cur && cur.state === "source_gone") {
    cur = { ...cur, state: "active", updated_at: isoMicros(nowNs()) };
    s.saveCursor(cursorRel, cur);
    reactivated = true;
  }
  let end = content.length;
  while (end > 0 && (content[end - 1] === 10 || content[end - 1] === 13)) end--;
  const trimmed = content.subarray(0, end);
  const extra = reactivated ? { reactivated } : {};
  if (trimmed.length === 0) return { status: "unchanged", landed: [], bytesRead: 0, ...extra };
  const digest = sha256(trimmed);
  if (cur && cur.content_sha256 === digest) return { status: "unchanged", landed: [], bytesRead: 0, ...extra };
  // The whole content goes to convert as one line (a snapshot may be multi-line JSON).
  const text = trimmed.toString("utf8");
  const parsed = parseLine(text);
  const bad = parsed === NOT_JSON;
  const one: SourceLine = { bytes: trimmed, text, value: bad ? undefined : parsed, offset: 0, line: 1 };
  const rows = await pass.toRecords(src, [one], [bad], convert, trimmed.length + (trimmed.length >> 1) + 4096);
  if (rows.records === 0) throw new StoreError("InvalidArgument", `${src.path}: convert returned no record for a snapshot source`, { data: { file: src.path } });
  let nlines = 1;
  for (const b of trimmed) if (b === 10) nlines++;
  const f = pass.land(src, area, dirRel, "snapshot", { first_offset: 0, end_offset: trimmed.length, first_line: 1, last_line: nlines }, rows, digest);
  const c: SnapshotCursor = {
    schema: CURSOR_SCHEMA, kind: "snapshot", source: src.source, dev: st.dev, ino: st.ino, content_sha256: digest, size: st.size, mtime: mtimeSec(st),
    last_seq: f.seq, updated_at: isoMicros(nowNs()), state: "active",
  };
  s.saveCursor(cursorRel, c);
  return { status: "landed", landed: [f], bytesRead: content.length, ...extra };
}

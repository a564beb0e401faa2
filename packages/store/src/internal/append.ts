import { closeSync, constants as fsConstants, fstatSync, openSync, type Stats } from "node:fs";
import { join } from "node:path";
import { StoreError, errno } from "./errors.js";
import { isoMicros, nowNs, type Area } from "./names.js";
import { CURSOR_SCHEMA, type AppendCursor } from "./cursor.js";
import { DEFAULT_MAX_DELTA_BYTES, DEFAULT_MAX_WINDOWS, TAIL_WINDOW, type Convert, type Mutable, type SourceOutcome, type SourceRef, type SourceStatus } from "./contracts.js";
import { inspectSource, lineCount, mtimeSec, nextTail, readWindow, sha256, sourceReason, splitLines, tailBytes } from "./window.js";
import type { Pass } from "./pass.js";
import type { EncodedRecords, EncodedWindow } from "./records.js";

/**
 * Take an append source through the eight steps: gone → source_gone; shorter than offset →
 * conflict; same size and inode → nothing read; the 1 MiB before offset must match
 * tail_sha256; read windows of up to max_delta_bytes cut at the last complete newline; convert;
 * land, then save the cursor; at most `maxWindows` windows, then the source is pending.
 */
export async function appendSteps(pass: Pass, { area, dirRel, cursorRel, src }: { area: Area; dirRel: string; cursorRel: string; src: SourceRef }, convert: Convert): Promise<SourceOutcome> {
  const s = pass.session;
  const existing = s.loadCursor(cursorRel);
  if (existing && existing.kind !== "append") throw new StoreError("InvalidArgument", `${join(s.dir, cursorRel)}: is a ${existing.kind} cursor, source ${src.source} collected as append`, { data: { file: cursorRel } });
  let cur = existing as AppendCursor | undefined;
  if (cur?.state === "conflict") return pass.inConflict();
  // Look before opening: a FIFO, socket or device is never opened (a FIFO would block the pass).
  const look = inspectSource(src.path);
  if (look.gone) return pass.gone_(cursorRel, cur);
  if (look.problem !== undefined) return pass.problem(src, "problem", look.problem);
  const st0 = look.st!;
  // Step 3 without opening the file: same size and identity, nothing new, nothing read.
  if ((cur === undefined || cur.state === "active") && st0.size === (cur?.offset ?? 0) && (cur === undefined || st0.ino === cur.ino)) return { status: "unchanged", landed: [], bytesRead: 0 };
  let fd: number;
  try {
    fd = openSync(src.path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  } catch (e) {
    // Step 1: discovery listed it, but it is gone.
    if (errno(e) === "ENOENT" || errno(e) === "ENOTDIR") return pass.gone_(cursorRel, cur);
    return pass.problem(src, "problem", sourceReason(e));
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    return pass.problem(src, "problem", "not a regular file");
  }
  try {
    let reactivated = false;
    if (cur && cur.state === "source_gone") {
      cur = { ...cur, state: "active", updated_at: isoMicros(nowNs()) };
      s.saveCursor(cursorRel, cur);
      reactivated = true;
    }
    const budget = s.opts.maxDeltaBytes ?? DEFAULT_MAX_DELTA_BYTES;
    const maxWindows = s.opts.maxWindows ?? DEFAULT_MAX_WINDOWS;
    let st = fstatSync(fd);
    const landed: Array<{ seq: number; rel: string; records: number; bytes: number }> = [];
    let bytesRead = 0;
    let dirty = false;
    let c: Mutable<AppendCursor> = cur
      ? { ...cur }
      : { schema: CURSOR_SCHEMA, kind: "append", source: src.source, dev: st.dev, ino: st.ino, offset: 0, ord: 0, tail_sha256: sha256(Buffer.alloc(0)), size: 0, mtime: 0, last_seq: 0, updated_at: "", state: "active" };
    if (c.source !== src.source) {
      // The same cursor slot now names another source path: the bytes still decide.
      c.source = src.source;
      dirty = true;
    }
    // Step 2: shorter than offset.
    if (st.size < c.offset) return { ...pass.conflict(src, cursorRel, c, `source is shorter than the cursor's offset (size ${st.size} < offset ${c.offset})`, st), reactivated };
    const sameIdentity = st.ino === c.ino;
    // Step 3: same size and identity — nothing new, nothing read.
    if (st.size === c.offset && sameIdentity) return { status: "unchanged", landed, bytesRead, ...(reactivated ? { reactivated } : {}) };
    // Step 4: the 1 MiB before offset must still match. The bytes checked are kept: with each
    // window landed they give the next tail digest without reading the file again.
    let tail: Buffer | undefined = c.offset === 0 ? Buffer.alloc(0) : undefined;
    if (!c.tail_sha256) {
      if (!sameIdentity) return { ...pass.conflict(src, cursorRel, c, `inode changed (${c.ino} → ${st.ino}) and the cursor has no tail digest to check the bytes`, st), reactivated };
    } else if (c.offset > 0 || !sameIdentity) {
      tail = tailBytes(fd, c.offset, src.path);
      if (sha256(tail) !== c.tail_sha256) return { ...pass.conflict(src, cursorRel, c, `the ${Math.min(c.offset, TAIL_WINDOW)} bytes before offset ${c.offset} changed (tail_sha256 mismatch)`, st), reactivated };
    }
    if (!sameIdentity) {
      c.dev = st.dev;
      c.ino = st.ino;
      dirty = true;
    }
    if (src.carry) await src.carry.restore(c.offset > 0 ? c.adapter_state : undefined, c.offset);
    let status: SourceStatus = "unchanged";
    // A source whose windows are encoded elsewhere has its next window read and sent while the one
    // before it lands (at most one window ahead); a window read ahead is used only where the pass
    // would have read it, else read again.
    const offload = src.encode && !src.framing ? src.encode : undefined;
    const encodeCtx = { sessionId: s.sessionId, source: src };
    const encodeAt = (win: Buffer, offset: number, ord: number): Promise<EncodedWindow | undefined> =>
      offload!(win.subarray(0, win.length - 1), { offset, ord }, encodeCtx).catch(() => undefined);
    let ahead: { win: Buffer; st: Stats; offset: number; ord: number; enc: Promise<EncodedWindow | undefined> } | undefined;
    for (let w = 0; ; w++) {
      let win: Buffer | null;
      let enc: Promise<EncodedWindow | undefined> | undefined;
      if (ahead && ahead.offset === c.offset && ahead.ord === c.ord) {
        ({ win, st, enc } = ahead);
      } else {
        if (w > 0) st = fstatSync(fd);
        win = st.size > c.offset ? readWindow(fd, c.offset, st.size, budget, src.path, src.framing) : null;
      }
      ahead = undefined;
      if (!win) {
        if (w === 0 && st.size > c.offset) status = "waiting";
        break;
      }
      if (w >= maxWindows) {
        status = "pending";
        pass.notePending();
        break;
      }
      // Steps 5–6: split into complete lines and convert (elsewhere, when the source says it can).
      const text = win.subarray(0, win.length - 1);
      if (offload) {
        enc ??= encodeAt(win, c.offset, c.ord);
        if (w + 1 < maxWindows) {
          const next = { offset: c.offset + win.length, ord: c.ord + lineCount(text) };
          try {
            const st2 = fstatSync(fd);
            const win2 = st2.size > next.offset ? readWindow(fd, next.offset, st2.size, budget, src.path) : null;
            if (win2) ahead = { win: win2, st: st2, ...next, enc: encodeAt(win2, next.offset, next.ord) };
          } catch {
            // Read again in its turn, where its failure belongs.
          }
        }
      }
      const pre = enc ? await enc : undefined;
      let rows: EncodedRecords;
      let count: number;
      if (pre) {
        rows = pre;
        count = pre.sourceLines;
      } else {
        const split = src.framing ? src.framing.split(win, c.offset, c.ord) : splitLines(text, c.offset, c.ord);
        if (split.refuse !== undefined) return { ...pass.conflict(src, cursorRel, c, split.refuse, st), landed, bytesRead, ...(reactivated ? { reactivated } : {}) };
        const { lines, invalid } = split;
        // Source lines of the window (a torn line split in two is still one).
        count = (split as { sourceLines?: number }).sourceLines ?? lines.length;
        rows = await pass.toRecords(src, lines, invalid, convert, win.length + (win.length >> 1) + 4096);
      }
      if (cur === undefined && w === 0 && src.accept) {
        const why = src.accept(rows.facts);
        if (why !== undefined) return pass.problem(src, "rejected", why);
      }
      const newOffset = c.offset + win.length;
      // Step 7: land, then save the cursor.
      const f = pass.land(src, area, dirRel, "append", { first_offset: c.offset, end_offset: newOffset, first_line: c.ord + 1, last_line: c.ord + count }, rows);
      landed.push(f);
      bytesRead += win.length;
      const lastUuid = rows.lastId ?? c.last_uuid;
      tail = nextTail(tail ?? tailBytes(fd, c.offset, src.path), win);
      c = {
        ...c, offset: newOffset, ord: c.ord + count, tail_sha256: sha256(tail), size: st.size, mtime: mtimeSec(st),
        dev: st.dev, ino: st.ino, last_seq: f.seq, updated_at: isoMicros(nowNs()), state: "active",
      };
      if (lastUuid !== undefined) c.last_uuid = lastUuid;
      const carried = src.carry?.save(newOffset);
      if (carried !== undefined) c.adapter_state = carried;
      else delete c.adapter_state;
      s.saveCursor(cursorRel, c);
      dirty = false;
      status = "landed";
    }
    if (dirty) {
      c.updated_at = isoMicros(nowNs());
      s.saveCursor(cursorRel, c);
    }
    return { status, landed, bytesRead, ...(reactivated ? { reactivated } : {}) };
  } finally {
    closeSync(fd);
  }
}

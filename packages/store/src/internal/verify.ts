import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { StoreError, errno, ioError, isStoreError } from "./errors.js";
import { readCursorFile, type Cursor } from "./cursor.js";
import { parseLanded, type LandedHeader } from "./landed.js";
import { checkId } from "./names.js";
import { decodeIndex, readIndexState } from "./indexer.js";
import { listSessionIds, scanSession } from "./scan.js";

/**
 * What verify can find wrong. One problem per line of output.
 * - `unreadable`: a landed file or cursor cannot be read.
 * - `corrupt`: a landed file's header, body digest, record count or a record line is wrong.
 * - `name-mismatch`: the header's seq, kind, stamp, area or stream disagrees with the file's name or place.
 * - `writable`: a landed file is not read-only.
 * - `seq-reused`: two landed files of one session carry the same sequence number.
 * - `digest`: a landed file's SHA-256 differs from the digest the index recorded for it.
 * - `missing-file`: the index lists a landed file that is gone.
 * - `first-gap` / `middle-gap` / `end-gap`: lines and bytes of an append source that no landed file holds.
 * - `bad-cursor`: a cursor cannot be decoded.
 */
export type VerifyCode = "unreadable" | "corrupt" | "name-mismatch" | "writable" | "seq-reused" | "digest" | "missing-file" | "first-gap" | "middle-gap" | "end-gap" | "bad-cursor";

/** One problem. */
export interface VerifyProblem {
  readonly session: string;
  /** Path relative to the storage root. */
  readonly file: string;
  readonly code: VerifyCode;
  readonly message: string;
}

/** The result of {@link verify}. */
export interface VerifyResult {
  /** True when no problem was found (exit 0); otherwise a CLI exits non-zero. */
  readonly ok: boolean;
  readonly problems: VerifyProblem[];
  readonly sessions: number;
  readonly files: number;
  readonly records: number;
  /** Records whose source lines had already landed (re-lands after an interrupted pass): counted, not failed. */
  readonly relanded: number;
}

/** One line for a problem: `<file>: <code>: <message>`. */
export function formatProblem(p: VerifyProblem): string {
  return `${p.file}: ${p.code}: ${p.message}`;
}

interface FileInfo {
  rel: string;
  seq: number;
  header: LandedHeader;
}

/**
 * Verify a storage root without touching any source: every landed file against its own body
 * digest (header `body_sha256`) and the whole-file digest the index holds; every append stream for
 * first, middle and end gaps against its cursor. Re-landed records are counted, not failed. A
 * root that does not exist is an error (`NotFound`), never a clean root.
 */
export function verify(root: string, options: { sessions?: readonly string[] } = {}): VerifyResult {
  const problems: VerifyProblem[] = [];
  let files = 0;
  let records = 0;
  let relanded = 0;
  try {
    if (!statSync(root).isDirectory()) throw new StoreError("NotFound", `${root}: not a storage root (not a directory)`, { data: { file: root } });
  } catch (e) {
    throw ioError(root, "open storage root", e);
  }
  const ids = options.sessions ? [...options.sessions] : listSessionIds(root);
  for (const id of ids) {
    checkId("session id", id);
    const dir = join(root, id);
    const add = (rel: string, code: VerifyCode, message: string) => problems.push({ session: id, file: `${id}/${rel}`, code, message });
    const scan = scanSession(dir);
    const good = new Map<string, FileInfo>();
    const sha = new Map<string, string>();
    const seqs = new Map<number, string>();
    for (const ref of scan.landed) {
      files++;
      const prev = seqs.get(ref.seq);
      if (prev) add(ref.rel, "seq-reused", `sequence ${ref.seq} is also carried by ${prev}`);
      else seqs.set(ref.seq, ref.rel);
      const path = join(dir, ref.rel);
      let buf: Buffer;
      try {
        buf = readFileSync(path);
        if (statSync(path).mode & 0o222) add(ref.rel, "writable", "landed file is not read-only");
      } catch (e) {
        add(ref.rel, "unreadable", `cannot read: ${errno(e) ?? String(e)}`);
        continue;
      }
      sha.set(ref.rel, createHash("sha256").update(buf).digest("hex"));
      let parsed;
      try {
        parsed = parseLanded(buf, path);
      } catch (e) {
        add(ref.rel, "corrupt", isStoreError(e) ? e.message.slice(path.length + 2) : String(e));
        continue;
      }
      const h = parsed.header;
      const mism: string[] = [];
      if (h.seq !== ref.seq) mism.push(`seq ${h.seq}`);
      if (h.kind !== ref.kind) mism.push(`kind ${h.kind}`);
      if (h.collected_at !== ref.stamp) mism.push(`collected_at ${h.collected_at}`);
      if (h.area !== ref.area || h.stream !== ref.stream) mism.push(`place ${h.area}/${h.stream}`);
      if (h.session !== id) mism.push(`session ${h.session}`);
      if (mism.length) {
        add(ref.rel, "name-mismatch", `header says ${mism.join(", ")}`);
        continue;
      }
      let badRow = -1;
      for (let i = 0; i < parsed.rows.length; i++) {
        try {
          const v: unknown = JSON.parse(parsed.rows[i]!);
          if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error("not an object");
        } catch {
          badRow = i;
          break;
        }
      }
      if (badRow >= 0) {
        add(ref.rel, "corrupt", `record row ${badRow} is not a JSON object`);
        continue;
      }
      records += parsed.rows.length;
      good.set(ref.rel, { rel: ref.rel, seq: ref.seq, header: h });
    }
    // The index's digests.
    const st = readIndexState(dir);
    if (st) {
      const binPath = join(dir, "index", "entries.bin");
      try {
        const d = decodeIndex(readFileSync(binPath), binPath, st.bytes);
        for (const f of d.files) {
          const actual = sha.get(f.rel);
          if (actual === undefined) {
            if (!scan.landed.some((l) => l.rel === f.rel)) add(f.rel, "missing-file", `the index lists landed file seq ${f.seq}, which is gone`);
          } else if (actual !== f.sha256) add(f.rel, "digest", `SHA-256 ${actual} differs from the index's ${f.sha256}`);
        }
      } catch {
        /* an unusable index is rebuilt by the next collect; the landed files were checked on their own */
      }
    }
    // Gaps per append stream.
    for (const c of scan.cursors) {
      let cur: Cursor | undefined;
      try {
        cur = readCursorFile(join(dir, c.rel));
      } catch (e) {
        add(c.rel, "bad-cursor", isStoreError(e) ? e.message.slice(join(dir, c.rel).length + 2) : String(e));
        continue;
      }
      if (!cur) continue;
      if (cur.kind === "snapshot") {
        // A snapshot version equal to the one before it can only be a re-land (the cursor would have matched).
        const versions = [...good.values()]
          .filter((f) => f.header.area === c.area && f.header.stream === c.stream && f.header.kind === c.kind && f.header.cursor === "snapshot")
          .sort((a, b) => a.seq - b.seq);
        for (let i = 1; i < versions.length; i++) if (versions[i]!.header.content_sha256 === versions[i - 1]!.header.content_sha256) relanded += versions[i]!.header.records;
        continue;
      }
      const mine = [...good.values()]
        .filter((f) => f.header.area === c.area && f.header.stream === c.stream && f.header.kind === c.kind && f.header.cursor === "append")
        .sort((a, b) => a.header.first_offset - b.header.first_offset || a.seq - b.seq);
      let pos = 0;
      let line = 0;
      for (const f of mine) {
        const h = f.header;
        if (h.first_offset > pos) {
          add(f.rel, pos === 0 ? "first-gap" : "middle-gap", `source ${h.source}: bytes ${pos}..${h.first_offset} (lines ${line + 1}..${h.first_line - 1}) are in no landed file`);
        } else if (h.end_offset <= pos) {
          relanded += h.records;
        } else if (h.first_offset < pos) {
          relanded += Math.max(0, Math.min(line, h.last_line) - h.first_line + 1);
        }
        if (h.end_offset > pos) {
          pos = h.end_offset;
          line = h.last_line;
        }
      }
      if (pos < cur.offset) {
        add(c.rel, "end-gap", `source ${cur.source}: landed files reach byte ${pos} (line ${line}), the cursor holds offset ${cur.offset} (line ${cur.ord})`);
      }
    }
  }
  return { ok: problems.length === 0, problems, sessions: ids.length, files, records, relanded };
}

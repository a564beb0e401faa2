// The collector's view of a local storage root for push: sessions, their indexed landed files,
// the records in them, and whether every source of a session is gone. What push decides from
// (the sessions, index watermarks, pass.state, cursors) is read through @lake/store/pass; the index
// and the landed files (@lake/store/read) and the record schema are loaded only when a session is read.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeCursor, indexedSeq, indexStamp, listForgotten, listSessions, readPassState, type PassState } from "@lake/store/pass";
import type { FleetRow, RecordLine } from "@lake/segments";
import { CollectorError } from "./errors.js";

/** A landed file as push sees it. */
export interface LandedFileRef {
  /** Path relative to the session directory. */
  readonly rel: string;
  readonly seq: number;
  /** The pass stamp of the file, in ms since the epoch. */
  readonly collectedAtMs: number;
}

/** What push reads from a local root. */
export interface LocalRoot {
  readonly root: string;
  sessions(): string[];
  /** The session index's watermark (`@lake/store` indexedSeq): reads index.state only. */
  indexedSeq(sessionId: string): number | undefined;
  /** index.state's stamp (`@lake/store` indexStamp): one stat; unchanged while the watermark is. */
  indexStamp(sessionId: string): string | undefined;
  landedFiles(sessionId: string): Promise<LandedFileRef[]>;
  /**
   * The records of `files` as fleet rows (re-landed duplicates left out), each also as its landed
   * line (`lines[i]` is `rows[i]` as text: what a segment is written from), and each file's SHA-256.
   */
  readRows(sessionId: string, files: readonly LandedFileRef[], agent: string): Promise<{ rows: FleetRow[]; lines: RecordLine[]; digests: Map<string, string> }>;
  /**
   * True when the last complete collect pass found the session with every source active (its
   * pass.state mark): not all gone then. A cache's answer — false means "not known", never "gone".
   */
  sourcesLive(sessionId: string): boolean;
  /** True when the session has cursors and every one is source_gone. */
  allSourcesGone(sessionId: string): boolean;
}

/** `20260831T091204.481523000Z` → ms since the epoch. */
export function stampMs(stamp: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\.(\d{3})\d*Z$/.exec(stamp);
  if (!m) return 0;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), Number(m[7]));
}

type Heavy = { store: typeof import("@lake/store/read"); events: typeof import("@lake/events/record") };
let heavy: Promise<Heavy> | undefined;
const loadHeavy = (): Promise<Heavy> => (heavy ??= Promise.all([import("@lake/store/read"), import("@lake/events/record")]).then(([store, events]) => ({ store, events })));

/** A LocalRoot over a @lake/store storage root. */
export function localRoot(root: string): LocalRoot {
  // push asks for a session's files, then its rows: the index (entries.bin) is read once per session,
  // kept here for that session only (the store's own cache of it is dropped: a push reads each index once).
  let cached: { sessionId: string; index: ReturnType<Heavy["store"]["readIndex"]> } | undefined;
  const indexOf = async (sessionId: string) => {
    if (cached?.sessionId !== sessionId) {
      const { store } = await loadHeavy();
      cached = { sessionId, index: store.readIndex(root, sessionId) };
      store.releaseIndex(root, sessionId);
    }
    return cached.index;
  };
  let passState: PassState | undefined | null;
  return {
    root,
    // A forgotten session is never sent again (its removal may be under way): one listing of the
    // forget records, not one stat per session.
    sessions: () => {
      const forgotten = new Set(listForgotten(root));
      const ids = listSessions(root);
      return forgotten.size === 0 ? ids : ids.filter((id) => !forgotten.has(id));
    },
    indexedSeq: (sessionId) => indexedSeq(root, sessionId),
    indexStamp: (sessionId) => indexStamp(root, sessionId),
    async landedFiles(sessionId) {
      const idx = await indexOf(sessionId);
      const { parseLandedName } = (await loadHeavy()).store;
      return idx.files.map((f) => ({ rel: f.rel, seq: f.seq, collectedAtMs: stampMs(parseLandedName(f.name)?.stamp ?? "") }));
    },
    async readRows(sessionId, files, agent) {
      const idx = await indexOf(sessionId);
      const { store, events } = await loadHeavy();
      const dup = new Set<string>();
      for (const e of idx.entries) if (e.duplicate) dup.add(`${e.seq}/${e.row}`);
      const rows: FleetRow[] = [];
      const lines: RecordLine[] = [];
      const digests = new Map<string, string>();
      const indexed = new Map(idx.files.map((x) => [x.rel, x.sha256]));
      for (const f of files) {
        // The index recorded the file's SHA-256 when it landed: a file that changed since is damaged
        // (one that still hashes to it is not hashed twice: parseLanded).
        const want = indexed.get(f.rel);
        const lf = store.readLanded(root, sessionId, f.rel, want !== undefined ? { sha256: want } : {});
        if (want !== undefined && lf.sha256 !== want) throw new CollectorError("Input", `${join(root, sessionId, f.rel)}: SHA-256 ${lf.sha256} differs from the index's ${want} (damaged landed file)`);
        digests.set(f.rel, lf.sha256);
        lf.rows.forEach((text, row) => {
          if (dup.has(`${f.seq}/${row}`)) return;
          // The file is the one the index recorded (SHA-256 above), written by this collector: the
          // schema's field checks without zod (checkStoredRecord; a record that does not fit still
          // stops this session only).
          // The object is this line's own (just parsed): the fleet columns go onto it.
          const rec = Object.assign(events.checkStoredRecord(JSON.parse(text)), { agent, landed_seq: f.seq, landed_row: row }) as FleetRow;
          rows.push(rec);
          const ms = rec.ts === undefined ? NaN : Date.parse(rec.ts);
          lines.push({ json: text, tsMs: Number.isNaN(ms) ? null : ms, landed_seq: f.seq, landed_row: row });
        });
      }
      return { rows, lines, digests };
    },
    sourcesLive(sessionId) {
      if (passState === undefined) {
        try {
          passState = readPassState(root);
        } catch {
          passState = null; // a cache: unreadable means "not known"
        }
      }
      return passState?.sessions.has(sessionId) ?? false;
    },
    allSourcesGone(sessionId) {
      let any = false;
      for (const area of ["streams", "runs"]) {
        let streams: string[] = [];
        try {
          streams = readdirSync(join(root, sessionId, area));
        } catch {
          continue;
        }
        for (const s of streams) {
          let names: string[] = [];
          try {
            names = readdirSync(join(root, sessionId, area, s));
          } catch {
            continue;
          }
          for (const n of names) {
            if (!n.endsWith(".cursor")) continue;
            const file = join(root, sessionId, area, s, n);
            any = true;
            try {
              if (decodeCursor(readFileSync(file, "utf8"), file).state !== "source_gone") return false;
            } catch {
              return false;
            }
          }
        }
      }
      return any;
    },
  };
}

// push: send every session's new landed records to the fleet store as Parquet segments.
//
// For each session of the local root, the landed files push.state does not list (for this
// receiver, with the digest they have now) are read, their records become one segment per runtime
// under the next seg-NNNNNN of the session's fleet directory, created with putIfAbsent (a segment
// is never rewritten), and only then push.state records the files. A crash between the upload and
// the state save is resolved on the next push: the segment already under that key is read back
// and the landed files it holds are recorded as sent, so nothing is sent twice.
import { randomBytes, createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, openSync, fsyncSync, closeSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import type { CanonicalRecord } from "@lake/events";
import {
  encodeQuarantine,
  encodeSealed,
  heartbeat,
  initFleet,
  listTombstones,
  quarantineKey,
  readFleet,
  sealedKey,
  seededUlid,
  sessionLabel,
  segmentKey,
  sessionPrefix,
  utcDate,
  type ObjectStore,
  type SessionPartition,
} from "@lake/layout";
import type { FleetRow } from "@lake/segments";
import { CollectorError } from "./errors.js";
import type { LocalRoot, LandedFileRef } from "./local-root.js";
import { step } from "./crash.js";
import { QUARANTINE_TYPE } from "@lake/redact";

/** push.state: what has been sent to each receiver. */
export interface PushState {
  schema: 1;
  receivers: Record<string, ReceiverState>;
}
/** What one receiver (a fleet store URL) has been sent. */
export interface ReceiverState {
  fleet_id: string;
  sessions: Record<string, SessionPushState>;
}
/** One session's push state at one receiver. */
export interface SessionPushState {
  /** The session directory's partition label (`<session id>`, then `<id>.2` … after a seal). */
  part: number;
  /** dt of the current part. */
  dt: string;
  /** Next segment number per runtime in the current part. */
  next_seg: Record<string, number>;
  /** Segments and rows written in the current part, per runtime. */
  segments: Record<string, number>;
  rows: Record<string, number>;
  /** Landed files sent: path relative to the session directory → SHA-256 of the file. */
  files: Record<string, string>;
  /** The current part is sealed (per runtime sealed markers written). */
  sealed: boolean;
}

/** Options of one push. */
export interface PushOptions {
  readonly agent: string;
  /** Seal a session whose newest landed file is older than this (seconds); 0 seals right after sending. */
  readonly sealIdleSeconds: number;
  /** Fleet id for a store without fleet.json (created with create-if-absent). */
  readonly fleetId?: string;
  readonly now?: () => number;
  /** Called after each session (progress). */
  readonly onSession?: (sessionId: string, sent: number) => void;
  /** Asked before each session (push.state is saved after every one): true stops the push there. */
  readonly shouldStop?: () => boolean;
}

/** What one push did. */
export interface PushSummary {
  store: string;
  fleet_id: string;
  sessions: number;
  segments: number;
  rows: number;
  bytes: number;
  quarantined: number;
  sealed: number;
  /** Sessions whose current part another writer had sealed (learned from its `_SEALED`): continued in the next part. */
  learned: number;
  recovered: number;
  /** Sessions the store has a tombstone for (`lake-maint forget`): never sent. */
  refused: string[];
  /** The push stopped between sessions when asked to (`shouldStop`); `sessions` counts those sent. */
  interrupted: boolean;
  /**
   * Sessions not sent because their local data is damaged (a landed file or the index that does not
   * read or check): each with the one-line reason naming the file. The other sessions were pushed.
   */
  problems: { session: string; reason: string }[];
}

const STATE_FILE = "push.state";

/** Read push.state (an absent file is an empty state; a damaged one is refused, never reset). */
export function readPushState(root: string): PushState {
  const file = join(root, STATE_FILE);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { schema: 1, receivers: {} };
    throw new CollectorError("Input", `${file}: cannot read (${(e as Error).message})`);
  }
  try {
    const v = JSON.parse(text) as PushState;
    if (v.schema !== 1 || typeof v.receivers !== "object") throw new Error("unknown schema");
    return v;
  } catch (e) {
    throw new CollectorError("Input", `${file}: not a push state (${(e as Error).message}); refusing to reset it`);
  }
}

/** Replace push.state atomically (temp + fsync + rename + dir fsync). */
export function writePushState(root: string, state: PushState): void {
  const file = join(root, STATE_FILE);
  const tmp = join(root, `.${STATE_FILE}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
  writeFileSync(tmp, JSON.stringify(state) + "\n");
  const fd = openSync(tmp, "r");
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, file);
  const dfd = openSync(root, "r");
  try {
    fsyncSync(dfd);
  } finally {
    closeSync(dfd);
  }
}

/** Push every session of the root to `store`. */
export async function push(local: LocalRoot, store: ObjectStore, options: PushOptions): Promise<PushSummary> {
  const now = options.now ?? Date.now;
  let fleet = await readFleet(store);
  if (!fleet) fleet = (await initFleet(store, options.fleetId ?? `fleet-${randomBytes(4).toString("hex")}`)).manifest;
  const state = readPushState(local.root);
  const recv = (state.receivers[store.url] ??= { fleet_id: fleet.fleet_id, sessions: {} });
  if (recv.fleet_id !== fleet.fleet_id) {
    throw new CollectorError("Store", `${store.url}: fleet.json names fleet ${fleet.fleet_id}, but this root pushed to fleet ${recv.fleet_id} there; refusing to mix`);
  }
  const summary: PushSummary = { store: store.url, fleet_id: fleet.fleet_id, sessions: 0, segments: 0, rows: 0, bytes: 0, quarantined: 0, sealed: 0, learned: 0, recovered: 0, refused: [], interrupted: false, problems: [] };
  // A session forgotten in this fleet is refused: one listing of tombstones/ per push.
  const tombstones = await listTombstones(store);
  const tmp = join(tmpdir(), `lake-push-${process.pid}-${randomBytes(4).toString("hex")}`);
  mkdirSync(tmp, { recursive: true });
  // @lake/segments (DuckDB) is loaded here, not at import: collect imports this module and must
  // not pay for DuckDB at start-up.
  const { SegmentWriter } = await import("@lake/segments");
  const writer = await SegmentWriter.open();
  const runtimes = new Set<string>();
  try {
    for (const sessionId of local.sessions()) {
      if (options.shouldStop?.()) {
        summary.interrupted = true;
        break;
      }
      if (tombstones.has(sessionId)) {
        summary.refused.push(sessionId);
        continue;
      }
      // Damaged local data (an index or landed file that does not read or check) stops this session
      // only: it is named, nothing of it is sent, and the push goes on with the next.
      let files: LandedFileRef[];
      try {
        files = local.landedFiles(sessionId);
      } catch (e) {
        summary.problems.push({ session: sessionId, reason: e instanceof Error ? e.message : String(e) });
        continue;
      }
      const ss = recv.sessions[sessionId];
      // Landed files are immutable: a name push.state lists has been sent.
      const fresh = files.filter((f) => ss?.files[f.rel] === undefined);
      if (fresh.length === 0 && (ss === undefined || ss.sealed || !sealDue(local, sessionId, files, options.sealIdleSeconds, now))) continue;
      let read: { rows: FleetRow[]; digests: Map<string, string> } | undefined;
      if (fresh.length > 0) {
        try {
          read = local.readRows(sessionId, fresh, options.agent);
        } catch (e) {
          summary.problems.push({ session: sessionId, reason: e instanceof Error ? e.message : String(e) });
          continue;
        }
      }
      const st: SessionPushState = ss ?? { part: 1, dt: "", next_seg: {}, segments: {}, rows: {}, files: {}, sealed: false };
      recv.sessions[sessionId] = st;
      let sent = 0;
      if (read !== undefined) {
        // Whoever sealed the current part (a push, this one from another root's state, or
        // `lake-maint seal`), the store says so: one HEAD per runtime directory, only for a session
        // with something to send.
        if (!st.sealed && st.dt !== "" && (await sealedInStore(store, sessionId, st, fleet.fleet_id, options.agent))) {
          st.sealed = true;
          summary.learned++;
        }
        // A sealed part is never appended to: new records start the session's next part.
        if (st.sealed) {
          st.part += 1;
          st.dt = "";
          st.next_seg = {};
          st.segments = {};
          st.rows = {};
          st.sealed = false;
        }
        const { rows, digests } = read;
        if (st.dt === "") st.dt = sessionDay(rows, now);
        const byRuntime = new Map<string, FleetRow[]>();
        for (const r of rows) {
          let l = byRuntime.get(r.runtime);
          if (!l) byRuntime.set(r.runtime, (l = []));
          l.push(r);
        }
        for (const [runtime, list] of byRuntime) {
          runtimes.add(runtime);
          const p: SessionPartition = { dt: st.dt, fleet: fleet.fleet_id, runtime, agent: options.agent, session: sessionLabel(sessionId, st.part) };
          const quarantined = list.filter((r) => r.vendor_type === QUARANTINE_TYPE);
          for (const q of quarantined) summary.quarantined += await putQuarantine(store, options.agent, q);
          let pending = list;
          while (pending.length > 0) {
            const seg = st.next_seg[runtime] ?? 0;
            const key = segmentKey(p, seg);
            const path = join(tmp, `seg-${sessionId}-${runtime}-${seg}.parquet`);
            rmSync(path, { force: true });
            const info = await writer.write(path, pending, "bronze");
            step("push:segment-written");
            const r = await store.upload(key, { path }, { ifAbsent: true });
            step("push:uploaded");
            rmSync(path, { force: true });
            if (r.status === "written") {
              st.next_seg[runtime] = seg + 1;
              st.segments[runtime] = (st.segments[runtime] ?? 0) + 1;
              st.rows[runtime] = (st.rows[runtime] ?? 0) + info.rows;
              summary.segments++;
              summary.rows += info.rows;
              summary.bytes += info.bytes;
              sent += info.rows;
              pending = [];
            } else if (r.status === "conflict") {
              // The key is taken: an earlier push wrote it and stopped before saving its state.
              // Read it back; its landed files count as sent, and what is left goes to the next key.
              const have = await segmentLandedSeqs(store, key, tmp, runtime, options.agent);
              st.next_seg[runtime] = seg + 1;
              st.segments[runtime] = (st.segments[runtime] ?? 0) + 1;
              st.rows[runtime] = (st.rows[runtime] ?? 0) + have.rows;
              summary.recovered++;
              pending = pending.filter((row) => row.landed_seq === undefined || !have.seqs.has(row.landed_seq));
            } else {
              throw new CollectorError("Store", `${store.url}/${key}: upload outcome unknown (${String((r.cause as Error)?.message ?? r.cause)}); run push again`);
            }
          }
        }
        for (const f of fresh) st.files[f.rel] = digests.get(f.rel) ?? "";
        writePushState(local.root, state);
        step("push:state-saved");
        summary.sessions++;
      }
      if (!st.sealed && sealDue(local, sessionId, files, options.sealIdleSeconds, now)) {
        for (const runtime of Object.keys(st.next_seg)) {
          const p: SessionPartition = { dt: st.dt, fleet: fleet.fleet_id, runtime, agent: options.agent, session: sessionLabel(sessionId, st.part) };
          const body = encodeSealed({ sealed_at: new Date(now()).toISOString(), segments: st.segments[runtime] ?? 0, rows: st.rows[runtime] ?? 0 });
          const r = await store.putIfAbsent(sealedKey(p), body);
          step("push:sealed");
          if (r.status === "unknown") throw new CollectorError("Store", `${store.url}/${sealedKey(p)}: outcome unknown; run push again`);
        }
        st.sealed = true;
        summary.sealed++;
        writePushState(local.root, state);
      }
      options.onSession?.(sessionId, sent);
    }
    if (summary.sessions > 0 || runtimes.size > 0) {
      await heartbeat(store, { agent_id: options.agent, runtime: [...runtimes].sort().join(",") || "lake-collector", repo: "", branch: "", tool: "push", ttlSeconds: 900 }, { now });
    }
  } finally {
    writer.close();
    rmSync(tmp, { recursive: true, force: true });
  }
  return summary;
}


/** Whether any runtime directory of the session's current part has `_SEALED` in the store. */
async function sealedInStore(store: ObjectStore, sessionId: string, st: SessionPushState, fleetId: string, agent: string): Promise<boolean> {
  for (const runtime of Object.keys(st.next_seg)) {
    const key = sealedKey({ dt: st.dt, fleet: fleetId, runtime, agent, session: sessionLabel(sessionId, st.part) });
    if ((await store.head(key)) !== undefined) return true;
  }
  return false;
}

async function putQuarantine(store: ObjectStore, agent: string, r: FleetRow): Promise<number> {
  let attrs: { rules_fired?: string[]; hash?: string } = {};
  try {
    attrs = JSON.parse(r.attrs ?? "{}") as typeof attrs;
  } catch {
    /* keep empty */
  }
  const hash = attrs.hash ?? r.content_hash;
  // A deterministic id (time from the record, entropy from its hash), so a re-push writes the same key.
  const t = r.ts ? Date.parse(r.ts) : 0;
  const id = seededUlid(Number.isNaN(t) ? 0 : t, createHash("sha256").update(`${r.session_id}\0${hash}\0${r.record_id ?? ""}`).digest());
  const key = quarantineKey(agent, utcDate(Number.isNaN(t) ? 0 : t), id);
  const body = encodeQuarantine({ status: "quarantined", rules_fired: attrs.rules_fired ?? r.redaction_rules ?? [], hash, session_id: r.session_id, runtime: r.runtime, record_id: r.record_id ?? null, ts: r.ts ?? null });
  const res = await store.putIfAbsent(key, body);
  step("push:quarantine");
  return res.status === "written" ? 1 : 0;
}

async function segmentLandedSeqs(store: ObjectStore, key: string, tmp: string, runtime: string, agent: string): Promise<{ seqs: Set<number>; rows: number }> {
  const path = join(tmp, `existing-${randomBytes(4).toString("hex")}.parquet`);
  await store.download(key, path);
  try {
    const { readSegment } = await import("@lake/segments");
    const rows = await readSegment(path, "bronze", { runtime, agent });
    return { seqs: new Set(rows.map((r) => r.landed_seq).filter((s): s is number => s !== undefined)), rows: rows.length };
  } finally {
    rmSync(path, { force: true });
  }
}

function sessionDay(rows: readonly CanonicalRecord[], now: () => number): string {
  let min: string | undefined;
  for (const r of rows) if (r.ts && (min === undefined || r.ts < min)) min = r.ts;
  const t = min ? Date.parse(min) : NaN;
  return utcDate(Number.isNaN(t) ? now() : t);
}

function sealDue(local: LocalRoot, sessionId: string, files: readonly LandedFileRef[], idleSeconds: number, now: () => number): boolean {
  if (files.length === 0) return false;
  if (local.allSourcesGone(sessionId)) return true;
  const newest = Math.max(...files.map((f) => f.collectedAtMs));
  return now() - newest >= idleSeconds * 1000;
}

export { sessionPrefix };

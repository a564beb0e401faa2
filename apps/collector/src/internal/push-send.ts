// push's sender: the sessions push.ts decided to look at are read, sent as segments, sealed, and
// recorded in push.state (see push.ts). Loaded only when there is something to look at.
import { randomBytes, createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { scratchDir, writeAtomic } from "@lake/durable";
import { join } from "node:path";
import type { UsageCarryState, UsageRecord } from "@lake/events/usage";
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
  segmentUsageKey,
  utcDate,
  type FleetManifest,
  type ObjectStore,
  type SessionPartition,
} from "@lake/layout";
import type { FleetRow, ParquetFileInfo, RecordLine } from "@lake/segments";
import { CollectorError } from "./errors.js";
import type { LocalRoot, LandedFileRef, PushLine, PushRows } from "./local-root.js";
import { step } from "./crash.js";
import { CARRY_DIR, carryName, emptySummary, PUSH_SCRATCH, writePushState, type PushOptions, type PushState, type PushSummary, type SessionPushState } from "./push.js";

/**
 * Send the sessions in `look` (every session of the root when undefined) to `store`, recording in
 * `state` (push.state, saved at most every second, before a seal and at the end) what was sent and each looked-at session's index
 * watermark.
 */
export async function send(local: LocalRoot, store: ObjectStore, options: PushOptions, state: PushState, look: readonly string[] | undefined, grown = true): Promise<PushSummary> {
  const now = options.now ?? Date.now;
  // @lake/segments (DuckDB) is loaded when the first segment is written: a push that only seals,
  // or only records watermarks, does not pay for it. One whose sessions grew starts it now, so
  // DuckDB opens (on a thread) while the fleet, the tombstones and the first sessions are read.
  // Its files are scratch copies, uploaded (the store's copy is made durable) and removed: not
  // fsynced. Two connections: two of the sessions in flight write their segments at once, each
  // COPY on a thread of its own (a third waits its turn).
  let opening: Promise<Awaited<ReturnType<typeof import("@lake/segments").SegmentWriter.open>>> | undefined;
  const openWriter = () => (opening ??= import("@lake/segments").then(({ SegmentWriter }) => SegmentWriter.open({ fsync: false, connections: SEGMENTS_AT_ONCE })));
  // Started ahead, it may fail before anything waits for it: the failure is met where it is waited for.
  if (grown) openWriter().catch(() => undefined);
  const writeSegment = async (path: string, lines: readonly RecordLine[], onCopy: () => void) => (await openWriter()).writeLines(path, lines, "bronze", { onCopy });
  let fleet: FleetManifest | undefined;
  let tombstones: Set<string>;
  try {
    fleet = await readFleet(store);
    if (!fleet) fleet = (await initFleet(store, options.fleetId ?? `fleet-${randomBytes(4).toString("hex")}`)).manifest;
    const recv = state.receivers[store.url];
    if (recv !== undefined && recv.fleet_id !== fleet.fleet_id) {
      throw new CollectorError("Store", `${store.url}: fleet.json names fleet ${fleet.fleet_id}, but this root pushed to fleet ${recv.fleet_id} there; refusing to mix`);
    }
    // A session forgotten in this fleet is refused: one listing of tombstones/ per push.
    tombstones = await listTombstones(store);
  } catch (e) {
    if (opening !== undefined) (await opening.catch(() => undefined))?.close();
    throw e;
  }
  const recv = (state.receivers[store.url] ??= { fleet_id: fleet.fleet_id, sessions: {} });
  const summary = emptySummary(store.url, fleet.fleet_id);
  // Segments and rollups are written here before upload; a push killed meanwhile leaves it to the next push's sweep.
  const scratch = scratchDir(PUSH_SCRATCH);
  const tmp = scratch.dir;
  const runtimes = new Set<string>();
  // push.state holds every session: rewriting it after each one would make a push of a few
  // sessions cost the whole file once per session. It is saved at most every SAVE_EVERY_MS, at the
  // end, and before an error leaves; a push killed in between finds the segments it wrote under
  // their keys on the next run and counts their landed files as sent (recovered), so nothing is
  // sent twice and nothing is lost. A session in flight works on a copy of its state, put into
  // push.state when its segments are all uploaded (or it fails): a save meanwhile never holds half
  // of a session.
  // A seal needs its own session's sent files saved first, no more: `sentUnsaved` holds the sessions that
  // sent something since the last save, so a push that seals many idle sessions (the first push
  // after a quiet day) saves push.state at its pace, not once per seal. A session that sent and is
  // due for its seal waits for the next save (`saved()`: a second away at most, or the end), on a
  // task of its own (`seals`), not in flight: one save lets the seals of every session sent since go.
  let unsaved = false;
  let savedAt = Date.now();
  const sentUnsaved = new Set<string>();
  let released: Promise<boolean> | undefined;
  let release: ((go: boolean) => void) | undefined;
  let saveTimer: NodeJS.Timeout | undefined;
  /**
   * Resolves true at the next save, false when the push leaves without one (an error): its seals
   * are not written. The first seal to wait sets a timer for that save, a second on, so seals do
   * not wait on a long session in flight (a save holds no half session: see above).
   */
  const saved = (): Promise<boolean> => {
    if (released === undefined) {
      released = new Promise<boolean>((go) => (release = go));
      saveTimer = setTimeout(() => {
        try {
          save(false);
        } catch (e) {
          failure ??= { e };
        }
      }, SAVE_EVERY_MS);
    }
    return released;
  };
  const letSealsGo = (go: boolean): void => {
    clearTimeout(saveTimer);
    const r = release;
    released = release = saveTimer = undefined;
    r?.(go);
  };
  const save = (force: boolean): void => {
    if (!unsaved || (!force && Date.now() - savedAt < SAVE_EVERY_MS)) return;
    writePushState(local.root, state);
    step("push:state-saved");
    savedAt = Date.now();
    unsaved = false;
    sentUnsaved.clear();
    letSealsGo(true);
  };
  const seals = new Set<Promise<void>>();
  // A save may let many seals go at once: SEALS_AT_ONCE of them write at a time, the others wait
  // their turn in order (a seal done hands its turn to the next).
  let writing = 0;
  const turns: (() => void)[] = [];
  const inTurn = async (seal: () => Promise<void>): Promise<void> => {
    if (writing < SEALS_AT_ONCE) writing++;
    else await new Promise<void>((go) => turns.push(go));
    try {
      await seal();
    } finally {
      const next = turns.shift();
      if (next) next();
      else writing--;
    }
  };
  let failure: { e: unknown } | undefined;
  const rethrow = (): void => {
    if (failure !== undefined) throw failure.e;
  };
  // A session's landed files are read (and checked) while earlier sessions' segments are written
  // and uploaded: the next session to look at is read ahead once, when a segment write starts.
  // Reading is all it does — what it finds is acted on in session order, when the loop gets there
  // (a problem is named then, a refused or interrupted session is never acted on).
  const batchBytes = options.batchBytes ?? BATCH_BYTES;
  const ids = look ?? local.sessions();
  const ahead = new Map<string, Promise<Prepared>>();
  const prepare = async (sessionId: string): Promise<Prepared> => {
    // Damaged local data (an index or landed file that does not read or check) stops this session
    // only: it is named, nothing of it is sent, and the push goes on with the next.
    try {
      // Read before the index, so the recorded watermark never claims more than was read; the
      // stamp before the watermark, so it never names a newer index.state than the one read.
      const stamp = local.indexStamp(sessionId);
      const watermark = local.indexedSeq(sessionId);
      // Landed files are immutable: a name push.state lists has been sent.
      const ss = recv.sessions[sessionId];
      const files = await local.landedFiles(sessionId, ss === undefined ? undefined : (rel) => ss.files[rel] !== undefined);
      const fresh = files.filter((f) => ss?.files[f.rel] === undefined);
      const read = fresh.length > 0 ? await local.readRows(sessionId, fresh, options.agent, batchBytes) : undefined;
      return { watermark, stamp, files, fresh, read };
    } catch (e) {
      return { problem: e instanceof Error ? e.message : String(e) };
    }
  };
  let position = 0;
  const readAhead = (): void => {
    const next = ids[position + 1];
    if (next !== undefined && !ahead.has(next) && !tombstones.has(next)) ahead.set(next, prepare(next));
  };

  /** Send one session's fresh rows (and seal it when due), on a copy of its state put back at the end. */
  const sendSession = async (sessionId: string, prepared: Sent): Promise<void> => {
    const { watermark, stamp, files, fresh, read } = prepared;
    const ss = recv.sessions[sessionId];
    const st: SessionPushState = ss
      ? { ...ss, next_seg: { ...ss.next_seg }, segments: { ...ss.segments }, rows: { ...ss.rows }, files: { ...ss.files } }
      : { part: 1, dt: "", next_seg: {}, segments: {}, rows: {}, files: {}, sealed: false };
    let sent = 0;
    // A directory this push seals after sending gets no next segment: the carry of its last rollup
    // would be removed at the seal, so it is not written, nor its records' document made (its usage
    // is folded into the rollup alone: Owed.lean); a push stopped before the seal counts the
    // directory from the store the next time it grows.
    const sealing = sealDue(local, sessionId, files, options.sealIdleSeconds, now);
    // Per runtime directory: the segments written since its last rollup, and what their usage
    // records count to so far (Owed).
    const owed = new Map<string, Owed>();
    const ev = await import("@lake/events/usage");
    // A written segment's usage is folded into its directory's carry once the next segment's COPY
    // is under way (or before anything else is owed, or paid): in order, off the path from one
    // COPY to the next.
    const folds: (() => void)[] = [];
    const foldNow = (): void => {
      for (const f of folds.splice(0)) f();
    };
    const payOwed = async (): Promise<void> => {
      foldNow();
      for (const [runtime, o] of owed) {
        await putSegmentRollup(store, local.root, o.p, o.seg, owedCount(o, ev), tmp, !o.lean);
        owed.delete(runtime);
      }
    };
    // A later batch that did not read: the session is not sealed (its files are not all sent).
    let stopped = false;
    // The segment counters as the batch under way found them: a push that stops inside a batch
    // (one runtime's segment uploaded, the next one's not) keeps these, since that batch's files
    // are not recorded as sent; the next push finds the uploaded key taken and reads it back
    // rather than sending its lines again under the next key.
    let mark: Pick<SessionPushState, "next_seg" | "segments" | "rows"> | undefined;
    // The runtime directories of this session where a key was found taken (a push stopped before
    // saving, a root that lost push.state): the keys after it are likely taken too, so each is asked
    // for (one HEAD) before its segment is written — a segment the store holds is read back, never
    // encoded again only to be refused. A directory that met no taken key is asked nothing.
    const taken = new Set<string>();
    try {
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
        if (st.dt === "") st.dt = sessionDay(read.lines, now);
        // A session is sent in batches of its fresh files (batchBytes of landed bytes each, in
        // order), each batch's lines as one segment per runtime: a very long session is never held
        // whole. The usage rollup of a directory is written once, beside the last segment this push
        // writes there (the reader adds the newest segment's rollup; a segment without one makes it
        // read the directory's rows), from the records of the segments written since its carry.
        let batch: PushRows = read;
        let done = 0;
        // The session's next batch, read while this one's segment is written (DuckDB's COPY runs
        // on a thread of its own; a segment found taken is read back on DuckDB's too): one batch
        // ahead at most. What it finds is acted on in its turn, after this batch is recorded as sent.
        let next: { from: number; rows: Promise<PushRows> } | undefined;
        const readNext = (): void => {
          const from = done + batch.files;
          if (next !== undefined || from >= fresh.length) return;
          const rows = local.readRows(sessionId, fresh.slice(from), options.agent, batchBytes);
          rows.catch(() => undefined); // met in its turn
          next = { from, rows };
        };
        // What the main thread does while DuckDB works (a COPY, or reading back a segment found
        // taken): read ahead, and fold the usage of the segment written before.
        const meanwhile = (): void => {
          readAhead();
          readNext();
          foldNow();
        };
        for (;;) {
          const { lines, digests } = batch;
          mark = { next_seg: { ...st.next_seg }, segments: { ...st.segments }, rows: { ...st.rows } };
          // Each runtime's landed lines (what its segment is written from: DuckDB reads their bytes).
          const byRuntime = new Map<string, PushLine[]>();
          for (const l of lines) {
            let list = byRuntime.get(l.runtime);
            if (!list) byRuntime.set(l.runtime, (list = []));
            list.push(l);
          }
          for (const [runtime, list] of byRuntime) {
            runtimes.add(runtime);
            const p: SessionPartition = { dt: st.dt, fleet: fleet.fleet_id, runtime, agent: options.agent, session: sessionLabel(sessionId, st.part) };
            for (const l of list) if (l.quarantined !== undefined) summary.quarantined += await putQuarantine(store, options.agent, l.quarantined);
            let pending = list;
            while (pending.length > 0) {
              const seg = st.next_seg[runtime] ?? 0;
              const key = segmentKey(p, seg);
              const known = taken.has(runtime) && (await store.head(key)) !== undefined;
              let wrote: { r: Awaited<ReturnType<ObjectStore["upload"]>>; info: ParquetFileInfo } | undefined;
              if (!known) {
                const path = join(tmp, `seg-${sessionId}-${runtime}-${seg}.parquet`);
                rmSync(path, { force: true });
                let foldFailed: { e: unknown } | undefined;
                const info = await writeSegment(path, pending, () => {
                  try {
                    meanwhile();
                  } catch (e) {
                    foldFailed = { e }; // the session's own failure, met here: not the segment's
                  }
                });
                if (foldFailed) throw foldFailed.e;
                step("push:segment-written");
                wrote = { r: await store.upload(key, segmentSource(path, info.bytes), { ifAbsent: true }), info };
                step("push:uploaded");
                rmSync(path, { force: true });
              } else meanwhile();
              if (wrote?.r.status === "written") {
                const info = wrote.info;
                let o = owed.get(runtime);
                if (!o) owed.set(runtime, (o = startOwed(local.root, store, p, seg, ev, sealing)));
                o.seg = seg;
                const written = pending;
                const into = o;
                folds.push(() => addOwed(into, usageOf(written), ev));
                st.next_seg[runtime] = seg + 1;
                st.segments[runtime] = (st.segments[runtime] ?? 0) + 1;
                st.rows[runtime] = (st.rows[runtime] ?? 0) + info.rows;
                summary.segments++;
                summary.rows += info.rows;
                summary.bytes += info.bytes;
                sent += info.rows;
                pending = [];
              } else if (known || wrote?.r.status === "conflict") {
                // The key is taken: an earlier push wrote it and stopped before saving its state.
                // Read it back; its landed files count as sent, and what is left goes to the next key.
                // Its usage as the store holds it is owed to the directory's rollup as a written
                // segment's is (the push that wrote it may have stopped before its rollup: one named
                // by the same bytes is left as it is).
                taken.add(runtime);
                foldNow();
                const have = await storedSegment(store, key, tmp, runtime);
                st.next_seg[runtime] = seg + 1;
                st.segments[runtime] = (st.segments[runtime] ?? 0) + 1;
                st.rows[runtime] = (st.rows[runtime] ?? 0) + have.rows;
                summary.recovered++;
                pending = pending.filter((l) => !have.seqs.has(l.landed_seq));
                let o = owed.get(runtime);
                if (!o) owed.set(runtime, (o = startOwed(local.root, store, p, seg, ev, sealing)));
                o.seg = seg;
                if (have.usage !== undefined) addOwed(o, have.usage, ev);
                else fromStore(o);
              } else {
                const cause = wrote?.r.status === "unknown" ? wrote.r.cause : undefined;
                throw new CollectorError("Store", `${store.url}/${key}: upload outcome unknown (${String((cause as Error)?.message ?? cause)}); run push again`);
              }
            }
          }
          for (const f of fresh.slice(done, done + batch.files)) st.files[f.rel] = digests.get(f.rel) ?? "";
          mark = undefined;
          done += batch.files;
          if (done >= fresh.length) break;
          // A later batch that does not read or check stops the session there: what was sent stays sent.
          try {
            const ahead = next?.from === done ? next.rows : undefined;
            next = undefined;
            batch = await (ahead ?? local.readRows(sessionId, fresh.slice(done), options.agent, batchBytes));
          } catch (e) {
            summary.problems.push({ session: sessionId, reason: e instanceof Error ? e.message : String(e) });
            stopped = true;
            break;
          }
        }
        await payOwed();
        recordWatermark(st, watermark, stamp, files);
        recv.sessions[sessionId] = st;
        unsaved = true;
        sentUnsaved.add(sessionId);
        save(false);
        summary.sessions++;
      }
      if (!stopped && !st.sealed && sealDue(local, sessionId, files, options.sealIdleSeconds, now)) {
        // What was sent is saved before the seal: a rerun must never find its own _SEALED over
        // files push.state does not list (it would send them again, to the next part).
        recv.sessions[sessionId] = st;
        const seal = async (): Promise<void> => {
          for (const runtime of Object.keys(st.next_seg)) {
            const p: SessionPartition = { dt: st.dt, fleet: fleet.fleet_id, runtime, agent: options.agent, session: sessionLabel(sessionId, st.part) };
            const body = encodeSealed({ sealed_at: new Date(now()).toISOString(), segments: st.segments[runtime] ?? 0, rows: st.rows[runtime] ?? 0 });
            const r = await store.putIfAbsent(sealedKey(p), body);
            step("push:sealed");
            if (r.status === "unknown") throw new CollectorError("Store", `${store.url}/${sealedKey(p)}: outcome unknown; run push again`);
            // A sealed directory gets no next segment: its carry is not needed again.
            rmSync(carryFiles(local.root, store, p).at((st.next_seg[runtime] ?? 1) - 1), { force: true });
          }
          st.sealed = true;
          summary.sealed++;
          recordWatermark(st, watermark, stamp, files);
          unsaved = true;
          save(false);
        };
        if (!sentUnsaved.has(sessionId)) await seal();
        else {
          const waiting: Promise<void> = saved()
            .then((go) => (go ? inTurn(seal) : undefined))
            .catch((e: unknown) => void (failure ??= { e }))
            .finally(() => seals.delete(waiting));
          seals.add(waiting);
        }
      }
    } catch (e) {
      // What it did upload is kept, as a push that stops there would have kept it, with the rollups
      // it owes when they can still be written (else the reader reads those directories' rows).
      await payOwed().catch(() => undefined);
      if (mark !== undefined) Object.assign(st, mark);
      recv.sessions[sessionId] = st;
      unsaved = true;
      throw e;
    }
    options.onSession?.(sessionId, sent);
  };

  // Sessions in flight at once: each waits mostly on the store (its uploads' fsyncs or requests)
  // and its turn on DuckDB, so a few at a time keep both busy. Bounded by count and by the
  // bytes of rows they hold.
  const inflight = new Set<Promise<void>>();
  let holding = 0;
  try {
    for (; position < ids.length && failure === undefined; position++) {
      const sessionId = ids[position]!;
      if (options.shouldStop?.()) {
        summary.interrupted = true;
        break;
      }
      if (tombstones.has(sessionId)) {
        summary.refused.push(sessionId);
        continue;
      }
      const prepared = await (ahead.get(sessionId) ?? prepare(sessionId));
      ahead.delete(sessionId);
      if ("problem" in prepared) {
        summary.problems.push({ session: sessionId, reason: prepared.problem });
        continue;
      }
      const { watermark, stamp, files, fresh } = prepared;
      const ss = recv.sessions[sessionId];
      if (fresh.length === 0 && (ss === undefined || ss.sealed || !sealDue(local, sessionId, files, options.sealIdleSeconds, now))) {
        if (ss !== undefined) unsaved = recordWatermark(ss, watermark, stamp, files) || unsaved;
        continue;
      }
      const size = prepared.read?.lines.reduce((a, l) => a + l.json.length, 0) ?? 0;
      while (inflight.size > 0 && (inflight.size >= IN_FLIGHT || holding + size > IN_FLIGHT_CHARS)) await Promise.race(inflight);
      if (failure !== undefined) break;
      holding += size;
      const task: Promise<void> = sendSession(sessionId, prepared)
        .catch((e: unknown) => void (failure ??= { e }))
        .finally(() => {
          holding -= size;
          inflight.delete(task);
        });
      inflight.add(task);
    }
    await Promise.all(inflight);
    rethrow();
    // The seals still waiting go with this save, and what they did is saved after them.
    save(true);
    await Promise.all(seals);
    rethrow();
    save(true);
    if (summary.sessions > 0 || runtimes.size > 0) {
      await heartbeat(store, { agent_id: options.agent, runtime: [...runtimes].sort().join(",") || "lake-collector", repo: "", branch: "", tool: "push", ttlSeconds: 900 }, { now });
    }
  } catch (e) {
    await Promise.all(inflight);
    // Seals waiting for a save are let go with it (their session's files are saved then), or not
    // written at all when it cannot be made; either way none is left waiting.
    try {
      save(true);
    } finally {
      letSealsGo(false);
      await Promise.all(seals);
    }
    save(true);
    throw e;
  } finally {
    // A read ahead that was not used is waited for (it reads only; its result is dropped).
    await Promise.all(ahead.values());
    if (opening !== undefined) (await opening.catch(() => undefined))?.close();
    scratch.done();
  }
  return summary;
}

/**
 * Sessions a push sends at once, and the most landed-line bytes they may hold together (one session
 * is always let in): small sessions (an incremental push) go four at a time, large ones one or two.
 * 24 MiB lets four sessions of a few MB each be in flight: a first push of 524 MB (128 sessions of
 * about 4 MB) took 5.5 s at 8 MiB, 5.1 s at 24 and 48 MiB, for some 20 MB more peak RSS.
 */
const IN_FLIGHT = 4;
const IN_FLIGHT_CHARS = 24 << 20;

/**
 * Landed bytes of one session read and sent at a time (a segment per runtime each). A 700 MB
 * session sent whole in one segment took 23.7 s and 1.65 GB RSS (its lines, DuckDB's row group);
 * in batches of 8, 16, 32 and 64 MiB: 21.5, 16.4, 19.9 and 20.1 s, and 0.80, 0.82–0.88, 1.08
 * and 1.29 GB while the directory's usage records (227,000) were kept to be counted at the end;
 * folded batch by batch into the carry state (Owed), at 16 MiB: 9.8 s and 545 MiB (10.5 s and
 * 894 MiB before, medians of five paired runs).
 */
const BATCH_BYTES = 16 << 20;

/** A session as read before it is sent: its watermark, landed files, those not sent yet and their rows; or why it cannot be read. */
type Sent = { watermark: number | undefined; stamp: string | undefined; files: LandedFileRef[]; fresh: LandedFileRef[]; read: PushRows | undefined };
type Prepared = Sent | { problem: string };

/** Segments a push writes at once (DuckDB connections, each COPY on a thread of its own). */
const SEGMENTS_AT_ONCE = 2;

/** Seals (their `_SEALED` objects) a push writes at once when a save lets many go. */
const SEALS_AT_ONCE = 8;

/** How often a push saves push.state while it sends (ms); always at the end. */
const SAVE_EVERY_MS = 1000;

/**
 * Record that every landed file of the index read at `watermark` is in `ss.files` (true when that
 * changed what push.state holds). Only then: a file of the index not sent leaves the watermark as it was.
 */
function recordWatermark(ss: SessionPushState, watermark: number | undefined, stamp: string | undefined, files: readonly LandedFileRef[]): boolean {
  if (watermark === undefined || files.some((f) => ss.files[f.rel] === undefined)) return false;
  const newest = files.length > 0 ? Math.max(...files.map((f) => f.collectedAtMs)) : undefined;
  if (ss.indexed_seq === watermark && ss.newest_ms === newest && ss.index_stamp === stamp) return false;
  ss.indexed_seq = watermark;
  if (stamp === undefined) delete ss.index_stamp;
  else ss.index_stamp = stamp;
  if (newest === undefined) delete ss.newest_ms;
  else ss.newest_ms = newest;
  return true;
}

/** The usage records of `lines` (what usageRecordsOfRows makes of the rows they are), in order. */
function usageOf(lines: readonly PushLine[]): UsageRecord[] {
  const out: UsageRecord[] = [];
  for (const l of lines) if (l.usage !== undefined) out.push(l.usage);
  return out;
}

/**
 * What a push owes one runtime directory's usage rollup: the segments it wrote there since the
 * directory's last rollup (`since`..`seg`) and their usage records — folded, batch by batch, into
 * the carry state of every record of the directory (`state`: started from carry `since - 1`, or
 * empty at segment 0) while they cannot meet the earlier ones in countUsage (growUsageCarry), so
 * a long session's first push holds its records as the carry's bytes, not as objects. When they
 * can (a running total, a record id seen before) or there is no carry to start from, `records`
 * instead: every record of the directory (`whole`), or this push's alone, counted with the earlier
 * ones when the rollup is written (putSegmentRollup).
 */
interface Owed {
  readonly p: SessionPartition;
  seg: number;
  readonly since: number;
  state: UsageCarryState | undefined;
  /** Folded with the next segment's (the last records, which the next ones may continue: heldBack). */
  held: UsageRecord[];
  records: UsageRecord[];
  whole: boolean;
  /** The carry's records did not decode (a damaged carry), or a segment found in the store did not read: segments `since`.. are read back from the store. */
  stored: boolean;
  /**
   * The directory is sealed right after this push, so its carry is never written: its records are
   * folded into the rollup and their identity hashes alone (continueUsageRollup), not added to the
   * carry's document as well. `stale`: some were, so the document no longer holds every record.
   */
  readonly lean: boolean;
  stale: boolean;
}

/**
 * Where the records a next segment may continue start: the run at the end of `records` from the
 * first of those with the last record's usage key (the copies of one message's usage, one per
 * line, which a batch boundary can split). Folded without them, the next segment's copies would
 * meet them and send the directory to counting everything.
 */
function heldBack(records: readonly UsageRecord[]): number {
  const key = records.at(-1)?.usage_key;
  if (key === undefined) return records.length;
  let i = records.length;
  while (i > 0 && records[i - 1]!.usage_key === key) i--;
  return i;
}

/** A directory's debt from its first segment this push wrote (`seg`): from carry `seg - 1`'s state, when it reads. */
function startOwed(root: string, store: ObjectStore, p: SessionPartition, seg: number, ev: typeof import("@lake/events/usage"), lean: boolean): Owed {
  const state = seg === 0 ? ev.usageCarryState([]) : readCarry(carryFiles(root, store, p).at(seg - 1), ev)?.state;
  return { p, seg, since: seg, state, held: [], records: [], whole: false, stored: false, lean, stale: false };
}

/** Add the usage records of a segment written to the directory. */
function addOwed(o: Owed, records: readonly UsageRecord[], ev: typeof import("@lake/events/usage"), last = false): void {
  if (o.stored) return;
  if (o.state === undefined) {
    for (const r of records) o.records.push(r);
    return;
  }
  const all = o.held.length > 0 ? o.held.concat(records) : records;
  const cut = last ? all.length : heldBack(all);
  const fold = cut === all.length ? all : all.slice(0, cut);
  o.held = all.slice(cut);
  if (o.lean) {
    // growUsageCarry but the document (the same rollup and hashes): what a carry that is never written needs.
    const c = ev.continueUsageRollup(o.state.rollup, o.state.ids, fold);
    if (c !== undefined) {
      o.state = { ...o.state, rollup: c.rollup, ids: c.ids };
      if (fold.length > 0) o.stale = true;
      return;
    }
    // They meet earlier records, some of which the document does not hold: this push's segments
    // are counted as the store holds them (one download each, and only then).
    if (o.stale) {
      fromStore(o);
      return;
    }
  } else {
    const grown = ev.growUsageCarry(o.state, fold);
    if (grown !== undefined) {
      o.state = grown;
      return;
    }
  }
  // They meet earlier records: from here every record is kept and counted once, at the end —
  // unless the carry's do not decode: then the store's copies of this push's segments are counted.
  let before: UsageRecord[];
  try {
    before = ev.usageCarryRecords(o.state, segmentKey(o.p, o.since));
  } catch {
    fromStore(o);
    return;
  }
  o.records = before.concat(fold, o.held);
  o.held = [];
  o.whole = true;
  o.state = undefined;
}

/** The directory's rollup is counted from the store's segments `since`.. when it is written (nothing kept meanwhile). */
function fromStore(o: Owed): void {
  o.stored = true;
  o.state = undefined;
  o.records = [];
  o.held = [];
}

/** What putSegmentRollup counts for the directory: the folded state (its held records added), or the records. */
function owedCount(o: Owed, ev: typeof import("@lake/events/usage")): Counted {
  if (o.state !== undefined && o.held.length > 0) addOwed(o, [], ev, true);
  if (o.stored) return { since: o.since, stored: true };
  if (o.state !== undefined) return { since: o.since, state: o.state };
  return o.whole ? { since: o.since, state: ev.usageCarryState(o.records) } : { since: o.since, records: o.records };
}

/**
 * What a rollup counts past carry `since - 1`: the usage records of segments `since`.. (this push's,
 * or those segments as the store holds them: `stored`), or the carry state of every record of the
 * directory up to the rollup's segment.
 */
type Counted = { readonly since: number; readonly records: UsageRecord[] } | { readonly since: number; readonly state: UsageCarryState } | { readonly since: number; readonly stored: true };

/** Whether any runtime directory of the session's current part has `_SEALED` in the store. */
async function sealedInStore(store: ObjectStore, sessionId: string, st: SessionPushState, fleetId: string, agent: string): Promise<boolean> {
  for (const runtime of Object.keys(st.next_seg)) {
    const key = sealedKey({ dt: st.dt, fleet: fleetId, runtime, agent, session: sessionLabel(sessionId, st.part) });
    if ((await store.head(key)) !== undefined) return true;
  }
  return false;
}

/**
 * Upload the usage rollup of segments 0..seq of a directory, keys first, and keep its carry in
 * `_export/usage/` of the local root for the next one (@lake/events' carry with its state: the
 * rollup, its records' identity hashes, and the records themselves). Rollup `seq` continues from
 * carry `since - 1` with the records of segments `since..seq` — `counted.records`, the usage
 * records of the segments this push wrote or found there, or those segments downloaded
 * (`counted.stored`); or it is `counted.state`, folded as the push went (Owed). When those records cannot meet the earlier ones in countUsage (new
 * record ids and usage keys, no running total: continueUsageRollup), the carry's rows are neither
 * decoded nor counted again — only added to — so a push of a long session costs what it adds, not
 * the session's history; otherwise every record is counted. Without that carry (a push stopped
 * before it, a root that lost it, a damaged one) the earlier segments are downloaded once; one that
 * cannot be fetched or does not check (its footer's content hash) leaves the directory without
 * this rollup: the reader reads its rows, as for a directory pushed before rollups. `keepCarry`
 * false: the directory is sealed right after (its carry would only be removed).
 */
async function putSegmentRollup(
  store: ObjectStore,
  root: string,
  p: SessionPartition,
  seq: number,
  counted: Counted,
  tmp: string,
  keepCarry = true,
): Promise<void> {
  const since = counted.since;
  const carries = carryFiles(root, store, p);
  const { readUsageRecords, usageRollupBodies, checkContentHash, isSegmentError } = await import("@lake/segments");
  const ev = await import("@lake/events/usage");
  // Downloads go to a directory of their own, made only when one is needed.
  const dir = join(tmp, `rollup-${randomBytes(4).toString("hex")}`);
  let made = false;
  try {
    const download = async (i: number): Promise<string | undefined> => {
      if (!made) {
        mkdirSync(dir);
        made = true;
      }
      const local = join(dir, `seg-${String(i).padStart(6, "0")}.parquet`);
      try {
        await store.download(segmentKey(p, i), local);
      } catch {
        return undefined;
      }
      return checkContentHash(local).status === "ok" ? local : undefined;
    };
    const read = async (files: string[]) => {
      try {
        return await readUsageRecords(files.map((f) => ({ path: f, layout: "bronze" as const, runtime: p.runtime })), { label: segmentKey(p, seq) });
      } catch (e) {
        if (isSegmentError(e)) return undefined;
        throw e;
      }
    };
    // Folded already (every record of the directory), or this push's records (or none) to count with the earlier ones.
    const folded = "state" in counted ? counted.state : undefined;
    const added = "records" in counted ? counted.records : undefined;
    const prev = folded !== undefined ? undefined : since === 0 ? { state: ev.usageCarryState([]), records: () => [] } : readCarry(carries.at(since - 1), ev);
    let next = folded;
    if (next === undefined) {
      // The records past the carry: this push's, or segments `since`..`seq` as the store holds them.
      let now = added;
      if (now === undefined) {
        const files: string[] = [];
        for (let i = since; i <= seq; i++) {
          const f = await download(i);
          if (f === undefined) return;
          files.push(f);
        }
        now = await read(files);
        if (now === undefined) return;
      }
      if (prev?.state !== undefined) next = ev.growUsageCarry(prev.state, now);
      if (next === undefined) {
        let before = prev?.records();
        if (before === undefined) {
          // Named as their keys sort (readUsageRecords reads files in path order: the directory's order).
          const files: string[] = [];
          for (let i = 0; i < since; i++) {
            const f = await download(i);
            if (f === undefined) return;
            files.push(f);
          }
          before = await read(files);
          if (before === undefined) return;
        }
        next = ev.usageCarryState(before.concat(now));
      }
    }
    const w = usageRollupBodies(next.rollup);
    for (const [file, f] of [["keys", w.keys], ["json", w.json]] as const) {
      const key = segmentUsageKey(p, seq, file, f.sha256);
      const r = await store.upload(key, f.body, { ifAbsent: true });
      step("push:rollup");
      if (r.status === "unknown") throw new CollectorError("Store", `${store.url}/${key}: upload outcome unknown; run push again`);
    }
    // A cache, not a record: a torn or lost carry (no fsync) is refused by its decoder and costs
    // one download of the directory, never a wrong sum.
    if (keepCarry) {
      mkdirSync(carries.dir, { recursive: true });
      writeAtomic(carries.at(seq), ev.encodeUsageCarryState(next), { sync: false, mode: 0o644 });
    }
    if (since > 0) rmSync(carries.at(since - 1), { force: true });
  } finally {
    if (made) rmSync(dir, { recursive: true, force: true });
  }
}

/** Segments up to this size are uploaded from memory (one read, no stream); larger ones from their file. */
const UPLOAD_FROM_MEMORY_BYTES = 8 << 20;

/** What a written segment is uploaded from: its bytes when small (read once, at once), else its path. */
function segmentSource(path: string, bytes: number): Parameters<ObjectStore["upload"]>[1] {
  return bytes <= UPLOAD_FROM_MEMORY_BYTES ? readFileSync(path) : { path };
}

/**
 * Where push keeps the carries of one store directory (`_export/usage/<session>-<hash>-<seq>.carry`,
 * {@link carryName}): named for the session, so forgetting it finds them without reading them.
 */
function carryFiles(root: string, store: ObjectStore, p: SessionPartition): { dir: string; at: (seq: number) => string } {
  const dir = join(root, CARRY_DIR);
  const hash = createHash("sha256").update(`${store.url}\0${segmentKey(p, 0)}`).digest("hex").slice(0, 32);
  return { dir, at: (seq) => join(dir, carryName(p.session, hash, seq)) };
}

/**
 * A carry as read: its state (a carry this push writes), and its records, decoded when asked for —
 * from the state's records line, or from a carry without a state line (an older push's). Undefined
 * when there is none or it does not read (torn or damaged: counted from the store instead).
 */
function readCarry(file: string, ev: typeof import("@lake/events/usage")): { state: UsageCarryState | undefined; records: () => UsageRecord[] | undefined } | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  try {
    const state = ev.decodeUsageCarryState(bytes, file);
    return {
      state,
      records: () => {
        try {
          return ev.usageCarryRecords(state, file);
        } catch {
          return undefined;
        }
      },
    };
  } catch {
    // An older push's carry (its records alone): usable when it decodes.
    try {
      const records = ev.decodeUsageCarry(bytes.toString("utf8"), file);
      return { state: undefined, records: () => records };
    } catch {
      return undefined;
    }
  }
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

/**
 * A segment found already in the store, downloaded: the landed files it holds rows of, its row
 * count, and its usage records (undefined when it does not check or read: its directory's rollup
 * is then left to what the store gives when it is written).
 */
async function storedSegment(store: ObjectStore, key: string, tmp: string, runtime: string): Promise<{ seqs: Set<number>; rows: number; usage: UsageRecord[] | undefined }> {
  const path = join(tmp, `existing-${randomBytes(4).toString("hex")}.parquet`);
  await store.download(key, path);
  try {
    const { readLandedSeqs, readUsageRecords, checkContentHash, isSegmentError } = await import("@lake/segments");
    const { seqs, rows } = await readLandedSeqs(path);
    let usage: UsageRecord[] | undefined;
    if (checkContentHash(path).status === "ok") {
      try {
        usage = await readUsageRecords([{ path, layout: "bronze", runtime }], { label: key });
      } catch (e) {
        if (!isSegmentError(e)) throw e;
      }
    }
    return { seqs: new Set(seqs), rows, usage };
  } finally {
    rmSync(path, { force: true });
  }
}

function sessionDay(lines: readonly PushLine[], now: () => number): string {
  let min: string | undefined;
  for (const l of lines) if (l.ts && (min === undefined || l.ts < min)) min = l.ts;
  const t = min ? Date.parse(min) : NaN;
  return utcDate(Number.isNaN(t) ? now() : t);
}

function sealDue(local: LocalRoot, sessionId: string, files: readonly LandedFileRef[], idleSeconds: number, now: () => number): boolean {
  if (files.length === 0) return false;
  // Idle first: a stat-free answer for most sessions; the cursors are read only when it is not.
  const newest = Math.max(...files.map((f) => f.collectedAtMs));
  return now() - newest >= idleSeconds * 1000 || local.allSourcesGone(sessionId);
}


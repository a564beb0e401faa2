import { createHash } from "node:crypto";
// `verify`: every key where the layout says, segments readable, markers consistent. One problem per line.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { buildUsageRollup, decodeUsageRollup, encodeUsageRollup, isEventsError } from "@lake/events";
import { checkContentHash, checkFileSha256, readUsageRecords, sha256File, sqlString } from "@lake/segments";
import {
  PREFIXES,
  SNAPSHOT_LATEST_KEY,
  decodeClaimEvent,
  decodeDigest,
  decodeFleetClaim,
  decodeIntentRecord,
  decodeLease,
  decodeQuarantine,
  decodeRosterEntry,
  decodeSealed,
  decodeSnapshotPointer,
  isLayoutError,
  parseKey,
  readFleet,
  snapshotBlobKey,
  type ObjectStore,
  type ParsedKey,
} from "@lake/layout";
import { scratch } from "./context.js";
import { generationOf, readMarker } from "./compact.js";
import { sessionId } from "./scan.js";
import type { SessionPartition } from "@lake/layout";

/** One problem verify found. */
export interface Problem {
  readonly key: string;
  readonly problem: string;
}

/** What verify checked. */
export interface VerifyReport {
  readonly keys: number;
  readonly sessions: number;
  readonly segments: number;
  /** Segments of sealed sessions numbered past their `_SEALED` count (accepted; compact includes them). */
  readonly late_segments: number;
  readonly compacted_partitions: number;
  readonly problems: Problem[];
}

/** `verify`: read-only; lists problems (empty = consistent). */
export async function runVerify(store: ObjectStore): Promise<VerifyReport> {
  const problems: Problem[] = [];
  const add = (key: string, problem: string) => problems.push({ key, problem });
  let fleetId: string | undefined;
  try {
    const f = await readFleet(store);
    if (f === undefined) add("fleet.json", "missing");
    else fleetId = f.fleet_id;
  } catch (e) {
    add("fleet.json", e instanceof Error ? e.message : String(e));
  }
  const sessions = new Map<string, { part: SessionPartition; segs: { key: string; seq: number }[]; sealed?: string; digest?: string }>();
  const markers: { dt: string; fleet: string; key: string }[] = [];
  const partKeys = new Set<string>();
  const usageKeys = new Set<string>();
  const blobs: string[] = [];
  let latest = false;
  let keys = 0;
  const small: { key: string; k: ParsedKey }[] = [];
  for await (const o of store.listAll("")) {
    keys++;
    const k = parseKey(o.key);
    if (k === undefined) {
      add(o.key, "not a key of the fleet layout");
      continue;
    }
    if ("fleet" in k && fleetId !== undefined && k.fleet !== fleetId) add(o.key, `fleet=${k.fleet} is not this store's fleet ${fleetId}`);
    switch (k.kind) {
      case "segment":
      case "sealed":
      case "digest": {
        const id = sessionId(k);
        let s = sessions.get(id);
        if (!s) sessions.set(id, (s = { part: k, segs: [] }));
        if (k.kind === "segment") s.segs.push({ key: o.key, seq: k.seq });
        else if (k.kind === "sealed") s.sealed = o.key;
        else s.digest = o.key;
        break;
      }
      case "compacted-marker":
        markers.push({ dt: k.dt, fleet: k.fleet, key: o.key });
        break;
      case "compacted-part":
        partKeys.add(o.key);
        break;
      case "compacted-usage":
        usageKeys.add(o.key);
        break;
      case "snapshot-blob":
        blobs.push(o.key);
        break;
      case "snapshot-latest":
        latest = true;
        break;
      case "fleet":
        break;
      default:
        small.push({ key: o.key, k });
    }
  }
  // Control objects, claims and quarantine: JSON of the right shape.
  // Each through its @lake/layout decoder: a problem is the decoder's reason.
  const check = (key: string, fn: () => unknown, label = ""): boolean => {
    try {
      fn();
      return true;
    } catch (e) {
      if (!isLayoutError(e, "Corrupt")) throw e;
      add(key, label + (e.data.detail ?? e.message));
      return false;
    }
  };
  for (const { key, k } of small) {
    const got = await store.get(key);
    if (!got) continue;
    const b = got.body;
    if (k.kind === "lease") check(key, () => decodeLease(key, b));
    else if (k.kind === "agent") check(key, () => decodeRosterEntry(key, b, k.agent));
    else if (k.kind === "intent") check(key, () => decodeIntentRecord(key, b, k.agent));
    else if (k.kind === "claim-event") check(key, () => decodeClaimEvent(key, b, k.agent), "invalid claim: ");
    else if (k.kind === "fleet-claim") check(key, () => decodeFleetClaim(key, b, k.claimId), "invalid promoted claim: ");
    else if (k.kind === "quarantine") check(key, () => decodeQuarantine(key, b));
    else if (k.kind === "segment-usage" && createHash("sha256").update(b).digest("hex") !== k.sha256) add(key, "damaged: its bytes do not hash to the SHA-256 its name records");
  }
  const tmp = scratch("verify");
  const db = await DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  /**
   * Download `key` (to `path`, where it stays), check its content hash (the footer's, and the plain
   * SHA-256 a marker records when given) and count its rows; undefined when damaged or unreadable.
   */
  const countRows = async (key: string, path = join(tmp.dir, `f${Math.random().toString(36).slice(2)}.parquet`), sha256?: string): Promise<number | undefined> => {
    try {
      await store.download(key, path);
    } catch (e) {
      add(key, `cannot read: ${(e instanceof Error ? e.message : String(e)).split("\n")[0]}`);
      return undefined;
    }
    const c = checkContentHash(path);
    if (c.status === "damaged") {
      add(key, `damaged: ${c.reason}`);
      return undefined;
    }
    if (sha256 !== undefined) {
      const f = checkFileSha256(path, sha256);
      if (f.status === "damaged") {
        add(key, `damaged: ${f.reason.replace("expected", "_COMPACTED says")}`);
        return undefined;
      }
    }
    try {
      const r = await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n, count(DISTINCT content_hash)::BIGINT AS h FROM read_parquet(${sqlString(path)}, hive_partitioning = false)`);
      return Number(r.getRowObjectsJS()[0]!.n);
    } catch (e) {
      add(key, `unreadable Parquet: ${(e instanceof Error ? e.message : String(e)).split("\n")[0]}`);
      return undefined;
    }
  };
  // A generation's usage rollup: present, the bytes the marker names, and exactly what counting
  // its parts gives now.
  // `parts`: the generation's parts as downloaded for their row counts, named in key order.
  const verifyUsage = async (markerKey: string, gen: string, usage: { key: string; sha256: string; rows: number; keys?: { key: string; sha256: string } }, parts: readonly string[] | undefined): Promise<void> => {
    const objects = [usage, ...(usage.keys ? [usage.keys] : [])];
    if (!usage.keys) add(markerKey, "usage names no usage.keys object");
    const texts: Buffer[] = [];
    for (const o of objects) {
      if (!usageKeys.has(o.key)) {
        add(markerKey, `names usage rollup object ${o.key}, which does not exist`);
        return;
      }
      if (!o.key.includes(`/gen=${gen}/`)) add(markerKey, `usage rollup object ${o.key} is outside gen=${gen}`);
      const path = join(tmp.dir, `usage-${texts.length}`);
      try {
        await store.download(o.key, path);
      } catch (e) {
        add(o.key, `cannot read: ${e instanceof Error ? e.message : String(e)}`);
        return;
      }
      const h = await sha256File(path);
      if (h !== o.sha256) {
        add(o.key, `content hashes to ${h}, _COMPACTED says ${o.sha256}`);
        return;
      }
      texts.push(readFileSync(path));
    }
    if (texts.length !== 2) return;
    const [json, keys] = [texts[0]!.toString("utf8"), texts[1]!];
    let rollup;
    try {
      rollup = decodeUsageRollup(json, keys, usage.key);
    } catch (e) {
      // A rollup of an older maint is not damage: readers recount its partition from the parts.
      if (isEventsError(e) && e.code === "OlderRollup") return;
      add(usage.key, e instanceof Error ? e.message : String(e));
      return;
    }
    if (rollup.rows.length !== usage.rows) add(usage.key, `holds ${rollup.rows.length} rows, _COMPACTED says ${usage.rows}`);
    if (parts === undefined) return; // a part is missing or unreadable: reported already
    const local = parts.map((path) => ({ path, layout: "compacted" as const }));
    try {
      const again = encodeUsageRollup(buildUsageRollup(await readUsageRecords(local, { label: markerKey })));
      if (again.json !== json || !again.keys.equals(keys)) add(usage.key, "differs from the usage counted from the generation's parts");
    } catch (e) {
      add(usage.key, `cannot recount: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  let segments = 0;
  let late = 0;
  try {
    for (const s of sessions.values()) {
      s.segs.sort((a, b) => a.seq - b.seq);
      s.segs.forEach((x, i) => {
        if (x.seq !== i) add(x.key, `segment numbering has a gap before seq ${x.seq}`);
      });
      const segRows = new Map<number, number | undefined>();
      for (const x of s.segs) {
        segments++;
        segRows.set(x.seq, await countRows(x.key)); // undefined: damaged, named already
      }
      if (s.digest !== undefined && s.sealed === undefined) add(s.digest, "digest.json in a session without _SEALED");
      if (s.sealed !== undefined) {
        const key = s.sealed;
        const got = await store.get(key);
        let m;
        if (!got) add(key, "vanished");
        else if (check(key, () => (m = decodeSealed(key, got.body))) && m !== undefined) {
          // Segments numbered from the marker's count on are late (a push raced the seal, or a
          // collector that does not check for _SEALED): part of the session, not a problem.
          const sm = m as { segments: number; rows: number };
          const counted = s.segs.filter((x) => x.seq < sm.segments);
          const rows = counted.reduce<number | undefined>((n, x) => (n === undefined || segRows.get(x.seq) === undefined ? undefined : n + segRows.get(x.seq)!), 0);
          late += s.segs.length - counted.length;
          if (counted.length < sm.segments) add(key, `says ${sm.segments} segments, found ${counted.length}`);
          else if (rows !== undefined && sm.rows !== rows) add(key, `says ${sm.rows} rows, segments hold ${rows}`);
        }
      }
      if (s.digest !== undefined) {
        const key = s.digest;
        const got = await store.get(key);
        if (!got) add(key, "vanished");
        else check(key, () => decodeDigest(key, got.body, s.part));
      }
    }
    for (const m of markers) {
      let marker;
      try {
        marker = (await readMarker(store, m.dt, m.fleet))?.value;
      } catch (e) {
        add(m.key, e instanceof Error ? e.message : String(e));
        continue;
      }
      if (!marker) continue;
      if (generationOf(m.dt, m.fleet, marker.sessions, marker.format) !== marker.gen) add(m.key, `gen ${marker.gen} is not the hash of its sessions`);
      for (const ses of marker.sessions) {
        const id = sessionId({ dt: m.dt, fleet: m.fleet, runtime: ses.runtime, agent: ses.agent, session: ses.session });
        if (sessions.get(id)?.sealed === undefined) add(m.key, `names session ${id}, which is not sealed in bronze`);
      }
      let rows = 0;
      let local: string[] | undefined = [];
      for (const [i, p] of [...marker.parts].sort((a, b) => (a.key < b.key ? -1 : 1)).entries()) {
        if (!partKeys.has(p.key)) {
          add(m.key, `names part ${p.key}, which does not exist`);
          local = undefined;
          continue;
        }
        if (!p.key.includes(`/gen=${marker.gen}/`)) add(m.key, `part ${p.key} is outside gen=${marker.gen}`);
        const path = join(tmp.dir, `${m.dt}-${m.fleet}-part-${String(i).padStart(6, "0")}.parquet`);
        const n = await countRows(p.key, path, p.sha256);
        if (n === undefined) local = undefined;
        else local?.push(path);
        if (n !== undefined && n !== p.rows) add(p.key, `holds ${n} rows, _COMPACTED says ${p.rows}`);
        rows += p.rows;
      }
      if (rows !== marker.rows) add(m.key, `parts hold ${rows} rows, marker says ${marker.rows}`);
      // The rollup is recounted from the parts just downloaded, not downloaded again.
      if (marker.usage !== undefined) await verifyUsage(m.key, marker.gen, marker.usage, local);
      else if (marker.format >= 2) add(m.key, `format ${marker.format} names no usage rollup`);
    }
    const latestKey = SNAPSHOT_LATEST_KEY;
    if (latest) {
      const got = await store.get(latestKey);
      let ptr: { content_hash: string } | undefined;
      if (!got) add(latestKey, "vanished");
      else if (check(latestKey, () => (ptr = decodeSnapshotPointer(latestKey, got.body))) && ptr !== undefined && !blobs.includes(snapshotBlobKey(ptr.content_hash))) {
        add(latestKey, `names ${snapshotBlobKey(ptr.content_hash)}, which does not exist`);
      }
    }
    for (const b of blobs) {
      const path = join(tmp.dir, "blob.sqlite");
      await store.download(b, path);
      const h = await sha256File(path);
      if (b !== `${PREFIXES.snapshot}${h}.sqlite`) add(b, `content hashes to ${h}`);
    }
  } finally {
    conn.closeSync();
    db.closeSync();
    tmp.done();
  }
  return { keys, sessions: sessions.size, segments, late_segments: late, compacted_partitions: markers.length, problems };
}

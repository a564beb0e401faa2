import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { getAdapter } from "@lake/adapters";
import { parse as parseChain } from "@lake/chain";
import { openStore, parseKey, readFleet } from "@lake/layout";
import { restoreSession, type RestoredFile } from "@lake/store";
import type { FleetRow } from "@lake/segments";
import { CollectorError } from "../errors.js";
import { writePushState, type PushState, type SessionPushState } from "../push.js";
import { defineCommand, jsonLine, text, type RunContext } from "@lake/cli";
import { resolveStore, storeOption } from "@lake/cli/store";
import { ROOT, JSON_FLAG, resolveAgent } from "../options.js";

const DESCRIPTION = `Reads every bronze segment the agent pushed (sessions/…/agent=ID/…), and writes each landed file
again under its own sequence number into EMPTY_DIR (which must be absent or empty: recovery never
writes into a root that holds anything), then each session's index and its round chain (rebuilt by
parse). push.state in the new root lists every restored file as sent to the store, so a push from
it sends only what is collected later. Cursors do not travel: a collect from the new root reads
its sources from byte 0, and re-landed records are marked duplicates (not sent again). A restored
file's end_offset is the offset of its last record's line (the line's length did not travel).

Exit codes: 0 done · 2 usage, or EMPTY_DIR not empty · 5 store error.`;

interface FileAcc {
  runtime: string;
  stream: string;
  source: string;
  adapter: string;
  adapterVersion: string;
  rows: Map<number, FleetRow>;
}

async function describe(runtime: string, rel: string): Promise<{ kind: string; cursor: "append" | "snapshot" }> {
  if (runtime === "hook") return { kind: "hooks", cursor: "append" };
  try {
    const d = await getAdapter(runtime).describe(join("/", rel), "/");
    return { kind: d.kind, cursor: d.mode };
  } catch {
    return { kind: "transcript", cursor: "append" };
  }
}

const OPTIONS = { into: text("EMPTY_DIR", "the new root (absent or empty)", { required: true }), store: storeOption(), agent: text("ID", "whose records (default $LAKE_AGENT, else the host name)"), root: ROOT, json: JSON_FLAG } as const;

async function run({ values, io }: RunContext<typeof OPTIONS>): Promise<number> {
  const dest = resolve(values.into);
  if (existsSync(dest) && readdirSync(dest).length > 0) throw new CollectorError("Usage", `${dest}: recovery target is not empty; recovery writes only into an empty directory`);
  const agent = resolveAgent(values.agent);
  const store = openStore(resolveStore(values.store, io.env));
  const tmp = join(tmpdir(), `lake-recover-${process.pid}-${randomBytes(4).toString("hex")}`);
  mkdirSync(tmp, { recursive: true });
  try {
    const fleet = await readFleet(store);
    if (!fleet) throw new CollectorError("Store", `${store.url}: no fleet.json; nothing to recover`);
    const { readSegment } = await import("@lake/segments");
    const sessions = new Map<string, Map<number, FileAcc>>();
    const parts = new Map<string, { part: number; dt: string; nextSeg: Record<string, number>; segments: Record<string, number>; rows: Record<string, number>; sealed: boolean }>();
    const sealedKeys = new Set<string>();
    let segments = 0;
    let skipped = 0;
    const keys: string[] = [];
    for await (const o of store.listAll("sessions/")) keys.push(o.key);
    for (const key of keys.sort()) {
      const k = parseKey(key);
      if (!k || (k.kind !== "segment" && k.kind !== "sealed") || k.agent !== agent || k.fleet !== fleet.fleet_id) continue;
      if (k.kind === "sealed") sealedKeys.add(`${k.session}\0${k.runtime}`);
      if (k.kind !== "segment") continue;
      const path = join(tmp, `seg-${segments++}.parquet`);
      await store.download(key, path);
      const rows = await readSegment(path, "bronze", { runtime: k.runtime, agent });
      rmSync(path, { force: true });
      const dot = /^(.*)\.(\d+)$/.exec(k.session);
      const part = dot ? Number(dot[2]) : 1;
      for (const r of rows) {
        if (r.landed_seq === undefined || r.landed_row === undefined) {
          skipped++;
          continue;
        }
        let files = sessions.get(r.session_id);
        if (!files) sessions.set(r.session_id, (files = new Map()));
        let f = files.get(r.landed_seq);
        if (!f) files.set(r.landed_seq, (f = { runtime: r.runtime, stream: r.stream, source: `${r.runtime}:${r.source_path}`, adapter: r.adapter, adapterVersion: r.adapter_version, rows: new Map() }));
        if (!f.rows.has(r.landed_row)) f.rows.set(r.landed_row, r);
      }
      const sid = rows[0]?.session_id ?? (dot ? dot[1]! : k.session);
      const p = parts.get(sid);
      if (!p || part > p.part) parts.set(sid, { part, dt: k.dt, nextSeg: { [k.runtime]: k.seq + 1 }, segments: { [k.runtime]: 1 }, rows: { [k.runtime]: rows.length }, sealed: false });
      else if (part === p.part) {
        p.nextSeg[k.runtime] = Math.max(p.nextSeg[k.runtime] ?? 0, k.seq + 1);
        p.segments[k.runtime] = (p.segments[k.runtime] ?? 0) + 1;
        p.rows[k.runtime] = (p.rows[k.runtime] ?? 0) + rows.length;
      }
    }
    mkdirSync(dest, { recursive: true });
    const state: PushState = { schema: 1, receivers: { [store.url]: { fleet_id: fleet.fleet_id, sessions: {} } } };
    let files = 0;
    let records = 0;
    let rounds = 0;
    for (const [sid, byseq] of [...sessions].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const restored: RestoredFile[] = [];
      for (const [seq, f] of byseq) {
        const rows = [...f.rows.entries()].sort(([a], [b]) => a - b).map(([, r]) => r);
        const { kind, cursor } = await describe(f.runtime, f.source.slice(f.runtime.length + 1));
        const offsets = rows.map((r) => r.source_offset).filter((o): o is number => typeof o === "number");
        const lines = rows.map((r) => r.source_line).filter((o): o is number => typeof o === "number");
        restored.push({
          seq, stream: f.stream, kind, cursor, source: f.source, adapter: f.adapter, adapterVersion: f.adapterVersion,
          firstOffset: offsets.length ? Math.min(...offsets) : 0, endOffset: offsets.length ? Math.max(...offsets) : 0,
          firstLine: lines.length ? Math.min(...lines) : 1, lastLine: lines.length ? Math.max(...lines) : 0,
          records: rows.map(({ agent: _a, landed_seq: _s, landed_row: _r, ...rec }) => JSON.stringify(rec)),
        });
      }
      const r = restoreSession(dest, sid, restored);
      files += r.files;
      records += r.records;
      const p = parts.get(sid);
      const label = p && p.part > 1 ? `${sid}.${p.part}` : sid;
      const ss: SessionPushState = {
        part: p?.part ?? 1, dt: p?.dt ?? "", next_seg: p?.nextSeg ?? {}, segments: p?.segments ?? {}, rows: p?.rows ?? {},
        files: Object.fromEntries(r.landed.map((l) => [l.rel, l.sha256])),
        sealed: Object.keys(p?.nextSeg ?? {}).some((rt) => sealedKeys.has(`${label}\0${rt}`)),
      };
      state.receivers[store.url]!.sessions[sid] = ss;
      if ((await parseChain(dest, sid)).published) rounds++;
    }
    writePushState(dest, state);
    const summary = { into: dest, store: store.url, agent, fleet_id: fleet.fleet_id, segments, sessions: sessions.size, files, records, rounds, skipped_rows: skipped };
    io.out(
      values.json
        ? jsonLine(summary)
        : `${dest}: recovered ${sessions.size} sessions of agent ${agent} from ${store.url} (${segments} segments → ${files} landed files, ${records} records), ${rounds} chains rebuilt${skipped ? `, ${skipped} rows without a landed position skipped` : ""}\n`,
    );
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    store.close();
  }
}

/** `lake-collector recover`. */
export const command = defineCommand({
  summary: "rebuild a root from what the fleet store holds for this agent",
  description: DESCRIPTION,
  options: OPTIONS,
  run,
});

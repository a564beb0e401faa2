// Local metric derivation: each landed file of a session becomes one OTLP request of the points it
// adds to the session's counters, with a receipt published first (storage-root spec: metrics/).
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { countUsage, type UsageRecord } from "@lake/events/usage";
import { StoreError, errno } from "../errors.js";
import { landNoReplace, replaceAtomic, type StepHook } from "../fsx.js";
import { readIndex, readIndexState } from "../indexer.js";
import { readLandedPath } from "../landed.js";
import { acquireLock } from "../lock.js";
import { padSeq, parseLandedName } from "../names.js";
import { listSessions } from "../sessions.js";
import { encodeMetricsRequest, ExportMetricsServiceRequestSchema } from "../otlp/codec.js";
import { METRICS_DIR, localSpoolName, listSpool } from "./spool.js";
import { decodeMetricsState, decodeReceipt, encodeMetricsState, encodeReceipt, type DerivationReceipt, type SeriesTotal } from "./receipt.js";

/** The derived metrics: name, unit, and whether its values are integers. */
export const DERIVED_METRICS = {
  /** Tokens in broca's meaning, by `gen_ai.token.type` and `gen_ai.response.model`. */
  tokens: { name: "lake.usage.tokens", unit: "{token}", int: true },
  /** The cost the runtime itself recorded (USD), by `gen_ai.response.model`; a calculated price is the reader's. */
  cost: { name: "lake.usage.cost", unit: "USD", int: false },
  /** Billed responses counted, by `gen_ai.response.model`. */
  responses: { name: "lake.usage.responses", unit: "{response}", int: true },
  /** 1 for the session, counted with its first landed file. */
  sessions: { name: "lake.session.count", unit: "{session}", int: true },
  /** Tool calls, by `gen_ai.tool.name`. */
  toolCalls: { name: "lake.tool.calls", unit: "{call}", int: true },
  /** Tool results that report an error. */
  toolFailures: { name: "lake.tool.failures", unit: "{call}", int: true },
} as const;

/** `gen_ai.token.type` of each usage key (broca's meaning: `input` is fresh input, without cache reads). */
const TOKEN_TYPES = [
  ["input_tokens", "input"],
  ["cached_input_tokens", "cached_input"],
  ["cache_write_tokens", "cache_write"],
  ["cache_write_1h_tokens", "cache_write_1h"],
  ["output_tokens", "output"],
  ["reasoning_tokens", "reasoning"],
] as const;

const SCOPE = "@lake/store/metrics";

/** Options of {@link deriveMetrics}. */
export interface DeriveOptions {
  /** Called before every durable step (crash tests). */
  readonly onStep?: StepHook;
  /** Only these sessions (default: every session of the root). */
  readonly sessions?: readonly string[];
  /** How long to wait for `_metrics/.lock` (default 10 s). */
  readonly waitMs?: number;
}

/** What one derivation run did. */
export interface DeriveSummary {
  /** Landed files derived now (receipt and spool file written, or a spool file completed from its receipt). */
  readonly derived: number;
  /** Sessions looked at. */
  readonly sessions: number;
  /** Sessions that could not be derived (one line each: the file and the reason); the others were. */
  readonly problems: readonly { readonly session: string; readonly reason: string }[];
}

const seriesKey = (metric: string, attributes: Readonly<Record<string, string>>) =>
  `${metric}\0${Object.keys(attributes).sort().map((k) => `${k}=${attributes[k]!}`).join("\0")}`;

/** The session's counters over a set of records (every file up to one), as series totals. */
function countSeries(records: readonly Rec[]): Map<string, SeriesTotal> {
  const out = new Map<string, SeriesTotal>();
  const add = (metric: string, attributes: Record<string, string>, v: number) => {
    const k = seriesKey(metric, attributes);
    const cur = out.get(k);
    out.set(k, { metric, attributes: sortKeys(attributes), value: (cur?.value ?? 0) + v });
  };
  if (records.length > 0) add(DERIVED_METRICS.sessions.name, {}, 1);
  for (const c of countUsage(records)) {
    const model = c.model ?? "unknown";
    for (const [key, type] of TOKEN_TYPES) {
      const v = c.usage[key];
      if (v !== undefined) add(DERIVED_METRICS.tokens.name, { "gen_ai.response.model": model, "gen_ai.token.type": type }, v);
    }
    add(DERIVED_METRICS.responses.name, { "gen_ai.response.model": model }, 1);
    if (c.cost_usd !== undefined) add(DERIVED_METRICS.cost.name, { "gen_ai.response.model": model }, c.cost_usd);
  }
  const seen = new Set<string>();
  for (const r of records) {
    if (r.replayed || (r.kind !== "tool_call" && r.kind !== "tool_result")) continue;
    const id = recordIdentity(r);
    if (seen.has(id)) continue;
    seen.add(id);
    if (r.kind === "tool_call") add(DERIVED_METRICS.toolCalls.name, { "gen_ai.tool.name": r.tool_name ?? "unknown" }, 1);
    else if (r.is_error) add(DERIVED_METRICS.toolFailures.name, {}, 1);
  }
  return out;
}

function sortKeys(a: Record<string, string>): Record<string, string> {
  const o: Record<string, string> = {};
  for (const k of Object.keys(a).sort()) o[k] = a[k]!;
  return o;
}

type Rec = UsageRecord & { readonly kind?: string; readonly tool_name?: string; readonly tool_call_id?: string; readonly is_error?: boolean };

const recordIdentity = (r: Rec) => (r.record_id !== undefined ? `i:${r.stream}:${r.record_id}` : `h:${r.content_hash}`);

/** `20260831T091204.481523000Z` → ns since the epoch. */
function stampNs(stamp: string): bigint {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\.(\d{9})Z$/.exec(stamp);
  if (!m) return 0n;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  return BigInt(ms) * 1_000_000n + BigInt(m[7]!);
}

const str = (key: string, value: string) => ({ key, value: { value: { case: "stringValue" as const, value } } });

/**
 * The request of one derived file: a delta sum per metric, one point per series that changed,
 * `session.id`, `lake.runtime` and `lake.landed.seq` on the resource.
 */
function buildRequest(session: string, runtime: string, seq: number, start: bigint, end: bigint, deltas: readonly SeriesTotal[]): Uint8Array {
  const byMetric = new Map<string, SeriesTotal[]>();
  for (const d of deltas) {
    let l = byMetric.get(d.metric);
    if (!l) byMetric.set(d.metric, (l = []));
    l.push(d);
  }
  const defs = Object.values(DERIVED_METRICS);
  const metrics = defs.filter((m) => byMetric.has(m.name)).map((m) => {
    const points = byMetric.get(m.name)!;
    return {
      name: m.name,
      unit: m.unit,
      data: {
        case: "sum" as const,
        value: {
          aggregationTemporality: 1, // delta: each file's points add to the ones before
          isMonotonic: points.every((p) => p.value >= 0),
          dataPoints: points.map((p) => ({
            attributes: Object.entries(p.attributes).map(([k, v]) => str(k, v)),
            startTimeUnixNano: start,
            timeUnixNano: end,
            value: m.int ? { case: "asInt" as const, value: BigInt(Math.round(p.value)) } : { case: "asDouble" as const, value: p.value },
          })),
        },
      },
    };
  });
  const req = create(ExportMetricsServiceRequestSchema, {
    resourceMetrics: metrics.length === 0 ? [] : [{
      resource: { attributes: [str("service.name", "lake"), str("session.id", session), str("lake.runtime", runtime), { key: "lake.landed.seq", value: { value: { case: "intValue", value: BigInt(seq) } } }] },
      scopeMetrics: [{ scope: { name: SCOPE }, metrics }],
    }],
  });
  return encodeMetricsRequest(req);
}

/** The receipt directory of a session. */
export function receiptDir(root: string, sessionId: string): string {
  return join(root, sessionId, "metrics");
}

/** The receipt file name of landed sequence `seq` (`000001.json`). */
export function receiptName(seq: number): string {
  return `${padSeq(seq)}.json`;
}

/** Read `_metrics/metrics.state` (empty when absent). */
export function readMetricsState(root: string): Map<string, number> {
  const file = join(root, METRICS_DIR, "metrics.state");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if (errno(e) === "ENOENT") return new Map();
    throw new StoreError("Io", `${file}: cannot read: ${(e as Error).message}`, { data: { file }, cause: e });
  }
  return new Map(decodeMetricsState(text, file).sessions);
}

/** The receipts of a session, by sequence (decoded; a damaged one throws `Corrupt` naming it). */
export function readReceipts(root: string, sessionId: string): Map<number, DerivationReceipt> {
  const dir = receiptDir(root, sessionId);
  const out = new Map<number, DerivationReceipt>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    if (errno(e) === "ENOENT") return out;
    throw new StoreError("Io", `${dir}: cannot list: ${(e as Error).message}`, { data: { file: dir }, cause: e });
  }
  for (const n of names) {
    if (!/^\d{6,}\.json$/.test(n)) continue;
    const file = join(dir, n);
    const r = decodeReceipt(readFileSync(file, "utf8"), file);
    if (r.seq !== Number(n.slice(0, -5)) || r.session !== sessionId) throw new StoreError("Corrupt", `${file}: receipt names session ${r.session} file ${r.seq}, not its own place`, { data: { file } });
    out.set(r.seq, r);
  }
  return out;
}

/**
 * Derive the metrics of every landed file not derived yet, session by session, under
 * `_metrics/.lock`. For a file: its points are the session's counters over every file up to it
 * minus the counters its previous file's receipt recorded; the receipt
 * (`<session>/metrics/<seq>.json`, read-only, never replaced) is published first, then the same
 * bytes land as `_metrics/metrics-<session>-<seq>-local.pb`; `metrics.state` records the session's
 * highest derived sequence last. A run after a crash at any step completes from the receipts, so no
 * landed file is counted twice or differently. A session whose files or receipts do not read is a
 * problem of its own; the others are derived.
 */
export async function deriveMetrics(root: string, options: DeriveOptions = {}): Promise<DeriveSummary> {
  const dir = join(root, METRICS_DIR);
  mkdirSync(dir, { recursive: true });
  const lock = await acquireLock(dir, { waitMs: options.waitMs ?? 10_000 });
  const step = options.onStep;
  let derived = 0;
  const problems: { session: string; reason: string }[] = [];
  const sessions = options.sessions ?? listSessions(root);
  try {
    const state = readMetricsState(root);
    const spooled = new Set(listSpool(root).filter((e) => e.parsed.kind === "local").map((e) => e.name));
    let changed = false;
    for (const sid of sessions) {
      try {
        const n = deriveSession(root, sid, state.get(sid) ?? 0, spooled, step);
        derived += n.derived;
        if (n.last !== undefined && n.last !== state.get(sid)) {
          state.set(sid, n.last);
          changed = true;
        }
      } catch (e) {
        problems.push({ session: sid, reason: e instanceof Error ? e.message : String(e) });
      }
    }
    if (changed) replaceAtomic(join(dir, "metrics.state"), dir, encodeMetricsState({ sessions: state }), step, "metrics-state");
  } finally {
    lock.release();
  }
  return { derived, sessions: sessions.length, problems };
}

function deriveSession(root: string, sid: string, known: number, spooled: Set<string>, step: StepHook | undefined): { derived: number; last: number | undefined } {
  // metrics.state reaches as far as index.state: nothing new (one small file read for the session).
  const reach = readIndexState(join(root, sid))?.indexed_seq;
  if (known > 0 && reach !== undefined && known >= reach && spooled.has(localSpoolName(sid, known))) return { derived: 0, last: known };
  const idx = readIndex(root, sid);
  const files = idx.files;
  const last = files.at(-1)?.seq;
  if (last === undefined) return { derived: 0, last: undefined };
  // metrics.state says the session is derived to its last file (and its spool file is there): nothing to read.
  if (known >= last && spooled.has(localSpoolName(sid, last))) return { derived: 0, last };
  const receipts = readReceipts(root, sid);
  const rdir = receiptDir(root, sid);
  let derived = 0;
  const records: Rec[] = [];
  let prev: DerivationReceipt | undefined;
  let prevStamp: bigint | undefined;
  let runtime = "";
  // With a file not derived yet every file is read (its counters are over every file up to it); otherwise none.
  const firstMissing = files.find((f) => !receipts.has(f.seq))?.seq ?? Infinity;
  for (const f of files) {
    const stamp = stampNs(parseLandedName(f.name)?.stamp ?? "");
    const spoolName = localSpoolName(sid, f.seq);
    let receipt = receipts.get(f.seq);
    if (receipt && receipt.sha256 !== f.sha256) {
      throw new StoreError("Corrupt", `${join(rdir, receiptName(f.seq))}: receipt is for SHA-256 ${receipt.sha256}, the landed file ${f.rel} has ${f.sha256}`, { data: { file: join(rdir, receiptName(f.seq)) } });
    }
    if (firstMissing !== Infinity) {
      const lf = readLandedPath(join(root, sid, f.rel));
      if (lf.sha256 !== f.sha256) throw new StoreError("Corrupt", `${join(root, sid, f.rel)}: SHA-256 ${lf.sha256} differs from the index's ${f.sha256} (damaged landed file)`, { data: { file: join(root, sid, f.rel) } });
      for (const text of lf.rows) {
        const r = JSON.parse(text) as Rec;
        records.push(r);
        if (!runtime && r.runtime) runtime = r.runtime;
      }
    }
    if (!receipt) {
      const totals = countSeries(records);
      const before = new Map((prev?.totals ?? []).map((t) => [seriesKey(t.metric, t.attributes), t]));
      const deltas: SeriesTotal[] = [];
      const counted: string[] = [];
      for (const [k, t] of totals) {
        const d = t.value - (before.get(k)?.value ?? 0);
        if (d !== 0) deltas.push({ metric: t.metric, attributes: t.attributes, value: d });
      }
      for (const [k, t] of before) if (!totals.has(k) && t.value !== 0) deltas.push({ metric: t.metric, attributes: t.attributes, value: -t.value });
      for (const r of records.slice(records.length - f.records)) {
        if (r.usage_key !== undefined && r.usage !== undefined) counted.push(`usage:${r.usage_key}`);
        else if (r.kind === "tool_call" || (r.kind === "tool_result" && r.is_error)) counted.push(`${r.kind}:${recordIdentity(r)}`);
      }
      const start = prevStamp !== undefined && prevStamp <= stamp ? prevStamp : stamp;
      const request = buildRequest(sid, runtime || "unknown", f.seq, start, stamp, deltas);
      receipt = {
        session: sid, runtime: runtime || "unknown", seq: f.seq, file: f.rel, sha256: f.sha256, prevSeq: prev?.seq ?? null, startUnixNano: start, endUnixNano: stamp,
        counted: [...new Set(counted)], totals: [...totals.values()].sort((a, b) => (seriesKey(a.metric, a.attributes) < seriesKey(b.metric, b.attributes) ? -1 : 1)), request,
      };
      mkdirSync(rdir, { recursive: true });
      landNoReplace(rdir, receiptName(f.seq), [Buffer.from(encodeReceipt(receipt))], step);
    }
    if (!spooled.has(spoolName)) {
      try {
        landNoReplace(join(root, METRICS_DIR), spoolName, [receipt.request], step);
      } catch (e) {
        if (!(e instanceof StoreError && e.code === "Exists")) throw e;
      }
      spooled.add(spoolName);
      derived++;
    }
    prev = receipt;
    prevStamp = stamp;
  }
  return { derived, last };
}

/** True when `_metrics/` holds a derived spool file for every landed file of the session. */
export function sessionDerived(root: string, sessionId: string): boolean {
  const files = readIndex(root, sessionId).files;
  return files.every((f) => existsSync(join(root, METRICS_DIR, localSpoolName(sessionId, f.seq))));
}

/** A session's counters after its last derived file. */
export interface SessionCounters {
  readonly session: string;
  readonly runtime: string;
  /** The last derived landed file. */
  readonly seq: number;
  readonly totals: readonly SeriesTotal[];
}

/**
 * Every session's counters as its last derived file's receipt records them (what the spool's
 * points of the session add up to): one receipt read per session, from `metrics.state`.
 * A receipt that does not read is `Corrupt`, naming it.
 */
export function derivedCounters(root: string): SessionCounters[] {
  const out: SessionCounters[] = [];
  for (const [session, seq] of [...readMetricsState(root)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const file = join(receiptDir(root, session), receiptName(seq));
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      if (errno(e) === "ENOENT") continue; // the session was removed since
      throw new StoreError("Io", `${file}: cannot read: ${(e as Error).message}`, { data: { file }, cause: e });
    }
    const r = decodeReceipt(text, file);
    out.push({ session, runtime: r.runtime, seq, totals: r.totals });
  }
  return out;
}

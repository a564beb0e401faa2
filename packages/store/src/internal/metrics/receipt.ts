import { StoreError } from "../errors.js";
import { decodeKv, encodeKv, kvInt } from "../kv.js";

/** Schema of a derivation receipt (`<session>/metrics/<seq>.json`). */
export const RECEIPT_SCHEMA = 1;
/** Schema of `_metrics/metrics.state`. */
export const METRICS_STATE_SCHEMA = 1;

/** One counted series: a metric and its point attributes, and the session's total after a file. */
export interface SeriesTotal {
  readonly metric: string;
  /** Point attributes, string values only, keys sorted. */
  readonly attributes: Readonly<Record<string, string>>;
  readonly value: number;
}

/**
 * The immutable decision of deriving one landed file: what was counted and the exact request.
 * Published (no-replace) before the request enters `_metrics/`, so a retry after a crash lands
 * the same bytes whatever has landed since.
 */
export interface DerivationReceipt {
  readonly session: string;
  /** The session's runtime (`claude-code`, `codex` …; `unknown` before a record names it). */
  readonly runtime: string;
  /** The landed file's sequence number and path relative to the session directory. */
  readonly seq: number;
  readonly file: string;
  /** SHA-256 hex of the landed file. */
  readonly sha256: string;
  /** The previous derived file of the session (whose totals this file's points are counted from), or null. */
  readonly prevSeq: number | null;
  /** The points' window: start and end, ns since the epoch. */
  readonly startUnixNano: bigint;
  readonly endUnixNano: bigint;
  /** Ids of the billed responses, tool calls and tool failures this file counted (or changed the count of). */
  readonly counted: readonly string[];
  /** Every series of the session after this file (the next file counts from these). */
  readonly totals: readonly SeriesTotal[];
  /** The exact OTLP/protobuf `ExportMetricsServiceRequest` of `metrics-<session>-<seq>-local.pb`. */
  readonly request: Uint8Array;
}

/** Encode a receipt as its JSON text (keys in a fixed order, one line, a trailing newline). */
export function encodeReceipt(r: DerivationReceipt): string {
  return (
    JSON.stringify({
      schema: RECEIPT_SCHEMA,
      session: r.session,
      runtime: r.runtime,
      seq: r.seq,
      file: r.file,
      sha256: r.sha256,
      prev_seq: r.prevSeq,
      window: { start_unix_nano: String(r.startUnixNano), end_unix_nano: String(r.endUnixNano) },
      counted: r.counted,
      totals: r.totals.map((t) => ({ metric: t.metric, attributes: t.attributes, value: t.value })),
      request: Buffer.from(r.request).toString("base64"),
    }) + "\n"
  );
}

function corrupt(file: string, why: string): StoreError {
  return new StoreError("Corrupt", `${file}: not a derivation receipt: ${why}`, { data: { file } });
}

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;
const nano = (v: unknown, file: string, key: string): bigint => {
  if (typeof v !== "string" || !/^\d+$/.test(v)) throw corrupt(file, `${key} is not a decimal string`);
  return BigInt(v);
};

/** Decode a receipt strictly; `Corrupt` naming `file` when it is not one. */
export function decodeReceipt(text: string, file: string): DerivationReceipt {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new StoreError("Corrupt", `${file}: not a derivation receipt: ${(e as Error).message}`, { data: { file }, cause: e });
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw corrupt(file, "not an object");
  if (v.schema !== RECEIPT_SCHEMA) throw corrupt(file, `unknown schema ${JSON.stringify(v.schema)}`);
  if (typeof v.session !== "string" || v.session === "") throw corrupt(file, "session is not a string");
  if (typeof v.runtime !== "string" || v.runtime === "") throw corrupt(file, "runtime is not a string");
  if (!isInt(v.seq) || v.seq < 1) throw corrupt(file, "seq is not a positive integer");
  if (typeof v.file !== "string") throw corrupt(file, "file is not a string");
  if (typeof v.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(v.sha256)) throw corrupt(file, "sha256 is not 64 hex digits");
  if (v.prev_seq !== null && (!isInt(v.prev_seq) || v.prev_seq >= v.seq)) throw corrupt(file, "prev_seq is neither null nor an earlier sequence");
  const w = v.window as Record<string, unknown> | undefined;
  if (typeof w !== "object" || w === null) throw corrupt(file, "window is not an object");
  if (!Array.isArray(v.counted) || !v.counted.every((c) => typeof c === "string")) throw corrupt(file, "counted is not a list of strings");
  if (!Array.isArray(v.totals)) throw corrupt(file, "totals is not a list");
  const totals = (v.totals as unknown[]).map((t, i): SeriesTotal => {
    const o = t as Record<string, unknown>;
    if (typeof o !== "object" || o === null || typeof o.metric !== "string" || typeof o.value !== "number" || !Number.isFinite(o.value)) throw corrupt(file, `totals[${i}] is not {metric, attributes, value}`);
    const a = o.attributes as Record<string, unknown>;
    if (typeof a !== "object" || a === null || !Object.values(a).every((x) => typeof x === "string")) throw corrupt(file, `totals[${i}].attributes are not strings`);
    return { metric: o.metric, attributes: a as Record<string, string>, value: o.value };
  });
  if (typeof v.request !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(v.request)) throw corrupt(file, "request is not base64");
  return {
    session: v.session,
    runtime: v.runtime,
    seq: v.seq,
    file: v.file,
    sha256: v.sha256,
    prevSeq: v.prev_seq as number | null,
    startUnixNano: nano(w.start_unix_nano, file, "window.start_unix_nano"),
    endUnixNano: nano(w.end_unix_nano, file, "window.end_unix_nano"),
    counted: v.counted as string[],
    totals,
    request: new Uint8Array(Buffer.from(v.request, "base64")),
  };
}

/** `_metrics/metrics.state`: per session, the highest landed sequence whose points are in the spool. */
export interface MetricsState {
  readonly sessions: ReadonlyMap<string, number>;
}

/** Encode `metrics.state` (`schema 1`, then one `<session-id> <derived-seq>` line per session, sorted). */
export function encodeMetricsState(s: MetricsState): string {
  const ids = [...s.sessions.keys()].sort();
  return encodeKv([["schema", METRICS_STATE_SCHEMA], ...ids.map((id) => [id, s.sessions.get(id)!] as const)]);
}

/** Decode `metrics.state`; `Corrupt` naming `file` when it is not one. */
export function decodeMetricsState(text: string, file: string): MetricsState {
  const m = decodeKv(text, file);
  const schema = kvInt(m, "schema", file)!;
  if (schema !== METRICS_STATE_SCHEMA) throw new StoreError("Corrupt", `${file}: unknown schema ${schema}`, { data: { file } });
  const sessions = new Map<string, number>();
  for (const k of m.keys()) if (k !== "schema") sessions.set(k, kvInt(m, k, file)!);
  return { sessions };
}

// `sessions/compacted/dt=…/fleet=…/_COMPACTED`: which generation of compacted parts is current, the
// sealed sessions it reflects, its parts and usage rollup with their content hashes. Written by
// `lake-maint compact` with compare-and-swap (casUpdate adds nonce, prev_nonces); readers follow it,
// never a listing of gen= directories.
import { compactedPartKey, compactedUsageKey, validateDate, validatePartitionValue } from "../keys.js";
import { nodeCrypto } from "../node-crypto.js";
import { canonicalBytes, canonicalJson, Fields, jsonObject } from "./json.js";

/**
 * Version of the _COMPACTED format and of the compaction rules (part of every gen hash). 2: a
 * generation has a usage rollup (`usage`); a format-1 partition is compacted again.
 */
export const COMPACTED_FORMAT = 2;

/** One sealed session a generation reflects. */
export interface CompactedSession {
  readonly runtime: string;
  readonly agent: string;
  readonly session: string;
  readonly segments: number;
  readonly rows: number;
}

/** One stored object of a generation: key, size and SHA-256 of its bytes. */
export interface StoredFile {
  readonly key: string;
  readonly bytes: number;
  readonly sha256: string;
}

/** One part file of a generation. */
export interface CompactedPart extends StoredFile {
  readonly rows: number;
}

/** A generation's usage rollup (`gen=…/usage.json` and `gen=…/usage.keys`, the @lake/events rollup format). */
export interface CompactedUsage extends StoredFile {
  /** Rollup rows (session × day × model). */
  readonly rows: number;
  /** The usage-key hashes beside the document. */
  readonly keys: StoredFile & { readonly count: number };
}

/** A `_COMPACTED` marker (without casUpdate's nonce fields). */
export interface CompactedMarker {
  readonly format: number;
  readonly dt: string;
  readonly fleet: string;
  /** The current generation: {@link compactionGen} of the sealed-session set. */
  readonly gen: string;
  readonly sessions: readonly CompactedSession[];
  /** The generation's parts, in part order (at least one). */
  readonly parts: readonly CompactedPart[];
  /** The usage rollup of the parts (format 2 on). */
  readonly usage?: CompactedUsage;
  /** Rows in the parts (after dedupe). */
  readonly rows: number;
  /** Rows read from bronze (the sessions' `rows` sum). */
  readonly source_rows: number;
  /** Fencing epoch of the lease the writer held. */
  readonly epoch: number;
  readonly lease_owner: string;
  readonly compacted_at: string;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The generation name of a sealed-session set: the first 32 hex digits of SHA-256 over the canonical
 * JSON of `{dt, fleet, format, sessions}`, sessions sorted by runtime/agent/session.
 */
export function compactionGen(dt: string, fleet: string, sessions: readonly CompactedSession[], format: number = COMPACTED_FORMAT): string {
  const sorted = [...sessions]
    .map((s) => ({ runtime: s.runtime, agent: s.agent, session: s.session, segments: s.segments, rows: s.rows }))
    .sort((a, b) => cmp(`${a.runtime}/${a.agent}/${a.session}`, `${b.runtime}/${b.agent}/${b.session}`));
  return nodeCrypto().createHash("sha256").update(canonicalJson({ format, dt, fleet, sessions: sorted })).digest("hex").slice(0, 32);
}

/** The marker's fields in canonical order (what casUpdate is given to write). */
export function compactedValue(m: CompactedMarker): CompactedMarker & Record<string, unknown> {
  return JSON.parse(canonicalJson(m)) as CompactedMarker & Record<string, unknown>;
}

/** The canonical bytes of a marker (the golden vectors; the store holds these fields plus nonce, prev_nonces). */
export function encodeCompacted(m: CompactedMarker): Uint8Array {
  return canonicalBytes(m);
}

function stored(f: Fields, expectKey: string, what: string): StoredFile {
  const key = f.str("key");
  if (key !== expectKey) f.fail(`${what} key ${JSON.stringify(key)} is not ${expectKey}`);
  return { key, bytes: f.int("bytes"), sha256: f.hex64("sha256") };
}

/**
 * Decode a `_COMPACTED` marker strictly; Corrupt (naming `key`) unless it is one: a known format, a
 * valid dt/fleet/gen, sessions of valid partition values, at least one part, parts named
 * `gen=<gen>/part-NNNNNN.parquet` in order from 0, every content hash 64 hex digits, a usage rollup
 * under the same gen (required from format 2), and row totals that add up.
 */
export function decodeCompacted(key: string, body: Uint8Array): CompactedMarker {
  const f: Fields = new Fields(key, jsonObject(key, body));
  const format = f.int("format");
  if (format < 1 || format > COMPACTED_FORMAT) f.fail(`format ${format} is not one this reader knows (1..${COMPACTED_FORMAT})`);
  const dt = f.str("dt");
  const fleet = f.str("fleet");
  try {
    validateDate("dt", dt);
    validatePartitionValue("fleet", fleet);
  } catch (e) {
    f.fail((e as Error).message);
  }
  const gen = f.str("gen");
  if (!/^[0-9a-f]{32}$/.test(gen)) f.fail("gen is not 32 lowercase hex digits");
  const sessions = f.list("sessions").map((s) => {
    const v = { runtime: s.str("runtime"), agent: s.str("agent"), session: s.str("session"), segments: s.int("segments"), rows: s.int("rows") };
    try {
      validatePartitionValue("runtime", v.runtime);
      validatePartitionValue("agent", v.agent);
      validatePartitionValue("session", v.session);
    } catch (e) {
      f.fail(`sessions: ${(e as Error).message}`);
    }
    return v;
  });
  if (sessions.length === 0) f.fail("names no sessions");
  const p = { dt, fleet };
  const parts = f.list("parts").map((x, i) => ({ ...stored(x, compactedPartKey(p, gen, i), `parts[${i}]`), rows: x.int("rows") }));
  if (parts.length === 0) f.fail("names no parts");
  let usage: CompactedUsage | undefined;
  if (f.v.usage !== undefined) {
    const u = f.obj("usage");
    const k = u.obj("keys");
    usage = { ...stored(u, compactedUsageKey(p, gen, "usage.json"), "usage"), rows: u.int("rows"), keys: { ...stored(k, compactedUsageKey(p, gen, "usage.keys"), "usage.keys"), count: k.int("count") } };
  } else if (format >= 2) f.fail(`format ${format} names no usage rollup`);
  const rows = f.int("rows");
  if (parts.reduce((n, x) => n + x.rows, 0) !== rows) f.fail(`parts hold ${parts.reduce((n, x) => n + x.rows, 0)} rows, rows says ${rows}`);
  const sourceRows = f.int("source_rows");
  if (sessions.reduce((n, s) => n + s.rows, 0) !== sourceRows) f.fail(`sessions hold ${sessions.reduce((n, s) => n + s.rows, 0)} rows, source_rows says ${sourceRows}`);
  const m: CompactedMarker = { format, dt, fleet, gen, sessions, parts, rows, source_rows: sourceRows, epoch: f.int("epoch"), lease_owner: f.str("lease_owner"), compacted_at: f.time("compacted_at") };
  return usage === undefined ? m : { ...m, usage };
}

// Usage rollups: what countUsage counts in one set of records (a compacted partition), summed per
// (session, runtime, day, model), with the identities that let a reader add rollups together
// without counting anything twice. The format is documented in the package README.
import { countUsage, type UsageContribution, type UsageRecord } from "./accounting.js";
import { EventsError } from "./errors.js";
import { USAGE_MODES } from "./record-core.js";
import { nodeCrypto, sha256 } from "./sha256.js";
import { USAGE_KEYS, addUsageInto, isEmptyUsage, type Usage } from "./usage.js";

/** The `format` field of a rollup document. */
export const USAGE_ROLLUP_FORMAT = "lake-usage-rollup";
/**
 * The rollup version this package writes and reads; a newer one is refused whole (`NewerRollup`),
 * an older one too (`OlderRollup`: version 1 summed every prompt size and recorded no 1-hour
 * cache writes or recorded costs, so it cannot be priced exactly — its partition is recounted).
 */
export const USAGE_ROLLUP_VERSION = 2;

/**
 * Prompt-size class boundaries (tokens of input + cache reads + cache writes of one response):
 * class 0 holds prompts ≤ B[0], class i prompts in (B[i-1], B[i]], the last class prompts > the
 * last boundary. They are the tier starts of the price dataset (a tiered price applies when the
 * prompt is > its start), so the sum of a class prices like each of its responses. Written into
 * each rollup (`prompt_classes`): a reader checks the prices it uses against the rollup's own list.
 */
export const PROMPT_CLASSES: readonly number[] = [128_000, 199_999, 200_000, 271_999, 272_000, 512_000];

/** The prompt-size class of a response's usage (index into PROMPT_CLASSES, or its length). */
export function promptClass(u: Usage, classes: readonly number[] = PROMPT_CLASSES): number {
  const p = (u.input_tokens ?? 0) + (u.cached_input_tokens ?? 0) + (u.cache_write_tokens ?? 0);
  let i = 0;
  while (i < classes.length && p > classes[i]!) i++;
  return i;
}

/** The names of a rollup's two objects, side by side in one directory. */
export const USAGE_ROLLUP_FILES = { json: "usage.json", keys: "usage.keys" } as const;

/** Columns of a rollup row, in order. */
export const USAGE_ROLLUP_COLUMNS = ["session_id", "runtime", "day", "model", "prompt_class", "contributions", "first_ts", "last_ts", ...USAGE_KEYS, "cost_usd"] as const;

/**
 * One rollup row: the contributions of one (session, runtime, day, model, prompt class, with or
 * without a recorded cost), summed (absent ≠ zero).
 */
export interface UsageRollupRow {
  readonly session_id: string;
  readonly runtime: string;
  /** UTC day of the contributions, or "unknown". */
  readonly day: string;
  readonly model: string | null;
  /** The prompt-size class of every contribution summed here (see PROMPT_CLASSES). */
  readonly prompt_class: number;
  /** Sum of the contributions' recorded costs (USD); null when they have none (rows never mix the two). */
  readonly cost_usd: number | null;
  /** Contributions summed into this row. */
  readonly contributions: number;
  /** Earliest and latest contribution time (ISO), null when none had one. */
  readonly first_ts: string | null;
  readonly last_ts: string | null;
  readonly usage: Usage;
}

/** A decoded rollup. */
export interface UsageRollup {
  /** The prompt-size class boundaries its rows are split by. */
  readonly prompt_classes: readonly number[];
  readonly rows: readonly UsageRollupRow[];
  /** Sessions with a record countUsage looks at (sorted, unique). */
  readonly sessions: readonly string[];
  /** usageKeyHash of every usage key countUsage looks at (sorted ascending, unique). */
  readonly keys: BigUint64Array;
}

/** The records countUsage looks at past its rule 1 (no usage, or replayed, counts nothing). */
function counted(rec: UsageRecord): boolean {
  return !rec.replayed && (!isEmptyUsage(rec.usage) || (rec.usage_mode === "latest" && rec.usage_key !== undefined));
}

/**
 * The 64-bit identity of a record's usage key as countUsage groups it: the first 8 bytes
 * (big-endian) of SHA-256 over `l` (a `latest` copy) or `d` (any other keyed copy), a NUL, and the
 * key's UTF-8 bytes. Undefined for a record countUsage does not group by key (no key, cumulative,
 * or one it skips).
 */
export function usageKeyHash(rec: UsageRecord): bigint | undefined {
  if (rec.usage_key === undefined || rec.usage_mode === "cumulative" || !counted(rec)) return undefined;
  const latest = rec.usage_mode === "latest";
  const last = lastKeyHash;
  if (last !== undefined && last.key === rec.usage_key && last.latest === latest) return last.hash;
  const hash = sha256(`${latest ? "l" : "d"}\0${rec.usage_key}`).readBigUInt64BE(0);
  lastKeyHash = { key: rec.usage_key, latest, hash };
  return hash;
}

/**
 * The key {@link usageKeyHash} hashed last, with its hash: the copies of one message's usage (one
 * per content block, in a row) share their key, and about half of a Claude Code transcript's usage
 * lines are such copies.
 */
let lastKeyHash: { readonly key: string; readonly latest: boolean; readonly hash: bigint } | undefined;

/** What records could interact with other records in countUsage: their sessions and usage keys. */
export interface UsageIdentity {
  readonly sessions: ReadonlySet<string>;
  /** Sorted ascending, unique. */
  readonly keys: BigUint64Array;
}

/** The sessions and usage-key hashes of the records countUsage looks at. */
export function usageIdentity(records: Iterable<UsageRecord>): UsageIdentity {
  const sessions = new Set<string>();
  const keys: bigint[] = [];
  for (const rec of records) {
    if (!counted(rec)) continue;
    sessions.add(rec.session_id);
    const h = usageKeyHash(rec);
    if (h !== undefined) keys.push(h);
  }
  return { sessions, keys: sortedUnique(BigUint64Array.from(keys)) };
}

function sortedUnique(a: BigUint64Array): BigUint64Array {
  a.sort();
  let n = 0;
  for (let i = 0; i < a.length; i++) if (i === 0 || a[i] !== a[n - 1]) a[n++] = a[i]!;
  return a.subarray(0, n);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The group of a rollup row: (session, runtime, day, model, prompt class, recorded cost or not). */
function groupKey(session: string, runtime: string, day: string, model: string | null, pc: number, recorded: boolean): string {
  return `${session}\0${runtime}\0${day}\0${model === null ? "\u0001" : `\u0002${model}`}\0${pc}\0${recorded ? 1 : 0}`;
}

/**
 * Sum contributions per (session, runtime, day, model, prompt class, recorded cost or not), sorted
 * by those (null model first; without a recorded cost first). With `start`, the rows the
 * contributions before these summed to: the sums go on from them, each in the same order as over
 * all of the contributions (so a recorded cost, a float, comes out the same).
 */
export function rollupRows(contributions: Iterable<UsageContribution>, start: readonly UsageRollupRow[] = []): UsageRollupRow[] {
  type G = { session_id: string; runtime: string; day: string; model: string | null; prompt_class: number; contributions: number; first_ts: string | null; last_ts: string | null; usage: Usage; cost_usd: number | null };
  const groups = new Map<string, G>();
  for (const r of start) groups.set(groupKey(r.session_id, r.runtime, r.day, r.model, r.prompt_class, r.cost_usd !== null), { ...r, usage: { ...r.usage } });
  for (const c of contributions) {
    const pc = promptClass(c.usage);
    const rec = c.cost_usd !== undefined;
    const k = groupKey(c.session_id, c.runtime, c.day, c.model, pc, rec);
    let g = groups.get(k);
    if (!g) groups.set(k, (g = { session_id: c.session_id, runtime: c.runtime, day: c.day, model: c.model, prompt_class: pc, contributions: 0, first_ts: null, last_ts: null, usage: {}, cost_usd: rec ? 0 : null }));
    g.contributions++;
    addUsageInto(g.usage, c.usage);
    if (rec) g.cost_usd! += c.cost_usd!;
    if (c.ts !== null) {
      if (g.first_ts === null || c.ts < g.first_ts) g.first_ts = c.ts;
      if (g.last_ts === null || c.ts > g.last_ts) g.last_ts = c.ts;
    }
  }
  return [...groups.values()].sort(
    (a, b) =>
      cmp(a.session_id, b.session_id) ||
      cmp(a.runtime, b.runtime) ||
      cmp(a.day, b.day) ||
      (a.model === b.model ? 0 : a.model === null ? -1 : b.model === null ? 1 : cmp(a.model, b.model)) ||
      a.prompt_class - b.prompt_class ||
      (a.cost_usd === null ? 0 : 1) - (b.cost_usd === null ? 0 : 1),
  );
}

/** Count `records` (countUsage, in the order given) into a rollup. */
export function buildUsageRollup(records: readonly UsageRecord[]): UsageRollup {
  const id = usageIdentity(records);
  return { prompt_classes: PROMPT_CLASSES, rows: rollupRows(countUsage(records)), sessions: [...id.sessions].sort(cmp), keys: id.keys };
}

/** A rollup as stored: the document and, beside it, its usage-key hashes. */
export interface EncodedUsageRollup {
  /** `usage.json`: canonical JSON (fixed key order, no spaces) and a final newline. */
  readonly json: string;
  /** `usage.keys`: the hashes, 8 bytes each, big-endian, sorted ascending, distinct. */
  readonly keys: Buffer;
}

/** Big-endian bytes of 64-bit hashes, as usage.keys holds them. */
function hashBytes(a: BigUint64Array): Buffer {
  const out = Buffer.alloc(a.length * 8);
  for (let i = 0; i < a.length; i++) out.writeBigUInt64BE(a[i]!, i * 8);
  return out;
}

/** Encode a rollup as its two objects (`usage.json`, `usage.keys`). */
export function encodeUsageRollup(r: UsageRollup): EncodedUsageRollup {
  const keys = hashBytes(r.keys);
  const rows = r.rows.map((x) => [x.session_id, x.runtime, x.day, x.model, x.prompt_class, x.contributions, x.first_ts, x.last_ts, ...USAGE_KEYS.map((k) => x.usage[k] ?? null), x.cost_usd]);
  const meta = { count: r.keys.length, sha256: nodeCrypto().createHash("sha256").update(keys).digest("hex") };
  return {
    json: `${JSON.stringify({ format: USAGE_ROLLUP_FORMAT, version: USAGE_ROLLUP_VERSION, prompt_classes: r.prompt_classes, columns: USAGE_ROLLUP_COLUMNS, rows, sessions: r.sessions, keys: meta })}\n`,
    keys,
  };
}

function bad(file: string, why: string): never {
  throw new EventsError("InvalidRollup", `${file}: not a usage rollup: ${why}`, { data: { file } });
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const isStrOrNull = (v: unknown): v is string | null => v === null || typeof v === "string";

/**
 * Decode a rollup from its document (`text`, read from `file`) and its key hashes (the bytes of
 * the `usage.keys` beside it). Throws EventsError `InvalidRollup` naming `file` when they are not
 * one (the keys must be the count and SHA-256 the document names), and `NewerRollup` when a newer
 * writer made it (refused whole: it may count differently).
 */
export function decodeUsageRollup(text: string, keyBytes: Uint8Array, file: string): UsageRollup {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new EventsError("InvalidRollup", `${file}: not a usage rollup: ${(e as Error).message}`, { data: { file }, cause: e });
  }
  const o = v as { format?: unknown; version?: unknown; prompt_classes?: unknown; columns?: unknown; rows?: unknown; sessions?: unknown; keys?: unknown };
  if (typeof o !== "object" || o === null || o.format !== USAGE_ROLLUP_FORMAT) bad(file, `"format" is not "${USAGE_ROLLUP_FORMAT}"`);
  if (!isCount(o.version) || o.version < 1) bad(file, `"version" is not a positive integer`);
  if (o.version > USAGE_ROLLUP_VERSION) {
    throw new EventsError("NewerRollup", `${file}: usage rollup version ${o.version} is newer than this reader's ${USAGE_ROLLUP_VERSION}`, { data: { file, version: o.version } });
  }
  if (o.version < USAGE_ROLLUP_VERSION) {
    throw new EventsError("OlderRollup", `${file}: usage rollup version ${o.version} is older than this reader's ${USAGE_ROLLUP_VERSION} (its sums cannot be priced exactly)`, { data: { file, version: o.version } });
  }
  const pcs = o.prompt_classes;
  if (!Array.isArray(pcs) || !pcs.every((x, i) => isCount(x) && (i === 0 || x > pcs[i - 1]))) bad(file, `"prompt_classes" is not an ascending list of token counts`);
  const classes = pcs as number[];
  if (!Array.isArray(o.columns) || o.columns.join("\0") !== USAGE_ROLLUP_COLUMNS.join("\0")) bad(file, `"columns" differ from version ${USAGE_ROLLUP_VERSION}'s`);
  if (!Array.isArray(o.rows)) bad(file, `"rows" is not a list`);
  const rows: UsageRollupRow[] = [];
  const width = USAGE_ROLLUP_COLUMNS.length;
  for (let i = 0; i < o.rows.length; i++) {
    const r = o.rows[i] as unknown[];
    if (!Array.isArray(r) || r.length !== width) bad(file, `row ${i} does not have ${width} values`);
    const [session_id, runtime, day, model, pc, n, first, last] = r;
    if (
      typeof session_id !== "string" || typeof runtime !== "string" || typeof day !== "string" || !isStrOrNull(model) || !isCount(pc) || pc > classes.length || !isCount(n) || !isStrOrNull(first) || !isStrOrNull(last)
    ) {
      bad(file, `row ${i} has a value of the wrong type`);
    }
    const usage: Usage = {};
    for (let k = 0; k < USAGE_KEYS.length; k++) {
      const x = r[8 + k];
      if (x === null) continue;
      if (!isCount(x)) bad(file, `row ${i}: ${USAGE_KEYS[k]} is not a token count`);
      usage[USAGE_KEYS[k]!] = x;
    }
    const cost = r[8 + USAGE_KEYS.length];
    if (cost !== null && (typeof cost !== "number" || !Number.isFinite(cost) || cost < 0)) bad(file, `row ${i}: cost_usd is not a cost`);
    rows.push({ session_id, runtime, day, model, prompt_class: pc, contributions: n, first_ts: first, last_ts: last, usage, cost_usd: cost as number | null });
  }
  if (!Array.isArray(o.sessions) || !o.sessions.every((s) => typeof s === "string")) bad(file, `"sessions" is not a list of ids`);
  const meta = o.keys as { count?: unknown; sha256?: unknown } | null;
  if (typeof meta !== "object" || meta === null || !isCount(meta.count) || typeof meta.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(meta.sha256)) {
    bad(file, `"keys" is not {"count", "sha256"}`);
  }
  if (keyBytes.length !== meta.count * 8) bad(file, `usage.keys holds ${keyBytes.length} bytes, the document says ${meta.count} hashes of 8`);
  if (nodeCrypto().createHash("sha256").update(keyBytes).digest("hex") !== meta.sha256) bad(file, `usage.keys does not hash to the document's sha256`);
  // Big-endian on disk; one bulk copy (and byte swap on a little-endian host) instead of a read per key.
  const keys = new BigUint64Array(meta.count);
  new Uint8Array(keys.buffer).set(keyBytes);
  if (LITTLE_ENDIAN) Buffer.from(keys.buffer).swap64();
  return { prompt_classes: classes, rows, sessions: o.sessions as string[], keys };
}

/**
 * A rollup's rows as contributions (one per row, stream "", ts = the row's last_ts, `responses`
 * = its count, `prompt` = the smallest prompt size of its class, `cost_usd` its recorded cost),
 * for the report functions that group contributions: per-day, per-month and per-session totals
 * and costs come out the same as from the contributions the rows sum (for prices that change at
 * most per UTC day and tier at the rollup's class boundaries). Not for anything that needs each
 * contribution's own time (5-hour blocks).
 */
export function rollupContributions(r: Pick<UsageRollup, "rows" | "prompt_classes">): UsageContribution[] {
  return r.rows.map((x) => ({
    session_id: x.session_id,
    runtime: x.runtime,
    stream: "",
    model: x.model,
    ts: x.last_ts,
    day: x.day,
    usage: { ...x.usage },
    ...(x.cost_usd === null ? {} : { cost_usd: x.cost_usd }),
    responses: x.contributions,
    prompt: x.prompt_class === 0 ? 0 : r.prompt_classes[x.prompt_class - 1]! + 1,
  }));
}

/**
 * Which of `rollups` can be added to the others as they are: a rollup that shares a session or a
 * usage key with another rollup, or with `outside` (records counted elsewhere), cannot — countUsage
 * would count those records together (a copied response once, a running total as one stream).
 * Returns the indices of the rollups that must be counted from their records instead.
 */
export function overlappingRollups(rollups: readonly Pick<UsageRollup, "sessions" | "keys">[], outside?: UsageIdentity): Set<number> {
  const out = new Set<number>();
  const owner = new Map<string, number>();
  rollups.forEach((r, i) => {
    for (const s of r.sessions) {
      const j = owner.get(s);
      if (j === undefined) owner.set(s, i);
      else if (j !== i) out.add(i).add(j);
      if (outside?.sessions.has(s)) out.add(i);
    }
  });
  // Keys: all hashes in one array, sorted natively; equal hashes end up side by side. (This runs
  // once per command, cold: native sort and a plain loop over 32-bit halves beat a hash set or a
  // k-way merge in JS by 2-4x here.) Owners are looked up only for the rare shared hashes.
  let total = outside?.keys.length ?? 0;
  for (const r of rollups) total += r.keys.length;
  const all = new BigUint64Array(total);
  let at = 0;
  for (const r of rollups) {
    all.set(r.keys, at);
    at += r.keys.length;
  }
  if (outside) all.set(outside.keys, at);
  all.sort();
  const w = halves(all);
  const shared = new Set<bigint>();
  for (let i = 1; i < total; i++) if (w[2 * i] === w[2 * i - 2] && w[2 * i + 1] === w[2 * i - 1]) shared.add(all[i]!);
  if (shared.size === 0) return out;
  const seen = new Map<bigint, number>();
  const meet = (h: bigint, id: number): void => {
    const o = seen.get(h);
    if (o === undefined) seen.set(h, id);
    else if (o !== id) {
      if (o >= 0) out.add(o);
      if (id >= 0) out.add(id);
    }
  };
  rollups.forEach((r, i) => {
    for (const h of r.keys) if (shared.has(h)) meet(h, i);
  });
  if (outside) for (const h of outside.keys) if (shared.has(h)) meet(h, OUTSIDE);
  return out;
}

const OUTSIDE = -2;
/** A BigUint64Array's values as 32-bit halves (two per value; equal values have equal halves). */
function halves(keys: BigUint64Array): Uint32Array {
  return new Uint32Array(keys.buffer, keys.byteOffset, keys.length * 2);
}

/** The `format` field of a usage carry document. */
export const USAGE_CARRY_FORMAT = "lake-usage-carry";
/** The carry version this package writes and reads (any other is refused: `InvalidRollup`). */
export const USAGE_CARRY_VERSION = 1;
/** Columns of a carry row (one UsageRecord), in order. */
export const USAGE_CARRY_COLUMNS = ["session_id", "runtime", "stream", "record_id", "content_hash", "ts", "model", ...USAGE_KEYS, "usage_mode", "usage_key", "is_sidechain", "cost_usd"] as const;
const USAGE_MODE_VALUES: readonly string[] = USAGE_MODES;

/**
 * Encode a usage carry: the records a rollup counted (the UsageRecords countUsage looks at, in read
 * order), so that the rollup of a set that grew by some records is
 * `buildUsageRollup([...decodeUsageCarry(carry), ...grown])` — the same bytes as counting every
 * record again — without reading the earlier records' files. One line of JSON and a newline.
 * Fields countUsage does not read (and `replayed` records, which it skips) are not kept.
 */
export function encodeUsageCarry(records: Iterable<UsageRecord>): string {
  return `${JSON.stringify({ format: USAGE_CARRY_FORMAT, version: USAGE_CARRY_VERSION, columns: USAGE_CARRY_COLUMNS, rows: carryRows(records) })}\n`;
}

/** The rows of a carry document: one array per record countUsage looks at (replayed ones left out). */
function carryRows(records: Iterable<UsageRecord>): unknown[] {
  const rows: unknown[] = [];
  for (const r of records) {
    if (r.replayed) continue;
    rows.push([
      r.session_id,
      r.runtime,
      r.stream,
      r.record_id ?? null,
      r.content_hash,
      r.ts ?? null,
      r.model ?? null,
      ...USAGE_KEYS.map((k) => r.usage?.[k] ?? null),
      r.usage_mode ?? null,
      r.usage_key ?? null,
      r.is_sidechain ?? null,
      r.cost_usd ?? null,
    ]);
  }
  return rows;
}

/**
 * Decode a usage carry (`text`, read from `file`) back into its records, in order. Throws
 * EventsError `InvalidRollup` naming `file` when it is not one (a torn or damaged file too).
 */
export function decodeUsageCarry(text: string, file: string): UsageRecord[] {
  const notCarry = (why: string): never => {
    throw new EventsError("InvalidRollup", `${file}: not a usage carry: ${why}`, { data: { file } });
  };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new EventsError("InvalidRollup", `${file}: not a usage carry: ${(e as Error).message}`, { data: { file }, cause: e });
  }
  const o = v as { format?: unknown; version?: unknown; columns?: unknown; rows?: unknown };
  if (typeof o !== "object" || o === null || o.format !== USAGE_CARRY_FORMAT) notCarry(`"format" is not "${USAGE_CARRY_FORMAT}"`);
  if (o.version !== USAGE_CARRY_VERSION) notCarry(`"version" is not ${USAGE_CARRY_VERSION}`);
  if (!Array.isArray(o.columns) || o.columns.join("\0") !== USAGE_CARRY_COLUMNS.join("\0")) notCarry(`"columns" differ from version ${USAGE_CARRY_VERSION}'s`);
  if (!Array.isArray(o.rows)) notCarry(`"rows" is not a list`);
  const rows = o.rows as unknown[];
  const width = USAGE_CARRY_COLUMNS.length;
  const u0 = 7;
  const out: UsageRecord[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as unknown[];
    if (!Array.isArray(r) || r.length !== width) notCarry(`row ${i} does not have ${width} values`);
    const [session_id, runtime, stream, record_id, content_hash, ts, model] = r;
    const mode = r[u0 + USAGE_KEYS.length];
    const key = r[u0 + USAGE_KEYS.length + 1];
    const side = r[u0 + USAGE_KEYS.length + 2];
    const cost = r[u0 + USAGE_KEYS.length + 3];
    if (
      typeof session_id !== "string" ||
      typeof runtime !== "string" ||
      typeof stream !== "string" ||
      !isStrOrNull(record_id) ||
      typeof content_hash !== "string" ||
      !isStrOrNull(ts) ||
      !isStrOrNull(model) ||
      (mode !== null && !USAGE_MODE_VALUES.includes(mode as string)) ||
      !isStrOrNull(key) ||
      (side !== null && typeof side !== "boolean") ||
      (cost !== null && (typeof cost !== "number" || !Number.isFinite(cost)))
    ) {
      notCarry(`row ${i} has a value of the wrong type`);
    }
    // The same properties in the same order for every record (absent = undefined): one object shape.
    const usage: Usage = {};
    for (let k = 0; k < USAGE_KEYS.length; k++) {
      const x = r[u0 + k];
      if (x === null) continue;
      if (typeof x !== "number" || !Number.isFinite(x) || x < 0) notCarry(`row ${i}: ${USAGE_KEYS[k]} is not a token count`);
      usage[USAGE_KEYS[k]!] = x as number;
    }
    out[i] = {
      session_id,
      runtime,
      stream,
      content_hash,
      record_id: record_id ?? undefined,
      ts: ts ?? undefined,
      model: model ?? undefined,
      usage,
      usage_mode: (mode ?? undefined) as UsageRecord["usage_mode"],
      usage_key: key ?? undefined,
      is_sidechain: (side ?? undefined) as boolean | undefined,
      cost_usd: (cost ?? undefined) as number | undefined,
    } as UsageRecord;
  }
  return out;
}

/**
 * A 64-bit hash of the identity countUsage's rule 2 gives a record (`i`, session, stream and
 * record_id; or `h`, session and content hash): two 32-bit FNV-1a passes over its UTF-16 code
 * units, with different offsets. Only ever compared to find records that may be the same one — a
 * collision sends a rollup to the slower, exact path — so a fast hash, not a cryptographic one.
 */
function usageIdHash(rec: UsageRecord): bigint {
  const id = rec.record_id !== undefined ? `i\0${rec.session_id}\0${rec.stream}\0${rec.record_id}` : `h\0${rec.session_id}\0${rec.content_hash}`;
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  return (BigInt(a >>> 0) << 32n) | BigInt(b >>> 0);
}

/** The identity hashes (sorted ascending, unique) of the records countUsage looks at. */
export function usageIds(records: Iterable<UsageRecord>): BigUint64Array {
  const ids: bigint[] = [];
  for (const rec of records) if (counted(rec)) ids.push(usageIdHash(rec));
  return sortedUnique(BigUint64Array.from(ids));
}

/** Whether sorted `a` holds `v` (binary search). */
function holds(a: BigUint64Array, v: bigint): boolean {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const x = a[mid]!;
    if (x === v) return true;
    if (x < v) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

/** Which 32-bit half of a 64-bit element holds its high bits (the platform's byte order). */
const HIGH = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 1 : 0;

/**
 * The sorted union of two sorted, unique arrays, in a new array: each element of `b` is placed by a
 * binary search of `a` (its 32-bit halves compared, no bigint made) and the run of `a` before it
 * copied whole. A carry grown a batch at a time adds a batch's few keys to all the session's
 * before it: this costs the copy, where sorting the two together cost a sort of everything again.
 */
export function union(a: BigUint64Array, b: BigUint64Array): BigUint64Array {
  const out = new BigUint64Array(a.length + b.length);
  const A = new Uint32Array(a.buffer, a.byteOffset, a.length * 2);
  const B = new Uint32Array(b.buffer, b.byteOffset, b.length * 2);
  const O = new Uint32Array(out.buffer, out.byteOffset, out.length * 2);
  const L = 1 - HIGH;
  let i = 0;
  let n = 0;
  for (let j = 0; j < b.length; j++) {
    const hi = B[2 * j + HIGH]!;
    const lo = B[2 * j + L]!;
    // The first element of a[i..] not below b[j].
    let l = i;
    let h = a.length;
    while (l < h) {
      const m = (l + h) >>> 1;
      const mh = A[2 * m + HIGH]!;
      if (mh < hi || (mh === hi && A[2 * m + L]! < lo)) l = m + 1;
      else h = m;
    }
    if (l > i) {
      out.set(a.subarray(i, l), n);
      n += l - i;
      i = l;
    }
    if (i < a.length && A[2 * i + HIGH] === hi && A[2 * i + L] === lo) continue; // in both: a's copy comes next
    O[2 * n + HIGH] = hi;
    O[2 * n + L] = lo;
    n++;
  }
  out.set(a.subarray(i), n);
  n += a.length - i;
  return out.subarray(0, n);
}

/**
 * The rollup of a set of records grown by `grown`, from the rollup of the set before (`prev`) and
 * the identity hashes of its records (`prevIds`, {@link usageIds}) — without the records before —
 * when nothing in `grown` can meet them in countUsage: no record of `grown` that countUsage looks
 * at has an identity hash or usage-key hash of the set before, and none is a running total. Then
 * every contribution of `grown` comes after those of the set before, in the same order as when
 * counting everything, and the rows continue from `prev`'s ({@link rollupRows}): the result is
 * `buildUsageRollup([...before, ...grown])`, the same bytes once encoded. Otherwise (or on a hash
 * collision) undefined: count every record.
 */
export function continueUsageRollup(prev: UsageRollup, prevIds: BigUint64Array, grown: readonly UsageRecord[]): { rollup: UsageRollup; ids: BigUint64Array } | undefined {
  const ids: bigint[] = [];
  const keys: bigint[] = [];
  const sessions = new Set(prev.sessions);
  for (const rec of grown) {
    if (!counted(rec)) continue;
    if (rec.usage_mode === "cumulative") return undefined;
    const id = usageIdHash(rec);
    if (holds(prevIds, id)) return undefined;
    const h = usageKeyHash(rec);
    if (h !== undefined) {
      if (holds(prev.keys, h)) return undefined;
      keys.push(h);
    }
    ids.push(id);
    sessions.add(rec.session_id);
  }
  return {
    rollup: { prompt_classes: prev.prompt_classes, rows: rollupRows(countUsage(grown), prev.rows), sessions: [...sessions].sort(cmp), keys: union(prev.keys, sortedUnique(BigUint64Array.from(keys))) },
    ids: union(prevIds, sortedUnique(BigUint64Array.from(ids))),
  };
}

/** The `format` of a usage carry's state line. */
export const USAGE_CARRY_STATE_FORMAT = "lake-usage-carry-state";
/** The carry state version this package writes and reads (any other is refused: `InvalidRollup`). */
export const USAGE_CARRY_STATE_VERSION = 1;

/** A run of a carry document's bytes and its SHA-256 (hex). */
export interface UsageCarryChunk {
  readonly bytes: number;
  readonly sha256: string;
}

/**
 * A usage carry with its state: the rollup its records count to and their identity hashes, so that
 * a set grown by records that cannot meet them is counted from those alone (continueUsageRollup);
 * and the records themselves, as the bytes of their carry document (encodeUsageCarry), decoded only
 * when they are needed (usageCarryRecords). The document but its closing `]}` and newline is
 * covered by `chunks`, one per time records were added to it, each with its own SHA-256: adding
 * records hashes what is added, not the document again.
 */
export interface UsageCarryState {
  readonly rollup: UsageRollup;
  readonly ids: BigUint64Array;
  /** The records' carry document, in pieces (its bytes are theirs one after another; the last ends the document). */
  readonly records: readonly Uint8Array[];
  readonly chunks: readonly UsageCarryChunk[];
}

/** The end of every carry document: its rows' and its object's closing brackets and a newline. */
const CARRY_END = "]}\n";

const sha256Bytes = (b: Uint8Array): string => nodeCrypto().createHash("sha256").update(b).digest("hex");


/** The state of a carry of `records`, counted (buildUsageRollup, usageIds). */
export function usageCarryState(records: readonly UsageRecord[]): UsageCarryState {
  const doc = Buffer.from(encodeUsageCarry(records));
  const body = doc.subarray(0, doc.length - CARRY_END.length);
  return { rollup: buildUsageRollup(records), ids: usageIds(records), records: [body, END_BYTES], chunks: [{ bytes: body.length, sha256: sha256Bytes(body) }] };
}

const END_BYTES = Buffer.from(CARRY_END);

/** A carry document's pieces without its end (the last piece ends with it: every state is made so). */
function withoutEnd(pieces: readonly Uint8Array[]): Uint8Array[] {
  const out = pieces.slice();
  const last = out.pop()!;
  if (last.length > END_BYTES.length) out.push(last.subarray(0, last.length - END_BYTES.length));
  return out;
}

/**
 * The state `s` grown by `grown`, when they cannot meet its records in countUsage
 * (continueUsageRollup): the rollup continued and the records' document added to — its bytes
 * copied, never decoded, the new rows' chunk hashed. Undefined otherwise: count every record
 * (usageCarryRecords and the grown ones, usageCarryState).
 */
export function growUsageCarry(s: UsageCarryState, grown: readonly UsageRecord[]): UsageCarryState | undefined {
  const c = continueUsageRollup(s.rollup, s.ids, grown);
  if (c === undefined) return undefined;
  const rows = carryRows(grown);
  if (rows.length === 0) return { ...s, rollup: c.rollup, ids: c.ids };
  const body = withoutEnd(s.records);
  const tail = body[body.length - 1]!;
  const added = Buffer.from(`${tail[tail.length - 1] === 0x5b /* [ */ ? "" : ","}${JSON.stringify(rows).slice(1, -1)}`);
  return { rollup: c.rollup, ids: c.ids, records: [...body, added, END_BYTES], chunks: [...s.chunks, { bytes: added.length, sha256: sha256Bytes(added) }] };
}

/**
 * The records of a carry state, decoded, after checking each chunk of its document against its
 * SHA-256. Throws EventsError `InvalidRollup` naming `file` when one does not check or the
 * document does not decode.
 */
export function usageCarryRecords(s: UsageCarryState, file: string): UsageRecord[] {
  const doc = Buffer.concat(s.records);
  let at = 0;
  for (const c of s.chunks) {
    if (sha256Bytes(doc.subarray(at, at + c.bytes)) !== c.sha256) throw new EventsError("InvalidRollup", `${file}: not a usage carry: the records at bytes ${at}-${at + c.bytes} do not hash to their SHA-256`, { data: { file } });
    at += c.bytes;
  }
  return decodeUsageCarry(doc.toString("utf8"), file);
}

/**
 * Encode a carry with its state: one line of JSON (`format`, `version`, the rollup's usage.json
 * text and its usage.keys in base64, the identity hashes — 8 bytes each, big-endian — in base64
 * with their count and SHA-256, and the records document's chunks), then the records' carry
 * document. In pieces, to be written one after another (the records' are not copied).
 */
export function encodeUsageCarryState(s: UsageCarryState): Uint8Array[] {
  const enc = encodeUsageRollup(s.rollup);
  const ids = hashBytes(s.ids);
  const head = {
    format: USAGE_CARRY_STATE_FORMAT,
    version: USAGE_CARRY_STATE_VERSION,
    rollup: enc.json,
    keys: enc.keys.toString("base64"),
    ids: { count: s.ids.length, sha256: sha256Bytes(ids), bytes: ids.toString("base64") },
    chunks: s.chunks.map((c) => [c.bytes, c.sha256]),
  };
  return [Buffer.from(`${JSON.stringify(head)}\n`), ...s.records];
}

/**
 * Decode a carry with its state (`bytes`, read from `file`). The state line is checked whole (the
 * rollup's objects, the identity hashes' count and SHA-256) and the records document's length and
 * end against its chunks; the records are not hashed or decoded (usageCarryRecords does, when they
 * are needed). Throws EventsError `InvalidRollup` naming `file` when it is not one (a torn or
 * damaged file, a carry without a state line).
 */
export function decodeUsageCarryState(bytes: Buffer, file: string): UsageCarryState {
  const notState = (why: string): never => {
    throw new EventsError("InvalidRollup", `${file}: not a usage carry state: ${why}`, { data: { file } });
  };
  const nl = bytes.indexOf(10);
  if (nl < 0) notState("no state line");
  let v: unknown;
  try {
    v = JSON.parse(bytes.toString("utf8", 0, nl));
  } catch (e) {
    throw new EventsError("InvalidRollup", `${file}: not a usage carry state: ${(e as Error).message}`, { data: { file }, cause: e });
  }
  const o = v as { format?: unknown; version?: unknown; rollup?: unknown; keys?: unknown; ids?: { count?: unknown; sha256?: unknown; bytes?: unknown } | null; chunks?: unknown };
  if (typeof o !== "object" || o === null || o.format !== USAGE_CARRY_STATE_FORMAT) notState(`"format" is not "${USAGE_CARRY_STATE_FORMAT}"`);
  if (o.version !== USAGE_CARRY_STATE_VERSION) notState(`"version" is not ${USAGE_CARRY_STATE_VERSION}`);
  if (typeof o.rollup !== "string" || typeof o.keys !== "string") notState(`"rollup" and "keys" are not the rollup's two objects`);
  const rollup = decodeUsageRollup(o.rollup as string, Buffer.from(o.keys as string, "base64"), file);
  const ids = o.ids;
  if (typeof ids !== "object" || ids === null || !isCount(ids.count) || typeof ids.sha256 !== "string" || typeof ids.bytes !== "string") notState(`"ids" is not {"count", "sha256", "bytes"}`);
  const idBytes = Buffer.from(ids!.bytes as string, "base64");
  if (idBytes.length !== (ids!.count as number) * 8 || sha256Bytes(idBytes) !== ids!.sha256) notState(`"ids" does not hold the count and hash it names`);
  if (!Array.isArray(o.chunks) || !o.chunks.every((c) => Array.isArray(c) && c.length === 2 && isCount(c[0]) && typeof c[1] === "string" && /^[0-9a-f]{64}$/.test(c[1]))) notState(`"chunks" is not a list of [bytes, sha256]`);
  const chunks = (o.chunks as [number, string][]).map(([n, h]) => ({ bytes: n, sha256: h }));
  const records = bytes.subarray(nl + 1);
  const covered = chunks.reduce((n, c) => n + c.bytes, 0);
  if (records.length !== covered + CARRY_END.length || records.toString("latin1", covered) !== CARRY_END) notState("the records line is not the length its chunks give");
  const idArr = new BigUint64Array(ids!.count as number);
  new Uint8Array(idArr.buffer).set(idBytes);
  if (LITTLE_ENDIAN) Buffer.from(idArr.buffer).swap64();
  return { rollup, ids: idArr, records: [records], chunks };
}

import { existsSync, mkdirSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { StoreError, errno } from "../errors.js";
import { fsyncDir, landNoReplace, replaceAtomic, type StepHook } from "../fsx.js";
import { decodeKv, encodeKv, kvInt } from "../kv.js";
import { acquireLock } from "../lock.js";
import { formatStamp, nowNs, padSeq } from "../names.js";
import { decodeMetricsState, encodeMetricsState } from "./receipt.js";

/** The metrics spool directory under the storage root. */
export const METRICS_DIR = "_metrics";
/** Schema of `spool.state`. */
export const SPOOL_STATE_SCHEMA = 1;

const OTLP_RE = /^metrics-(\d{8}T\d{6}\.\d{9}Z)-(\d{6,})-otlp\.pb$/;
const LOCAL_RE = /^metrics-(.+)-(\d{6,})-local\.pb$/;

/** A spool file named by its name. */
export type SpoolName =
  | { readonly kind: "otlp"; readonly receivedAt: string; readonly seq: number }
  | { readonly kind: "local"; readonly sessionId: string; readonly seq: number };

/** `metrics-<received-at>-<seq>-otlp.pb`: one request the receiver was sent. */
export function otlpSpoolName(receivedAt: string, seq: number): string {
  return `metrics-${receivedAt}-${padSeq(seq)}-otlp.pb`;
}

/** `metrics-<session-id>-<seq>-local.pb`: the points derived from the session's landed file `<seq>`. */
export function localSpoolName(sessionId: string, seq: number): string {
  return `metrics-${sessionId}-${padSeq(seq)}-local.pb`;
}

/** Parse a spool file name, or undefined when the name is not one (temporary files, state, lock). */
export function parseSpoolName(name: string): SpoolName | undefined {
  let m = OTLP_RE.exec(name);
  if (m) return { kind: "otlp", receivedAt: m[1]!, seq: Number(m[2]) };
  m = LOCAL_RE.exec(name);
  if (m) return { kind: "local", sessionId: m[1]!, seq: Number(m[2]) };
  return undefined;
}

/** `spool.state`: the next number for a received request. */
export interface SpoolState {
  readonly nextSeq: number;
}

/** Encode `spool.state` (plain key/value text, as cursors are). */
export function encodeSpoolState(s: SpoolState): string {
  return encodeKv([["schema", SPOOL_STATE_SCHEMA], ["next_seq", s.nextSeq]]);
}

/** Decode `spool.state`; `Corrupt` naming `file` when it is not one. */
export function decodeSpoolState(text: string, file: string): SpoolState {
  const m = decodeKv(text, file);
  const schema = kvInt(m, "schema", file)!;
  if (schema !== SPOOL_STATE_SCHEMA) throw new StoreError("Corrupt", `${file}: unknown schema ${schema}`, { data: { file } });
  const nextSeq = kvInt(m, "next_seq", file)!;
  if (nextSeq < 1) throw new StoreError("Corrupt", `${file}: next_seq must be at least 1`, { data: { file } });
  return { nextSeq };
}

/** One file in the spool, in sequence order. */
export interface SpoolEntry {
  readonly name: string;
  readonly path: string;
  readonly parsed: SpoolName;
}

/** The spool's files, received requests first in sequence order, then derived files by session and seq. */
export function listSpool(root: string): SpoolEntry[] {
  const dir = join(root, METRICS_DIR);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    if (errno(e) === "ENOENT") return [];
    throw new StoreError("Io", `${dir}: cannot list: ${(e as Error).message}`, { data: { file: dir }, cause: e });
  }
  const out: SpoolEntry[] = [];
  for (const name of names) {
    const parsed = parseSpoolName(name);
    if (parsed) out.push({ name, path: join(dir, name), parsed });
  }
  const key = (p: SpoolName) => (p.kind === "otlp" ? `0 ${padSeq(p.seq).padStart(12, "0")}` : `1 ${p.sessionId} ${padSeq(p.seq).padStart(12, "0")}`);
  return out.sort((a, b) => (key(a.parsed) < key(b.parsed) ? -1 : key(a.parsed) > key(b.parsed) ? 1 : 0));
}

/** Options of {@link spoolReceived}. */
export interface SpoolOptions {
  /** Called before every durable step (crash tests). */
  readonly onStep?: StepHook;
  /** The receive time; defaults to now. */
  readonly receivedAtNs?: bigint;
  /** How long to wait for `_metrics/.lock` (default 10 s). */
  readonly waitMs?: number;
}

/**
 * Put one received request into the spool: under `_metrics/.lock`, number it above both
 * `spool.state` and every number already on disk (so a crash between the file and the state never
 * reissues one), land `metrics-<received-at>-<seq>-otlp.pb` read-only with file and directory
 * fsynced, then save `spool.state`. When this resolves the request is durable; only then may the
 * receiver answer 200.
 */
export async function spoolReceived(root: string, request: Uint8Array, options: SpoolOptions = {}): Promise<{ name: string; seq: number }> {
  const dir = join(root, METRICS_DIR);
  mkdirSync(dir, { recursive: true });
  const lock = await acquireLock(dir, { waitMs: options.waitMs ?? 10_000 });
  try {
    const statePath = join(dir, "spool.state");
    let next = 1;
    if (existsSync(statePath)) next = decodeSpoolState(readFileSync(statePath, "utf8"), statePath).nextSeq;
    for (const e of listSpool(root)) if (e.parsed.kind === "otlp" && e.parsed.seq >= next) next = e.parsed.seq + 1;
    const name = otlpSpoolName(formatStamp(options.receivedAtNs ?? nowNs()), next);
    landNoReplace(dir, name, [request], options.onStep);
    replaceAtomic(statePath, dir, encodeSpoolState({ nextSeq: next + 1 }), options.onStep, "spool-state");
    return { name, seq: next };
  } finally {
    lock.release();
  }
}

/** Options of {@link forgetMetrics}. */
export interface ForgetMetricsOptions {
  /** Called before every durable step (crash tests). */
  readonly onStep?: StepHook;
  /** How long to wait for `_metrics/.lock` (default 10 s). */
  readonly waitMs?: number;
  /** fsync (default true). */
  readonly fsync?: boolean;
}

/**
 * Forget a session's derived metrics: under `_metrics/.lock`, delete every
 * `metrics-<session>-<seq>-local.pb`, then drop the session's line from `metrics.state`. Its receipts
 * live in the session directory and go with it. Requests received over OTLP are the agents' own and
 * are kept as they came (one request may carry the points of many sessions). Returns the files
 * deleted; running it again deletes nothing more.
 */
export async function forgetMetrics(root: string, sessionId: string, options: ForgetMetricsOptions = {}): Promise<string[]> {
  const dir = join(root, METRICS_DIR);
  if (!existsSync(dir)) return [];
  const sync = options.fsync ?? true;
  const lock = await acquireLock(dir, { waitMs: options.waitMs ?? 10_000 });
  try {
    const gone: string[] = [];
    for (const e of listSpool(root)) {
      if (e.parsed.kind !== "local" || e.parsed.sessionId !== sessionId) continue;
      try {
        unlinkSync(e.path);
      } catch (err) {
        if (errno(err) === "ENOENT") continue;
        throw new StoreError("Io", `${e.path}: cannot delete: ${(err as Error).message}`, { data: { file: e.path }, cause: err });
      }
      gone.push(e.path);
      options.onStep?.("forget:metrics-deleted");
    }
    if (gone.length > 0 && sync) fsyncDir(dir);
    const statePath = join(dir, "metrics.state");
    if (existsSync(statePath)) {
      const state = decodeMetricsState(readFileSync(statePath, "utf8"), statePath);
      if (state.sessions.has(sessionId)) {
        const sessions = new Map(state.sessions);
        sessions.delete(sessionId);
        replaceAtomic(statePath, dir, encodeMetricsState({ sessions }), options.onStep, "forget:metrics-state", sync);
      }
    }
    return gone;
  } finally {
    lock.release();
  }
}

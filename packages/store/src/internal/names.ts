import { homedir } from "node:os";
import { join } from "node:path";
import { StoreError } from "./errors.js";

/** Landed file name: `<kind>-<collected-at>-<seq>.sd`. */
export const LANDED_RE = /^([a-z][a-z0-9_]*)-(\d{8}T\d{6}\.\d{9}Z)-(\d{6,})\.sd$/;
/** Cursor file name: `<kind>.cursor`. */
export const CURSOR_RE = /^([a-z][a-z0-9_]*)\.cursor$/;
const KIND_RE = /^[a-z][a-z0-9_]*$/;
const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._@+=-]*$/;

/** The two areas of a session directory that hold sources: child streams and workflow runs. */
export type Area = "streams" | "runs";

/**
 * The default storage root: `$LAKE_ROOT`, else `$XDG_DATA_HOME/lake`, else `~/.local/share/lake`.
 * @param env - the environment to read (default `process.env`).
 */
export function defaultRoot(env: Readonly<Record<string, string | undefined>> = process.env): string {
  if (env.LAKE_ROOT) return env.LAKE_ROOT;
  if (env.XDG_DATA_HOME) return join(env.XDG_DATA_HOME, "lake");
  return join(env.HOME || homedir(), ".local", "share", "lake");
}

/** Zero-pad a sequence number to at least six digits. */
export function padSeq(seq: number): string {
  return String(seq).padStart(6, "0");
}

/** `<kind>-<stamp>-<seq>.sd` */
export function landedName(kind: string, stamp: string, seq: number): string {
  return `${kind}-${stamp}-${padSeq(seq)}.sd`;
}

/** Parse a landed file name, or undefined when the name is not one. */
export function parseLandedName(name: string): { kind: string; stamp: string; seq: number } | undefined {
  const m = LANDED_RE.exec(name);
  if (!m) return undefined;
  return { kind: m[1]!, stamp: m[2]!, seq: Number(m[3]!) };
}

/** Throw InvalidArgument unless `v` is a usable session / stream / run id (one path segment, no leading `_` or `.`). */
export function checkId(what: string, v: string): void {
  if (!ID_RE.test(v) || v.length > 200) throw new StoreError("InvalidArgument", `invalid ${what} ${JSON.stringify(v)}: must be one path segment of [A-Za-z0-9._@+=-] not starting with . or _`, { data: { [what]: v } });
}

/** Throw InvalidArgument unless `v` is a usable kind (`[a-z][a-z0-9_]*`; no hyphen, so it never shares a landed file's prefix). */
export function checkKind(v: string): void {
  if (!KIND_RE.test(v)) throw new StoreError("InvalidArgument", `invalid kind ${JSON.stringify(v)}: must match [a-z][a-z0-9_]*`, { data: { kind: v } });
}

const epochNs0 = BigInt(Date.now()) * 1_000_000n;
const hr0 = process.hrtime.bigint();
let lastNs = 0n;

/** Nanoseconds since the epoch: the wall clock at load plus the monotonic clock since, strictly increasing in a process. */
export function nowNs(): bigint {
  let ns = epochNs0 + (process.hrtime.bigint() - hr0);
  if (ns <= lastNs) ns = lastNs + 1n;
  lastNs = ns;
  return ns;
}

/** Format a UTC instant as a pass stamp: `20260831T091204.481523000Z`. */
export function formatStamp(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const iso = new Date(ms).toISOString(); // 2026-08-31T09:12:04.481Z
  const frac = String(ns % 1_000_000_000n).padStart(9, "0");
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}.${frac}Z`;
}

/** Format an instant as ISO 8601 with microseconds (`2026-09-06T15:02:49.496762Z`), as cursors carry it. */
export function isoMicros(ns: bigint): string {
  const iso = new Date(Number(ns / 1_000_000n)).toISOString();
  return `${iso.slice(0, 19)}.${String((ns % 1_000_000_000n) / 1000n).padStart(6, "0")}Z`;
}

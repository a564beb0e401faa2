// `…/session=<id>/_SEALED`: the marker that a session directory is done. Written create-only by
// whoever seals it (the collector's push, or `lake-maint seal`); nothing is ever added to a sealed
// directory — a later push continues in the next `session=<id>.N` directory.
import { canonicalBytes, Fields, jsonObject } from "./json.js";

/** A `_SEALED` marker. */
export interface SealedMarker {
  /** When it was sealed (the sealer's clock). */
  readonly sealed_at: string;
  /** The segments of the directory: exactly seg-000000 … seg-(segments-1). */
  readonly segments: number;
  /** Rows in those segments. */
  readonly rows: number;
  /** `lake-maint` when `lake-maint seal` wrote it; absent when the collector did. */
  readonly sealed_by?: string;
}

/** The bytes of a `_SEALED` marker (canonical JSON). */
export function encodeSealed(m: SealedMarker): Uint8Array {
  return canonicalBytes({ sealed_at: m.sealed_at, segments: m.segments, rows: m.rows, sealed_by: m.sealed_by });
}

/** Decode a `_SEALED` marker; Corrupt (naming `key`) when it is not one. */
export function decodeSealed(key: string, body: Uint8Array): SealedMarker {
  const f: Fields = new Fields(key, jsonObject(key, body));
  const sealedBy = f.optStr("sealed_by");
  const m = { sealed_at: f.time("sealed_at"), segments: f.int("segments"), rows: f.int("rows") };
  return sealedBy === undefined ? m : { ...m, sealed_by: sealedBy };
}

/**
 * The `session=` label of a session's `part`-th directory: part 1 is `<id>`, part N > 1 is `<id>.N`
 * (a session that grows after its directory was sealed continues in the next part).
 */
export function sessionLabel(sessionId: string, part: number): string {
  return part <= 1 ? sessionId : `${sessionId}.${part}`;
}

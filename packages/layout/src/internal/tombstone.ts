// A tombstone, `tombstones/<session_id>.json`: the session was forgotten in this fleet
// (`lake-maint forget`), every object of it deleted; a collector's push of it is refused.
import { LayoutError } from "./errors.js";
import { PREFIXES, parseKey, tombstoneKey, validatePartitionValue } from "./keys.js";
import type { ObjectStore } from "./types.js";

/** Format version of a tombstone. */
export const TOMBSTONE_FORMAT = 1;

/** `tombstones/<session_id>.json`: which session, when, and by whom it was forgotten. No content of the session. */
export interface Tombstone {
  readonly format: 1;
  readonly session_id: string;
  /** ISO time the removal began. */
  readonly forgotten_at: string;
  /** Who wrote it (`lake-maint@<host>:<pid>:…`). */
  readonly by: string;
}

/** Encode a tombstone: keys sorted, no whitespace, one `\n`. */
export function encodeTombstone(t: Tombstone): Uint8Array {
  validatePartitionValue("session", t.session_id);
  if (Number.isNaN(Date.parse(t.forgotten_at))) throw new LayoutError("InvalidKey", `tombstone of ${t.session_id}: forgotten_at ${JSON.stringify(t.forgotten_at)} is not an ISO time`, { data: { key: tombstoneKey(t.session_id) } });
  return new TextEncoder().encode(JSON.stringify({ by: t.by, forgotten_at: t.forgotten_at, format: TOMBSTONE_FORMAT, session_id: t.session_id }) + "\n");
}

/** Decode a tombstone strictly (exact fields, format 1, its key's session); throws LayoutError `Corrupt` naming `key`. */
export function decodeTombstone(bytes: Uint8Array, key: string): Tombstone {
  const bad = (why: string): never => {
    throw new LayoutError("Corrupt", `${key}: not a tombstone (${why})`, { data: { key } });
  };
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (e) {
    return bad(e instanceof Error ? e.message : String(e));
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return bad("not a JSON object");
  const o = v as Record<string, unknown>;
  const fields = ["by", "forgotten_at", "format", "session_id"];
  for (const k of Object.keys(o)) if (!fields.includes(k)) bad(`unknown field ${k}`);
  if (o.format !== TOMBSTONE_FORMAT) bad(`format ${JSON.stringify(o.format)}, expected ${TOMBSTONE_FORMAT}`);
  if (typeof o.session_id !== "string") bad("session_id must be a string");
  if (typeof o.forgotten_at !== "string" || Number.isNaN(Date.parse(o.forgotten_at))) bad("forgotten_at must be an ISO time");
  if (typeof o.by !== "string") bad("by must be a string");
  const k = parseKey(key);
  if (k?.kind === "tombstone" && k.session !== o.session_id) bad(`session_id ${JSON.stringify(o.session_id)} is not its key's ${k.session}`);
  return { format: 1, session_id: o.session_id as string, forgotten_at: o.forgotten_at as string, by: o.by as string };
}

/** Every session id with a tombstone in the store (one listing). */
export async function listTombstones(store: ObjectStore): Promise<Set<string>> {
  const out = new Set<string>();
  for await (const o of store.listAll(PREFIXES.tombstones)) {
    const k = parseKey(o.key);
    if (k?.kind === "tombstone") out.add(k.session);
  }
  return out;
}

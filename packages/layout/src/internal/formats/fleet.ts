// `fleet.json`: the store's identity, written once (create-only) by `initFleet`.
import { validatePartitionValue } from "../keys.js";
import { canonicalBytes, Fields, jsonObject } from "./json.js";

/** fleet.json. */
export interface FleetManifest {
  readonly fleet_id: string;
  readonly created_at: string;
  readonly schema_version: number;
}

/** The fleet.json schema version this package writes. */
export const FLEET_SCHEMA_VERSION = 1;

/** The bytes of fleet.json (canonical JSON). */
export function encodeFleet(m: FleetManifest): Uint8Array {
  return canonicalBytes(m);
}

/** Decode fleet.json strictly; Corrupt (naming `key`) unless it has a valid fleet_id, an ISO created_at and a schema_version. */
export function decodeFleet(key: string, body: Uint8Array): FleetManifest {
  const f: Fields = new Fields(key, jsonObject(key, body));
  const id = f.str("fleet_id");
  try {
    validatePartitionValue("fleet_id", id);
  } catch (e) {
    f.fail((e as Error).message);
  }
  const v = f.int("schema_version");
  if (v < 1 || v > FLEET_SCHEMA_VERSION) f.fail(`schema_version ${v} is newer than this package (${FLEET_SCHEMA_VERSION})`);
  return { fleet_id: id, created_at: f.time("created_at"), schema_version: v };
}

// Opening stores and the ObjectStore interface are the `@lake/layout/store` entry.
export * from "./store.js";
export type { LocalStoreOptions } from "./internal/local.js";
export { classifyS3Error, defaultS3Client, unquoteEtag } from "./internal/s3.js";
export type { S3StoreOptions } from "./internal/s3.js";
export { validateObjectKey } from "./internal/util.js";

export {
  FLEET_KEY,
  PREFIXES,
  SNAPSHOT_LATEST_KEY,
  agentKey,
  claimEventKey,
  compactedMarkerKey,
  compactedPartKey,
  compactedUsageKey,
  compactedPrefix,
  digestKey,
  fleetClaimKey,
  intentKey,
  leaseKey,
  parseKey,
  quarantineKey,
  resourceKey,
  sealedKey,
  segmentKey,
  sessionPrefix,
  snapshotBlobKey,
  tombstoneKey,
  utcDate,
  validateDate,
  validatePartitionValue,
} from "./internal/keys.js";
export type { CompactedPartition, ParsedKey, SessionPartition } from "./internal/keys.js";
export { isUlid, seededUlid, ulid, ulidTime } from "./internal/ulid.js";

export { NONCE_HISTORY, casUpdate, decodeJsonObject, encodeJsonObject, readJson } from "./internal/cas.js";
export type { CasFields, CasOptions, CasOutcome, JsonObject } from "./internal/cas.js";

export { DEFAULT_SKEW_MS, MAX_TTL_SECONDS, acquireLease, isLive, listLeases, readLease, releaseLease, renewLease } from "./internal/lease.js";
export type {
  ClockOptions,
  LeaseAcquireResult,
  LeaseListEntry,
  LeaseRecord,
  LeaseReleaseResult,
  LeaseRenewResult,
  LeaseTarget,
} from "./internal/lease.js";

export { clearIntent, declareIntent, heartbeat, leaveRoster, listIntents, listRoster } from "./internal/roster.js";
export type { IntentItem, IntentRecord, RosterEntry } from "./internal/roster.js";

export {
  FLEET_SCHEMA_VERSION,
  initFleet,
  publishSnapshot,
  readFleet,
  readSnapshotPointer,
  syncSnapshotCache,
} from "./internal/snapshot.js";
export type { FleetManifest, SnapshotPointer } from "./internal/snapshot.js";

export { TOMBSTONE_FORMAT, decodeTombstone, encodeTombstone, listTombstones } from "./internal/tombstone.js";
export type { Tombstone } from "./internal/tombstone.js";

export {
  MAX_CLAIM_FIELD,
  MAX_CLAIM_TEXT,
  checkClaimEvent,
  decodeClaimEvent,
  decodeFleetClaim,
  derivedClaimId,
  encodeClaimEvent,
  encodeFleetClaim,
  normalizeText,
} from "./internal/formats/claims.js";
export type { ClaimEvent, FleetClaim } from "./internal/formats/claims.js";

// Opening stores and the ObjectStore interface are the `@lake/layout/store` entry.
export * from "./store.js";
export type { LocalStoreOptions } from "./internal/local.js";
export { classifyS3Error, defaultS3Client, unquoteEtag } from "./internal/s3.js";
export type { S3StoreOptions } from "./internal/s3.js";
export { validateObjectKey } from "./internal/util.js";

// The key layout and every fleet object's encoder / decoder are the `@lake/layout/formats` entry.
export * from "./formats.js";
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
export type { IntentRecord, RosterEntry } from "./internal/roster.js";

export { initFleet, publishSnapshot, readFleet, readSnapshotPointer, syncSnapshotCache } from "./internal/snapshot.js";

export { listTombstones } from "./internal/tombstone.js";

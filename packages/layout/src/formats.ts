// `@lake/layout/formats`: the key layout and the one encoder / strict decoder of every fleet object
// (fleet.json, _SEALED, _COMPACTED, digest.json, snapshot pointer and blob schema, quarantine,
// claims, leases, roster, intents), without the stores, CAS, leases and S3 — light enough for a
// reader's start-up. Everything here is also exported from the package root.
export { LayoutError, isLayoutError } from "./internal/errors.js";
export type { LayoutErrorCode, LayoutErrorData, LayoutErrorFacts } from "./internal/errors.js";
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
  segmentUsageKey,
  sessionPrefix,
  snapshotBlobKey,
  tombstoneKey,
  utcDate,
  validateDate,
  validatePartitionValue,
} from "./internal/keys.js";
export type { CompactedPartition, ParsedKey, SessionPartition } from "./internal/keys.js";
export { canonicalBytes, canonicalJson } from "./internal/formats/json.js";
export { FLEET_SCHEMA_VERSION, decodeFleet, encodeFleet } from "./internal/formats/fleet.js";
export type { FleetManifest } from "./internal/formats/fleet.js";
export { decodeSealed, encodeSealed, sessionLabel } from "./internal/formats/sealed.js";
export type { SealedMarker } from "./internal/formats/sealed.js";
export { COMPACTED_FORMAT, compactedValue, compactionGen, decodeCompacted, encodeCompacted } from "./internal/formats/compacted.js";
export type { CompactedMarker, CompactedPart, CompactedSession, CompactedUsage, StoredFile } from "./internal/formats/compacted.js";
export { DIGEST_VERSION, decodeDigest, encodeDigest } from "./internal/formats/digest.js";
export type { Digest, DigestCommand, DigestFile, DigestThresholds, DigestTokens, FrictionSignal } from "./internal/formats/digest.js";
export { decodeQuarantine, encodeQuarantine } from "./internal/formats/quarantine.js";
export type { QuarantineRecord } from "./internal/formats/quarantine.js";
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
export { SNAPSHOT_CLAIM_COLUMNS, SNAPSHOT_DDL, SNAPSHOT_SCHEMA_VERSION, decodeSnapshotMeta, decodeSnapshotPointer } from "./internal/formats/snapshot.js";
export type { SnapshotPointer } from "./internal/formats/snapshot.js";
export { decodeIntentRecord, decodeLease, decodeRosterEntry } from "./internal/formats/live.js";
export type { IntentItem, IntentObject, LeaseObject, RosterObject } from "./internal/formats/live.js";
export { TOMBSTONE_FORMAT, decodeTombstone, encodeTombstone } from "./internal/tombstone.js";
export type { Tombstone } from "./internal/tombstone.js";

/**
 * @lake/store/lock — the one lock of lake: an O_EXCL lock file holding pid, host, boot id, process
 * start time and a random token; a provably dead holder's lock is broken under a breakers' guard,
 * only while it still holds the same dead token. A subpath of its own so a short-lived process
 * (the collector's hook) takes it without loading the rest of the store.
 */
export { acquireLock, lockHolder } from "./internal/lock.js";
export type { LockHandle, LockHolder } from "./internal/lock.js";
export { StoreError, isStoreError } from "./internal/errors.js";
export type { StoreErrorCode, StoreErrorData } from "./internal/errors.js";

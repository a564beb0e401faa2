// @lake/durable: the one implementation of durable local files every lake package uses.
export { DirSync } from "./internal/dirsync.js";
export type { DirSyncOptions } from "./internal/dirsync.js";
export { acquireDirLease, decodeLeaseOwner, dirLeaseOwner, encodeLeaseOwner, LEASE_OWNER_FILE, moveDir } from "./internal/dir.js";
export type { DirLeaseBusy, DirLeaseHandle, DirLeaseOptions, LeaseOwner, MoveOptions } from "./internal/dir.js";
export { errno } from "./internal/errno.js";
export { DIR_FSYNC_TOLERATED, fsyncDir, fsyncDirAsync, fsyncFile } from "./internal/fsync.js";
export { installFrom, installNoReplace, linkUnsupported, replaceFrom, tempPathFor, TEMP_PREFIX, writeAtomic } from "./internal/files.js";
export type { FileData, InstallMode, InstallOptions, InstallResult, WriteOptions } from "./internal/files.js";
export { acquireLock, decodeHolder, EMPTY_LOCK_STALE_MS, encodeHolder, holderLiveness, lockHolder, processAlive, tryLock } from "./internal/lock.js";
export type { Liveness, LockBusy, LockHandle, LockHolder, LockOptions } from "./internal/lock.js";
export { randomBytes, randomHex } from "./internal/random.js";
export { removeAbandoned, scratchDir } from "./internal/scratch.js";
export type { ScratchDir, ScratchOptions } from "./internal/scratch.js";
export { crashNow, envStepHook } from "./internal/step.js";
export type { StepHook } from "./internal/step.js";

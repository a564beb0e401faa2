// fsync of a file and of a directory: the one error policy.
//
// A file's fsync failing is always an error: the data may not be on disk (Linux may even have
// dropped the dirty pages, so a retry would lie). A directory's fsync makes a create, rename,
// link or unlink in it durable; some file systems cannot do it and say so:
//   EINVAL            the file system has no fsync for directories (some FUSE and network file
//                     systems, e.g. older CIFS and sshfs)
//   EISDIR, EPERM     a directory cannot be opened or synced as a file (Windows: NTFS journals
//                     its metadata, so the rename is durable once MoveFileEx returns)
//   ENOTSUP, EOPNOTSUPP  the same refusal, spelled by other FUSE back ends
// These refusals are tolerated (the operation stays atomic, only its durability across a power
// cut is the file system's own); every other error (EIO, ENOSPC, EROFS, …) throws.
import { closeSync, fsyncSync, openSync, promises as fsp } from "node:fs";
import { errno } from "./errno.js";

/** The errnos a directory fsync may fail with on a file system that cannot sync directories. */
export const DIR_FSYNC_TOLERATED: readonly string[] = ["EINVAL", "EISDIR", "EPERM", "ENOTSUP", "EOPNOTSUPP"];

/** fsync a file (an open descriptor, or a path opened for it); any failure throws (the Node error, unchanged). */
export function fsyncFile(file: number | string): void {
  if (typeof file === "number") {
    fsyncSync(file);
    return;
  }
  const fd = openSync(file, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** fsync a directory so a create / rename / link / unlink in it is durable (policy above). */
export function fsyncDir(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, "r");
  } catch (e) {
    if (DIR_FSYNC_TOLERATED.includes(errno(e) ?? "")) return;
    throw e;
  }
  try {
    fsyncSync(fd);
  } catch (e) {
    if (!DIR_FSYNC_TOLERATED.includes(errno(e) ?? "")) throw e;
  } finally {
    closeSync(fd);
  }
}

/**
 * {@link fsyncDir} on the thread pool, same policy: for a caller with other work in flight (an
 * object store's uploads), whose directory fsyncs then overlap instead of queueing on its thread.
 */
export async function fsyncDirAsync(dir: string): Promise<void> {
  let h: fsp.FileHandle;
  try {
    h = await fsp.open(dir, "r");
  } catch (e) {
    if (DIR_FSYNC_TOLERATED.includes(errno(e) ?? "")) return;
    throw e;
  }
  try {
    await h.sync();
  } catch (e) {
    if (!DIR_FSYNC_TOLERATED.includes(errno(e) ?? "")) throw e;
  } finally {
    await h.close();
  }
}

import { createHash } from "node:crypto";
import { chmod, mkdir, open, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { isWalAddress } from "./addr.js";
import { ioError, WalError } from "./errors.js";
import { fsyncDir } from "./floor.js";

/** Magic of a member header. */
export const MEMBER_MAGIC = "WALM";
/** Magic at the very end of a sealed container. */
export const SEAL_MAGIC = "WALK";
/** Size of a member header. */
export const MEMBER_HEADER_BYTES = 64;
/** Size of one index entry. */
export const INDEX_ENTRY_BYTES = 32;
/** Container format version written and read by this build. */
export const ARCHIVE_FORMAT_VERSION = 1;

/** One member of a container, as located by the index or a header walk. */
export interface ArchiveMember {
  /** The WAL address (16 lowercase hex). */
  readonly addr: string;
  /** Offset of the member header in the container. */
  readonly offset: number;
  /** Payload length in bytes (the archived WAL file's size). */
  readonly payloadLen: number;
  /** The payload SHA-256 recorded in the header. */
  readonly sha256: Buffer;
}

/** The member list of a sealed container. */
export interface ArchiveListing {
  /** The container path. */
  readonly path: string;
  /** Members in container order. */
  readonly members: readonly ArchiveMember[];
  /** True when the index was damaged and the members were found by walking the headers. */
  readonly indexDamaged: boolean;
}

/** One member to write into a new container. */
export interface ArchiveInput {
  /** The WAL address. */
  readonly addr: string;
  /** The WAL file's verbatim bytes. */
  readonly bytes: Uint8Array;
}

/**
 * Write a new sealed container at `path`: members back to back from offset 0, then the index and
 * the trailer (`index_len`, `WALK`), then fsync of the file and its directory. The file is created
 * exclusively (0600, directory 0700) — a container is never modified or replaced. Addresses must
 * be distinct 16-hex strings.
 */
export async function writeArchive(path: string, members: readonly ArchiveInput[]): Promise<void> {
  const seen = new Set<string>();
  for (const m of members) {
    if (!isWalAddress(m.addr)) throw new WalError("InvalidArgument", `archive member address ${JSON.stringify(m.addr)} is not 16 lowercase hex`, { data: { file: path } });
    if (seen.has(m.addr)) throw new WalError("InvalidArgument", `archive member ${m.addr} appears twice`, { data: { file: path } });
    seen.add(m.addr);
  }
  const dir = dirname(path);
  let fh: FileHandle;
  try {
    const first = await mkdir(dir, { recursive: true, mode: 0o700 });
    if (first !== undefined) await chmod(dir, 0o700);
    fh = await open(path, "wx", 0o600);
  } catch (e) {
    throw ioError(path, "cannot create archive container", e);
  }
  try {
    await fh.chmod(0o600);
    let pos = 0;
    const index = Buffer.alloc(4 + INDEX_ENTRY_BYTES * members.length);
    index.writeUInt32LE(members.length, 0);
    let i = 0;
    for (const m of members) {
      const h = Buffer.alloc(MEMBER_HEADER_BYTES);
      h.write(MEMBER_MAGIC, 0, "latin1");
      h.writeUInt16LE(ARCHIVE_FORMAT_VERSION, 4);
      h.writeUInt16LE(0, 6);
      h.write(m.addr, 8, "latin1");
      h.writeBigUInt64LE(BigInt(m.bytes.length), 24);
      createHash("sha256").update(m.bytes).digest().copy(h, 32);
      await fh.write(h, 0, h.length, pos);
      await fh.write(m.bytes, 0, m.bytes.length, pos + MEMBER_HEADER_BYTES);
      const e = 4 + INDEX_ENTRY_BYTES * i++;
      index.write(m.addr, e, "latin1");
      index.writeBigUInt64LE(BigInt(pos), e + 16);
      index.writeBigUInt64LE(BigInt(m.bytes.length), e + 24);
      pos += MEMBER_HEADER_BYTES + m.bytes.length;
    }
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(index.length, 0);
    trailer.write(SEAL_MAGIC, 4, "latin1");
    await fh.write(Buffer.concat([index, trailer]), 0, index.length + 8, pos);
    await fh.sync();
  } catch (e) {
    throw ioError(path, "cannot write archive container", e);
  } finally {
    await fh.close();
  }
  fsyncDir(dir);
}

async function readAt(fh: FileHandle, pos: number, len: number): Promise<Buffer> {
  const b = Buffer.alloc(len);
  let done = 0;
  while (done < len) {
    const r = await fh.read(b, done, len - done, pos + done);
    if (r.bytesRead === 0) break;
    done += r.bytesRead;
  }
  return done === len ? b : b.subarray(0, done);
}

function parseHeader(h: Buffer, path: string, offset: number): ArchiveMember | null {
  if (h.length < MEMBER_HEADER_BYTES || h.toString("latin1", 0, 4) !== MEMBER_MAGIC) return null;
  const version = h.readUInt16LE(4);
  if (version !== ARCHIVE_FORMAT_VERSION) {
    throw new WalError("NewerWriter", `archive member format version ${version} is not supported`, { data: { file: path, offset } });
  }
  const addr = h.toString("latin1", 8, 24);
  const len = h.readBigUInt64LE(24);
  if (!isWalAddress(addr) || h.readUInt16LE(6) !== 0 || len > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  return { addr, offset, payloadLen: Number(len), sha256: Buffer.from(h.subarray(32, 64)) };
}

/** Check the last four bytes: true when the container is sealed. */
async function sealedSize(fh: FileHandle): Promise<{ sealed: boolean; size: number }> {
  const size = (await fh.stat()).size;
  if (size < 8) return { sealed: false, size };
  const tail = await readAt(fh, size - 4, 4);
  return { sealed: tail.toString("latin1") === SEAL_MAGIC, size };
}

async function listOpen(fh: FileHandle, path: string, size: number): Promise<ArchiveListing> {
  const trailer = await readAt(fh, size - 8, 8);
  const indexLen = trailer.readUInt32LE(0);
  const indexStart = size - 8 - indexLen;
  // Try the index.
  indexed: if (indexLen >= 4 && (indexLen - 4) % INDEX_ENTRY_BYTES === 0 && indexStart >= 0) {
    const index = await readAt(fh, indexStart, indexLen);
    const count = index.readUInt32LE(0);
    if (count !== (indexLen - 4) / INDEX_ENTRY_BYTES) break indexed;
    const members: ArchiveMember[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < count; i++) {
      const e = 4 + i * INDEX_ENTRY_BYTES;
      const addr = index.toString("latin1", e, e + 16);
      const off = index.readBigUInt64LE(e + 16);
      const len = index.readBigUInt64LE(e + 24);
      if (!isWalAddress(addr) || seen.has(addr)) break indexed;
      if (off + BigInt(MEMBER_HEADER_BYTES) + len > BigInt(indexStart)) break indexed;
      const m = parseHeader(await readAt(fh, Number(off), MEMBER_HEADER_BYTES), path, Number(off));
      if (m === null || m.addr !== addr || BigInt(m.payloadLen) !== len) break indexed;
      seen.add(addr);
      members.push(m);
    }
    return { path, members, indexDamaged: false };
  }
  // The index is damaged: walk the member headers from offset 0 until the first non-WALM magic.
  const members: ArchiveMember[] = [];
  const seen = new Set<string>();
  const end = size - 8;
  let pos = 0;
  while (pos + MEMBER_HEADER_BYTES <= end) {
    const m = parseHeader(await readAt(fh, pos, MEMBER_HEADER_BYTES), path, pos);
    if (m === null || pos + MEMBER_HEADER_BYTES + m.payloadLen > end) break;
    if (seen.has(m.addr)) throw new WalError("ArchiveCorrupt", `archive member ${m.addr} appears twice`, { data: { file: path, offset: pos } });
    seen.add(m.addr);
    members.push(m);
    pos += MEMBER_HEADER_BYTES + m.payloadLen;
  }
  return { path, members, indexDamaged: true };
}

async function openContainer<T>(path: string, fn: (fh: FileHandle) => Promise<T>): Promise<T> {
  let fh: FileHandle;
  try {
    fh = await open(path, "r");
  } catch (e) {
    throw ioError(path, "cannot open archive container", e);
  }
  try {
    return await fn(fh);
  } catch (e) {
    throw ioError(path, "cannot read archive container", e);
  } finally {
    await fh.close();
  }
}

/**
 * List a sealed container's members from its index, or by walking the member headers when the
 * index is damaged. An unsealed container (last four bytes not `WALK`) is refused (Unsealed) and
 * not read further.
 */
export function listArchive(path: string): Promise<ArchiveListing> {
  return openContainer(path, async (fh) => {
    const { sealed, size } = await sealedSize(fh);
    if (!sealed) throw new WalError("Unsealed", "archive container is not sealed (interrupted fold); not read", { data: { file: path } });
    return listOpen(fh, path, size);
  });
}

async function hashMember(fh: FileHandle, m: ArchiveMember, keep: boolean): Promise<{ ok: boolean; bytes: Buffer | null }> {
  const h = createHash("sha256");
  const start = m.offset + MEMBER_HEADER_BYTES;
  const out = keep ? Buffer.alloc(m.payloadLen) : null;
  const chunk = Buffer.allocUnsafe(Math.min(4 * 1024 * 1024, Math.max(1, m.payloadLen)));
  let done = 0;
  while (done < m.payloadLen) {
    const want = Math.min(chunk.length, m.payloadLen - done);
    const r = await fh.read(chunk, 0, want, start + done);
    if (r.bytesRead === 0) return { ok: false, bytes: null };
    h.update(chunk.subarray(0, r.bytesRead));
    if (out !== null) chunk.copy(out, done, 0, r.bytesRead);
    done += r.bytesRead;
  }
  return { ok: h.digest().equals(m.sha256), bytes: out };
}

/**
 * Read one member's payload (the archived WAL's bytes) after verifying its SHA-256. Refuses
 * Unsealed containers, NotFound for an address the container does not hold, and ArchiveCorrupt
 * for a payload whose digest does not verify.
 */
export function readArchiveMember(path: string, addr: string): Promise<Uint8Array> {
  return openContainer(path, async (fh) => {
    const { sealed, size } = await sealedSize(fh);
    if (!sealed) throw new WalError("Unsealed", "archive container is not sealed (interrupted fold); not read", { data: { file: path } });
    const listing = await listOpen(fh, path, size);
    const m = listing.members.find((x) => x.addr === addr);
    if (m === undefined) throw new WalError("NotFound", `archive container holds no member ${addr}`, { data: { file: path } });
    const r = await hashMember(fh, m, true);
    if (!r.ok || r.bytes === null) {
      throw new WalError("ArchiveCorrupt", `archive member ${addr} payload SHA-256 does not verify`, { data: { file: path, offset: m.offset } });
    }
    return new Uint8Array(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength);
  });
}

/** The JSON shape `lake-reader wal archive FILE --json` prints. */
export interface ArchiveInspection {
  /** False for an unsealed container, whose members are then not read (empty list). */
  readonly sealed: boolean;
  /** Each member with its payload digest checked. */
  readonly members: readonly { readonly addr: string; readonly payload_len: number; readonly sha256_ok: boolean }[];
}

/** List a container and verify every member's payload SHA-256 (streamed, never whole in memory). */
export function inspectArchive(path: string): Promise<ArchiveInspection> {
  return openContainer(path, async (fh) => {
    const { sealed, size } = await sealedSize(fh);
    if (!sealed) return { sealed: false, members: [] };
    const listing = await listOpen(fh, path, size);
    const members = [];
    for (const m of listing.members) {
      const r = await hashMember(fh, m, false);
      members.push({ addr: m.addr, payload_len: m.payloadLen, sha256_ok: r.ok });
    }
    return { sealed: true, members };
  });
}

import { createHash, randomBytes } from "node:crypto";
import * as nodeCrypto from "node:crypto";
import { WalError } from "./errors.js";

/** Size of every frame header: len u32, ver u8, seq u64, fence u64, digest 32 bytes. */
export const FRAME_HEADER_BYTES = 53;
/** Largest payload a frame may carry: 64 MiB. */
export const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;
/** Frame kind: one record as UTF-8 JSON. */
export const VER_RECORD = 1;
/** Frame kind: the 16-byte lineage id (len 16, seq 0, fence 0). */
export const VER_LINEAGE = 2;
/** Frame kind: a gated record, `{"requires": [...], "record": {...}}`. */
export const VER_GATED = 3;
/** Size of a whole lineage frame. */
export const LINEAGE_FRAME_BYTES = FRAME_HEADER_BYTES + 16;

const U64_MAX = 0xffffffffffffffffn;

/** One frame as raw fields. `payload` is the bytes after the header. */
export interface RawFrame {
  /** Frame kind (1 record, 2 lineage, 3 gated record). */
  readonly ver: number;
  /** Record sequence number (0 on lineage frames). */
  readonly seq: bigint;
  /** Writer's lease tenure stamp (forensic only). */
  readonly fence: bigint;
  /** The payload bytes. */
  readonly payload: Uint8Array;
}

type OneShotHash = (alg: string, data: Uint8Array, enc: "buffer") => Buffer;
const oneShot: OneShotHash | undefined = (nodeCrypto as unknown as { hash?: OneShotHash }).hash;
const SMALL = 16 * 1024;
const scratch = Buffer.allocUnsafe(17 + SMALL);

/**
 * SHA-256 over ver ‖ seq ‖ fence ‖ payload, given the 17 header bytes ver..fence (offsets 4..21 of
 * a frame) and the payload.
 */
export function digestParts(verSeqFence: Uint8Array, payload: Uint8Array): Buffer {
  if (oneShot !== undefined && payload.length <= SMALL) {
    scratch.set(verSeqFence, 0);
    scratch.set(payload, 17);
    return oneShot("sha256", scratch.subarray(0, 17 + payload.length), "buffer");
  }
  return createHash("sha256").update(verSeqFence).update(payload).digest();
}

/**
 * The frame digest: SHA-256 over ver ‖ seq (8 bytes LE) ‖ fence (8 bytes LE) ‖ payload. len is not
 * covered.
 */
export function frameDigest(ver: number, seq: bigint, fence: bigint, payload: Uint8Array): Buffer {
  const h = Buffer.allocUnsafe(17);
  h.writeUInt8(ver, 0);
  h.writeBigUInt64LE(seq, 1);
  h.writeBigUInt64LE(fence, 9);
  return digestParts(h, payload);
}

/**
 * Encode one frame: 53-byte header then payload. Refuses (TooLarge) a payload over 64 MiB and
 * (InvalidArgument) a ver outside 0..255 or seq/fence outside u64.
 */
export function encodeFrame(frame: RawFrame): Buffer {
  const { ver, seq, fence, payload } = frame;
  if (!Number.isInteger(ver) || ver < 0 || ver > 255) throw new WalError("InvalidArgument", `frame ver ${ver} is not a u8`);
  if (seq < 0n || seq > U64_MAX) throw new WalError("InvalidArgument", `frame seq ${seq} is not a u64`);
  if (fence < 0n || fence > U64_MAX) throw new WalError("InvalidArgument", `frame fence ${fence} is not a u64`);
  if (payload.length > MAX_PAYLOAD_BYTES) {
    throw new WalError("TooLarge", `payload of ${payload.length} bytes exceeds the 64 MiB frame limit`);
  }
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  out.writeUInt32LE(payload.length, 0);
  out.writeUInt8(ver, 4);
  out.writeBigUInt64LE(seq, 5);
  out.writeBigUInt64LE(fence, 13);
  digestParts(out.subarray(4, 21), payload).copy(out, 21);
  out.set(payload, FRAME_HEADER_BYTES);
  return out;
}

/** Mint a lineage id: 16 random bytes with the version-4 UUID bits set. */
export function mintLineageId(): Uint8Array {
  const b = randomBytes(16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  return new Uint8Array(b);
}

/** Render 16 lineage bytes in UUID form (8-4-4-4-12 lowercase hex). */
export function lineageIdToUuid(id: Uint8Array): string {
  if (id.length !== 16) throw new WalError("InvalidArgument", `lineage id has ${id.length} bytes, not 16`);
  const h = Buffer.from(id.buffer, id.byteOffset, 16).toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Parse a UUID-form lineage id back to its 16 bytes. */
export function uuidToLineageId(uuid: string): Uint8Array {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(uuid)) {
    throw new WalError("InvalidArgument", `${JSON.stringify(uuid)} is not a lowercase UUID`);
  }
  return new Uint8Array(Buffer.from(uuid.replace(/-/g, ""), "hex"));
}

/** Encode the 69-byte lineage frame (ver 2, seq 0, fence 0) for a 16-byte id. */
export function encodeLineageFrame(id: Uint8Array): Buffer {
  if (id.length !== 16) throw new WalError("InvalidArgument", `lineage id has ${id.length} bytes, not 16`);
  return encodeFrame({ ver: VER_LINEAGE, seq: 0n, fence: 0n, payload: id });
}

import { createRequire } from "node:module";
import { randomBytes } from "@lake/durable";
import { sha256 } from "./sha256.js";
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

type NodeCrypto = typeof import("node:crypto");
type OneShotHash = (alg: string, data: Uint8Array, enc: "buffer") => Buffer;
/** node:crypto, loaded when a digest first needs it (not at import: see {@link encodeFrame}). */
let native: { readonly crypto: NodeCrypto; readonly oneShot: OneShotHash | undefined } | undefined;
const SMALL = 16 * 1024;
let scratch: Buffer | undefined;

/**
 * SHA-256 over ver ‖ seq ‖ fence ‖ payload, given the 17 header bytes ver..fence (offsets 4..21 of
 * a frame) and the payload: node:crypto's.
 */
export function digestParts(verSeqFence: Uint8Array, payload: Uint8Array): Buffer {
  if (native === undefined) {
    const crypto = createRequire(import.meta.url)("node:crypto") as NodeCrypto;
    native = { crypto, oneShot: (crypto as unknown as { hash?: OneShotHash }).hash };
  }
  if (native.oneShot !== undefined && payload.length <= SMALL) {
    scratch ??= Buffer.allocUnsafe(17 + SMALL);
    scratch.set(verSeqFence, 0);
    scratch.set(payload, 17);
    return native.oneShot("sha256", scratch.subarray(0, 17 + payload.length), "buffer");
  }
  return native.crypto.createHash("sha256").update(verSeqFence).update(payload).digest();
}

/**
 * Largest payload {@link encodeFrame} digests in JavaScript while node:crypto is not loaded. Code
 * that has just started runs interpreted: sha256.ts then took about 1 ms for a 600-byte payload and
 * 3.5 ms for 4 KB, against 5–6.5 ms to load node:crypto and digest, so past some 6 KB loading it is
 * the cheaper (two thirds of Claude Code's tool results, the largest hook events, are under 4 KiB).
 */
export const JS_DIGEST_MAX = 4 * 1024;

/** The frame digest as {@link encodeFrame} computes it: in JavaScript (sha256.ts) for a small payload while node:crypto is not loaded, else {@link digestParts}. */
function encodeDigest(verSeqFence: Uint8Array, payload: Uint8Array): Uint8Array {
  if (native !== undefined || payload.length > JS_DIGEST_MAX) return digestParts(verSeqFence, payload);
  return sha256(verSeqFence, payload);
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
 * (InvalidArgument) a ver outside 0..255 or seq/fence outside u64. Until this module has loaded
 * node:crypto (a larger payload's digest, or a decode), a payload up to {@link JS_DIGEST_MAX} is
 * digested in JavaScript (sha256.ts): loading node:crypto is some 5 ms of a process's start, and
 * a program that appends one small record (lake-collector's hook) needs it for nothing else. The
 * same digest either way (test/frame.test.ts).
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
  out.set(encodeDigest(out.subarray(4, 21), payload), 21);
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

// ULIDs: 48-bit millisecond time + 80 random bits, Crockford base32, 26 characters; monotonic
// within one millisecond in one process, so they sort in creation order.
import { randomBytes } from "@lake/durable";
import { LayoutError } from "./errors.js";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const ULID_RE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

let lastTime = -1;
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
  let s = "";
  for (let i = 0; i < 10; i++) {
    s = ALPHABET[ms % 32]! + s;
    ms = Math.floor(ms / 32);
  }
  return s;
}

/**
 * A new ULID for time `now` (ms since the epoch, default Date.now()). Two calls in the same
 * millisecond return increasing values.
 */
export function ulid(now: number = Date.now()): string {
  if (!Number.isInteger(now) || now < 0 || now > 2 ** 48 - 1) throw new LayoutError("InvalidKey", `ulid time out of range: ${now}`);
  if (now === lastTime) {
    // increment the 80-bit random part (16 base32 digits)
    let i = 15;
    while (i >= 0 && lastRandom[i] === 31) lastRandom[i--] = 0;
    if (i < 0) throw new LayoutError("InvalidKey", "ulid random part overflowed within one millisecond");
    lastRandom[i]! += 1;
  } else {
    const bytes = randomBytes(16);
    lastRandom = Array.from(bytes, (b) => b & 31);
    lastTime = now;
  }
  return encodeTime(now) + lastRandom.map((d) => ALPHABET[d]).join("");
}

/**
 * A ULID whose 80 random bits are taken from `entropy` (its first 10 bytes), so the same time and
 * entropy always give the same id: an object named by it can be written again idempotently (a
 * re-sent quarantine record lands on the same key).
 */
export function seededUlid(now: number, entropy: Uint8Array): string {
  if (!Number.isInteger(now) || now < 0 || now > 2 ** 48 - 1) throw new LayoutError("InvalidKey", `ulid time out of range: ${now}`);
  if (entropy.length < 10) throw new LayoutError("InvalidKey", `ulid entropy needs 10 bytes, got ${entropy.length}`);
  let bits = 0n;
  for (let i = 0; i < 10; i++) bits = (bits << 8n) | BigInt(entropy[i]!);
  let rnd = "";
  for (let i = 0; i < 16; i++) {
    rnd = ALPHABET[Number(bits & 31n)]! + rnd;
    bits >>= 5n;
  }
  return encodeTime(now) + rnd;
}

/** True when `s` is a canonical (upper-case) ULID. */
export function isUlid(s: string): boolean {
  return ULID_RE.test(s);
}

/** The millisecond timestamp inside a ULID. */
export function ulidTime(id: string): number {
  if (!isUlid(id)) throw new LayoutError("InvalidKey", `not a ULID: ${JSON.stringify(id)}`, { data: { detail: "ulid" } });
  let ms = 0;
  for (const c of id.slice(0, 10)) ms = ms * 32 + ALPHABET.indexOf(c);
  return ms;
}

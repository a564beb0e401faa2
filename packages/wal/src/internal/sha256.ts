// SHA-256 (FIPS 180-4) in JavaScript, for the frame digests of small payloads in a process that has
// not loaded node:crypto (frame.ts, `encodeFrame`). Written out rather than taken from a library
// because what matters here is its first run, interpreted, in a process that has just started: this
// one loop with the rotations inline took 0.8–1.2 ms for a lineage frame and a 600-byte record,
// against 1.2–1.9 ms for @noble/hashes' SHA-256, five runs each in turns (and @noble/hashes 2.x asks
// for Node 20.19, 1.x loads node:crypto itself). test/frame.test.ts checks it against node:crypto at
// every size around the block boundaries.

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 of `head ‖ body`: the 32-byte digest. */
export function sha256(head: Uint8Array, body: Uint8Array): Buffer {
  const len = head.length + body.length;
  // The message, a 0x80 byte, zeros, and its length in bits as a big-endian u64: whole 64-byte blocks.
  const total = (len + 9 + 63) & ~63;
  const m = Buffer.alloc(total);
  m.set(head, 0);
  m.set(body, head.length);
  m[len] = 0x80;
  m.writeUInt32BE(Math.floor(len / 0x20000000), total - 8);
  m.writeUInt32BE((len * 8) >>> 0, total - 4);
  const w = new Uint32Array(64);
  let h0 = 0x6a09e667, h1 = 0xbb67ae85, h2 = 0x3c6ef372, h3 = 0xa54ff53a, h4 = 0x510e527f, h5 = 0x9b05688c, h6 = 0x1f83d9ab, h7 = 0x5be0cd19;
  for (let at = 0; at < total; at += 64) {
    for (let i = 0; i < 16; i++) w[i] = m.readUInt32BE(at + i * 4);
    for (let i = 16; i < 64; i++) {
      const x = w[i - 15]!;
      const y = w[i - 2]!;
      w[i] = (((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)) + w[i - 7]! + (((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10)) + w[i - 16]!;
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
    for (let i = 0; i < 64; i++) {
      const t1 = (h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const t2 = ((((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  const out = Buffer.allocUnsafe(32);
  [h0, h1, h2, h3, h4, h5, h6, h7].forEach((x, i) => out.writeUInt32BE(x >>> 0, i * 4));
  return out;
}

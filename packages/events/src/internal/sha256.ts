import { createRequire } from "node:module";

type NodeCrypto = typeof import("node:crypto");
let crypto: NodeCrypto | undefined;

/**
 * node:crypto, loaded by the first hash rather than with the module: loading it (and the streams it
 * loads) is some 5 ms of a process's start, which a process that hashes no record and writes no
 * rollup (a collect that finds nothing new) need not pay.
 */
export function nodeCrypto(): NodeCrypto {
  return (crypto ??= createRequire(import.meta.url)("node:crypto") as NodeCrypto);
}

/**
 * SHA-256 of a short string's UTF-8 bytes, for a hash taken per record (a record's content hash, a
 * usage key's). Node's one-shot `crypto.hash` (20.12 and later) costs about half of a Hash object
 * per call (0.85 against 1.8 µs for a 300-byte string here); older Nodes use one.
 */
export function sha256(text: string): Buffer {
  const c = nodeCrypto();
  return typeof c.hash === "function" ? c.hash("sha256", text, "buffer") : c.createHash("sha256").update(text).digest();
}

/** {@link sha256} as lowercase hex. */
export function sha256Hex(text: string): string {
  const c = nodeCrypto();
  return typeof c.hash === "function" ? c.hash("sha256", text, "hex") : c.createHash("sha256").update(text).digest("hex");
}

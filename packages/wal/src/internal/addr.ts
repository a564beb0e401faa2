import { WalError } from "./errors.js";

/** A session's bind triple (spec section 2.1). */
export interface SessionTriple {
  /** The project root as broca renders a path for display. */
  readonly project_root: string;
  /** The harness name. */
  readonly harness: string;
  /** The session name. */
  readonly session: string;
}

const SEP = "\u001f";
const OFFSET = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;

/**
 * The 16-lowercase-hex WAL address of a bind triple: FNV-1a 64 over the UTF-8 bytes of
 * `project_root U+001F harness U+001F session`. A field containing U+001F is refused
 * (InvalidArgument), so the encoding is unambiguous.
 *
 * @example walAddress({ project_root: "/tmp/p", harness: "runner", session: "s1" }) // "31a7840439280f40"
 */
export function walAddress(triple: SessionTriple): string {
  for (const k of ["project_root", "harness", "session"] as const) {
    const v = triple[k];
    if (typeof v !== "string") throw new WalError("InvalidArgument", `triple field ${k} is not a string`);
    if (v.includes(SEP)) throw new WalError("InvalidArgument", `triple field ${k} contains U+001F`);
  }
  const bytes = Buffer.from(sessionKey(triple), "utf8");
  let h = OFFSET;
  for (let i = 0; i < bytes.length; i++) {
    h = ((h ^ BigInt(bytes[i]!)) * PRIME) & MASK;
  }
  return h.toString(16).padStart(16, "0");
}

/** The U+001F-joined triple string (the key hashed into the address, and meta.session in run-index.db). */
export function sessionKey(triple: SessionTriple): string {
  return `${triple.project_root}${SEP}${triple.harness}${SEP}${triple.session}`;
}

/** True for a WAL file name: exactly 16 lowercase hex digits then `.wal`. */
export function isWalFileName(name: string): boolean {
  return /^[0-9a-f]{16}\.wal$/.test(name);
}

/** True for a 16-lowercase-hex address. */
export function isWalAddress(addr: string): boolean {
  return /^[0-9a-f]{16}$/.test(addr);
}

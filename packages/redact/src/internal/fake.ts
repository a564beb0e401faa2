// Deterministic fake secret material for inline rule examples and the labelled corpus. Secrets
// are assembled at run time from an alphabet and a seed, so the source never holds a string that
// looks like a live credential.

/** Character sets used to build fake secrets. */
export const ALPHABETS = {
  upper: "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
  lower: "abcdefghijklmnopqrstuvwxyz",
  digits: "0123456789",
  base32: "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
  alnum: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
  hex: "0123456789abcdef",
  base64: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
  base64url: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
  password: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!%^*_-+.",
} as const;

/** A small deterministic PRNG (mulberry32), returning floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` characters drawn from `alphabet` by `r` (or by a PRNG seeded with `r` when it is a number). */
export function fake(alphabet: string, n: number, r: (() => number) | number): string {
  const next = typeof r === "number" ? prng(r) : r;
  let s = "";
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(next() * alphabet.length)]!;
  return s;
}

/** Join parts (keeps prefixes and bodies apart in source). */
export function cat(...parts: string[]): string {
  return parts.join("");
}

/** base64url without padding. */
export function b64url(s: string): string {
  return Buffer.from(s, "utf8").toString("base64url");
}

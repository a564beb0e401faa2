// Canonical JSON: sorted keys, no insignificant whitespace, newline-terminated. Digests, markers and
// fleet claims are written with it so the same content gives the same bytes.

/** Serialise `v` with object keys sorted (recursively); undefined members are dropped. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(sortKeys(v));
}

/** canonicalJson as UTF-8 bytes with a trailing newline. */
export function canonicalBytes(v: unknown): Uint8Array {
  return Buffer.from(canonicalJson(v) + "\n", "utf8");
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = sortKeys(x);
    }
    return out;
  }
  return v;
}

/** Parse JSON bytes into an object, or return a reason string. */
export function parseObject(body: Uint8Array): Record<string, unknown> | string {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(body).toString("utf8"));
  } catch (e) {
    return `not JSON (${e instanceof Error ? e.message : String(e)})`;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "not a JSON object";
  return v as Record<string, unknown>;
}

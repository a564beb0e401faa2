import { StoreError } from "./errors.js";

/** Encode ordered key/value pairs as the plain text cursors and state files use: `key<spaces>value`, one per line. */
export function encodeKv(pairs: ReadonlyArray<readonly [string, string | number | undefined]>): string {
  let out = "";
  for (const [k, v] of pairs) {
    if (v === undefined) continue;
    const s = String(v);
    if (/[\n\r]/.test(s)) throw new StoreError("InvalidArgument", `value of ${k} holds a newline`, { data: { key: k } });
    out += `${k.padEnd(13)} ${s}\n`;
  }
  return out;
}

/** Decode key/value text; throws Corrupt naming `file` on a malformed line. Later duplicates win. */
export function decodeKv(text: string, file: string): Map<string, string> {
  const m = new Map<string, string>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") continue;
    const sp = line.search(/[ \t]/);
    if (sp <= 0) throw new StoreError("Corrupt", `${file}: line ${i + 1}: expected "key value"`, { data: { file, line: i + 1 } });
    m.set(line.slice(0, sp), line.slice(sp).replace(/^[ \t]+/, ""));
  }
  return m;
}

/** A required non-negative integer value of a decoded key/value map. */
export function kvInt(m: Map<string, string>, key: string, file: string, optional = false): number | undefined {
  const v = m.get(key);
  if (v === undefined || v === "") {
    if (optional) return undefined;
    throw new StoreError("Corrupt", `${file}: missing ${key}`, { data: { file, key } });
  }
  if (!/^\d+$/.test(v)) throw new StoreError("Corrupt", `${file}: ${key} is not a non-negative integer: ${JSON.stringify(v)}`, { data: { file, key } });
  return Number(v);
}

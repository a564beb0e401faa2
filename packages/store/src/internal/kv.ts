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
  let start = 0;
  let lineNo = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    lineNo++;
    if (end > start) {
      // key: up to the first space or tab; value: after the run of spaces and tabs that follows.
      let sp = start;
      while (sp < end) {
        const c = text.charCodeAt(sp);
        if (c === 32 || c === 9) break;
        sp++;
      }
      if (sp === start || sp === end) throw new StoreError("Corrupt", `${file}: line ${lineNo}: expected "key value"`, { data: { file, line: lineNo } });
      let v = sp + 1;
      while (v < end) {
        const c = text.charCodeAt(v);
        if (c !== 32 && c !== 9) break;
        v++;
      }
      m.set(text.slice(start, sp), text.slice(v, end));
    }
    start = end + 1;
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

// The detection view of a string: escapes decoded so that a secret inside JSON-escaped text
// (one or more levels of \" \\ \n \uXXXX), or broken by a backslash-newline continuation, reads
// as the plain secret. Every view character remembers the span of the original string it came
// from, so a match in the view masks exactly the original characters (whole escape sequences),
// and the original escaping around it stays valid.

/** Decoding passes applied at most (JSON inside JSON inside a string is three levels). */
const MAX_LEVELS = 3;

/** A decoded view of a string with its map back to original positions. */
export interface View {
  readonly text: string;
  /** Original start of each view character; `undefined` when the view is the original. */
  readonly start: Int32Array | undefined;
  /** Original end (exclusive) of each view character. */
  readonly end: Int32Array | undefined;
}

interface Pass {
  text: string;
  start: Int32Array;
  end: Int32Array;
}

const EMPTY = new Int32Array(0);
const SIMPLE_ESCAPES: Record<number, number> = { 34: 34, 92: 92, 47: 47, 39: 39, 110: 10, 114: 13, 116: 9, 98: 8, 102: 12 };

function hex4(s: string, i: number): number {
  let v = 0;
  for (let k = 0; k < 4; k++) {
    const c = s.charCodeAt(i + k);
    let d: number;
    if (c >= 48 && c <= 57) d = c - 48;
    else if (c >= 97 && c <= 102) d = c - 87;
    else if (c >= 65 && c <= 70) d = c - 55;
    else return -1;
    v = v * 16 + d;
  }
  return v;
}

/** Collects output code units and, when asked, the per-character map, in typed arrays (linear). */
class Builder {
  readonly out: Uint16Array;
  readonly start: Int32Array | undefined;
  readonly end: Int32Array | undefined;
  len = 0;
  constructor(n: number, wantMap: boolean) {
    this.out = new Uint16Array(n);
    this.start = wantMap ? new Int32Array(n) : undefined;
    this.end = wantMap ? new Int32Array(n) : undefined;
  }
  plain(s: string, from: number, to: number): void {
    const out = this.out;
    const st = this.start;
    const en = this.end;
    let len = this.len;
    if (st && en) for (let k = from; k < to; k++, len++) (out[len] = s.charCodeAt(k)), (st[len] = k), (en[len] = k + 1);
    else for (let k = from; k < to; k++, len++) out[len] = s.charCodeAt(k);
    this.len = len;
  }
  char(code: number, from: number, to: number): void {
    this.out[this.len] = code;
    if (this.start && this.end) (this.start[this.len] = from), (this.end[this.len] = to);
    this.len++;
  }
  done(): Pass {
    let text = "";
    for (let i = 0; i < this.len; i += 8192) text += String.fromCharCode.apply(null, this.out.subarray(i, Math.min(this.len, i + 8192)) as unknown as number[]);
    return { text, start: this.start ? this.start.subarray(0, this.len) : EMPTY, end: this.end ? this.end.subarray(0, this.len) : EMPTY };
  }
}

/** One level of JSON/JS string unescaping; unknown escapes are kept verbatim. Undefined when nothing changed. */
function unescapePass(s: string, wantMap: boolean): Pass | undefined {
  const n = s.length;
  let i = s.indexOf("\\");
  let b: Builder | undefined;
  let plainFrom = 0;
  while (i !== -1 && i + 1 < n) {
    const d = s.charCodeAt(i + 1);
    let v = SIMPLE_ESCAPES[d] ?? -1;
    let elen = 2;
    if (d === 117) v = i + 6 <= n ? hex4(s, i + 2) : -1, elen = 6;
    if (v >= 0) {
      b ??= new Builder(n, wantMap);
      b.plain(s, plainFrom, i);
      b.char(v, i, i + elen);
      plainFrom = i + elen;
      i = s.indexOf("\\", plainFrom);
    } else {
      i = s.indexOf("\\", i + 1);
    }
  }
  if (!b) return undefined;
  b.plain(s, plainFrom, n);
  return b.done();
}

/** Remove backslash-newline continuations (and the next line's indentation). Undefined when none. */
function continuationPass(s: string, wantMap: boolean): Pass | undefined {
  const n = s.length;
  let i = s.indexOf("\\");
  let b: Builder | undefined;
  let plainFrom = 0;
  while (i !== -1) {
    let j = i + 1;
    if (s.charCodeAt(j) === 13) j++;
    if (s.charCodeAt(j) === 10) {
      j++;
      while (j < n && (s.charCodeAt(j) === 32 || s.charCodeAt(j) === 9)) j++;
      b ??= new Builder(n, wantMap);
      b.plain(s, plainFrom, i);
      plainFrom = j;
      i = s.indexOf("\\", j);
    } else {
      i = s.indexOf("\\", i + 1);
    }
  }
  if (!b) return undefined;
  b.plain(s, plainFrom, n);
  return b.done();
}

/** True when building a view could change the text (the string holds a backslash). */
export function needsView(s: string): boolean {
  return s.indexOf("\\") !== -1;
}

/** The view text alone (no position map): the same decoding as {@link buildView}, cheaper. */
export function viewText(s: string): string {
  let text = s;
  for (let level = 0; level < MAX_LEVELS; level++) {
    const p = unescapePass(text, false);
    if (!p) break;
    text = p.text;
  }
  return continuationPass(text, false)?.text ?? text;
}

/** Build the detection view of `s`: up to three unescape levels, then continuation joining. */
export function buildView(s: string): View {
  let text = s;
  let start: Int32Array | undefined;
  let end: Int32Array | undefined;
  const apply = (p: Pass) => {
    if (start === undefined || end === undefined) {
      start = p.start;
      end = p.end;
    } else {
      const ns = new Int32Array(p.text.length);
      const ne = new Int32Array(p.text.length);
      for (let i = 0; i < p.text.length; i++) {
        ns[i] = start[p.start[i]!]!;
        ne[i] = end[p.end[i]! - 1]!;
      }
      start = ns;
      end = ne;
    }
    text = p.text;
  };
  for (let level = 0; level < MAX_LEVELS; level++) {
    const p = unescapePass(text, true);
    if (!p) break;
    apply(p);
  }
  const c = continuationPass(text, true);
  if (c) apply(c);
  return { text, start, end };
}

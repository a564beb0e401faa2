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

/** One level of JSON/JS string unescaping; unknown escapes are kept verbatim. Null when nothing changed. */
function unescapePass(s: string): Pass | undefined {
  const n = s.length;
  const out: number[] = [];
  const start = new Int32Array(n);
  const end = new Int32Array(n);
  let changed = false;
  let i = 0;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === 92 /* \ */ && i + 1 < n) {
      const d = s.charCodeAt(i + 1);
      let v = -1;
      let len = 2;
      switch (d) {
        case 34: v = 34; break; // \"
        case 92: v = 92; break; // \\
        case 47: v = 47; break; // \/
        case 39: v = 39; break; // \'
        case 110: v = 10; break; // \n
        case 114: v = 13; break; // \r
        case 116: v = 9; break; // \t
        case 98: v = 8; break; // \b
        case 102: v = 12; break; // \f
        case 117: // \uXXXX
          if (i + 6 <= n) {
            v = hex4(s, i + 2);
            len = 6;
          }
          break;
      }
      if (v >= 0) {
        start[out.length] = i;
        end[out.length] = i + len;
        out.push(v);
        i += len;
        changed = true;
        continue;
      }
    }
    start[out.length] = i;
    end[out.length] = i + 1;
    out.push(c);
    i++;
  }
  if (!changed) return undefined;
  return { text: codesToString(out), start: start.subarray(0, out.length), end: end.subarray(0, out.length) };
}

/** Remove backslash-newline continuations (and the next line's indentation). Null when none. */
function continuationPass(s: string): Pass | undefined {
  if (!/\\\r?\n/.test(s)) return undefined;
  const n = s.length;
  const out: number[] = [];
  const start = new Int32Array(n);
  const end = new Int32Array(n);
  let i = 0;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === 92) {
      let j = i + 1;
      if (s.charCodeAt(j) === 13) j++;
      if (s.charCodeAt(j) === 10) {
        j++;
        while (j < n && (s.charCodeAt(j) === 32 || s.charCodeAt(j) === 9)) j++;
        i = j;
        continue;
      }
    }
    start[out.length] = i;
    end[out.length] = i + 1;
    out.push(c);
    i++;
  }
  return { text: codesToString(out), start: start.subarray(0, out.length), end: end.subarray(0, out.length) };
}

function codesToString(codes: number[]): string {
  let s = "";
  for (let i = 0; i < codes.length; i += 8192) s += String.fromCharCode(...codes.slice(i, i + 8192));
  return s;
}

const ESCAPE = /\\(u[0-9a-fA-F]{4}|["\\/'nrtbf])/g;
const CONTINUATION = /\\\r?\n[ \t]*/g;
const SIMPLE: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", "'": "'", n: "\n", r: "\r", t: "\t", b: "\b", f: "\f" };

/**
 * The view text alone (no position map), computed with native regex replacement: the same
 * decoding as {@link buildView}, cheap enough to run on every string that holds a backslash.
 */
export function viewText(s: string): string {
  let text = s;
  for (let level = 0; level < MAX_LEVELS && text.indexOf("\\") !== -1; level++) {
    const next = text.replace(ESCAPE, (_m, e: string) => (e.length === 5 ? String.fromCharCode(parseInt(e.slice(1), 16)) : SIMPLE[e]!));
    if (next === text) break;
    text = next;
  }
  return text.indexOf("\\") === -1 ? text : text.replace(CONTINUATION, "");
}

/** True when building a view could change the text (the string holds a backslash). */
export function needsView(s: string): boolean {
  return s.indexOf("\\") !== -1;
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
  for (let level = 0; level < MAX_LEVELS && text.indexOf("\\") !== -1; level++) {
    const p = unescapePass(text);
    if (!p) break;
    apply(p);
  }
  const c = continuationPass(text);
  if (c) apply(c);
  return { text, start, end };
}

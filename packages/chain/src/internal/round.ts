// The round file: canonical JSON of the round with its commit digest, one trailing newline.
import { createHash } from "node:crypto";
import { canonicalJson, type Json } from "./canonical-json.js";
import { ChainError } from "./errors.js";
import type { Round, RoundBody } from "./types.js";

/** Matches a round file name: `r<6+ digits>-<12 hex>.sf`. */
const ROUND_NAME = /^r(\d{6,})-([0-9a-f]{12})\.sf$/;

/** The file name of round `round` with commit digest `commit`. */
export function roundFileName(round: number, commit: string): string {
  return `r${String(round).padStart(6, "0")}-${commit.slice(0, 12)}.sf`;
}

/** Parse a round file name; null when the name is not a round's. */
export function parseRoundFileName(name: string): { round: number; digest12: string } | null {
  const m = ROUND_NAME.exec(name);
  if (!m || m[1] === undefined || m[2] === undefined) return null;
  const round = Number(m[1]);
  if (!Number.isSafeInteger(round) || round < 1) return null;
  if (String(round).padStart(6, "0") !== m[1]) return null;
  return { round, digest12: m[2] };
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** The commit digest of a round body: SHA-256 hex over its canonical JSON (every field but `commit`). */
export function commitDigest(body: RoundBody): string {
  const { commit: _ignored, ...rest } = body as RoundBody & { commit?: string };
  return sha256Hex(canonicalJson(rest as unknown as Json));
}

/**
 * Where the `commit` member sits in a round's canonical text: keys sort `calls` < `commit` < `compactions`, and a
 * checked round holds both (no nested object of a round has either key, and a string's own quotes are escaped), so
 * the member is `,"commit":"<hex>"` right before the first `,"compactions":`. One serialisation then gives both the
 * file's text and the text its commit digest is over; -1 where that does not hold (the callers serialise twice).
 */
function commitSlot(text: string): number {
  const at = text.indexOf(',"compactions":');
  return at > 0 && text.startsWith('{"calls":') ? at : -1;
}

/** An encoded round: its bytes, commit digest and file name. */
export interface EncodedRound {
  round: Round;
  bytes: Buffer;
  commit: string;
  fileName: string;
}

/** Seal a round body: compute its commit digest and serialise it (canonical JSON + `\n`). */
export function encodeRound(body: RoundBody): EncodedRound {
  validateRound({ ...body, commit: "0".repeat(64) }, "(new round)");
  const { commit: _ignored, ...rest } = body as RoundBody & { commit?: string };
  const unsealed = canonicalJson(rest as unknown as Json);
  const commit = sha256Hex(unsealed);
  const round: Round = { ...body, commit };
  const at = commitSlot(unsealed);
  const text = at < 0 ? canonicalJson(round as unknown as Json) : `${unsealed.slice(0, at)},"commit":"${commit}"${unsealed.slice(at)}`;
  const bytes = Buffer.from(`${text}\n`, "utf8");
  return { round, bytes, commit, fileName: roundFileName(body.round, commit) };
}

/**
 * Decode and check a round file's bytes: valid JSON of the round shape, byte-identical to its canonical form, and a
 * commit digest that matches its content. Throws ChainError `Corrupt` naming `file` and the reason.
 */
export function decodeRound(bytes: Uint8Array, file: string): Round {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ChainError("Corrupt", `${file}: round is not valid JSON`, { data: { file }, cause: e });
  }
  const round = validateRound(value, file);
  const canonical = canonicalJson(round as unknown as Json);
  if (text.length !== canonical.length + 1 || !text.startsWith(canonical) || !text.endsWith("\n")) throw new ChainError("Corrupt", `${file}: round bytes are not in canonical form`, { data: { file } });
  // The commit digest is over the same text without its commit member, which ends where the compactions begin.
  const member = `,"commit":"${round.commit}"`;
  const at = commitSlot(canonical);
  const expected =
    at >= member.length && canonical.startsWith(member, at - member.length)
      ? createHash("sha256").update(canonical.slice(0, at - member.length)).update(canonical.slice(at)).digest("hex")
      : commitDigest(round);
  if (expected !== round.commit) {
    throw new ChainError("Corrupt", `${file}: commit digest mismatch (file says ${round.commit.slice(0, 12)}, content gives ${expected.slice(0, 12)})`, {
      data: { file, expected, actual: round.commit },
    });
  }
  return round;
}

// ---- shape validation -------------------------------------------------------------------------------------------

type Obj = Record<string, unknown>;

/**
 * Where a checked value sits (`calls[3]`, then a field's `.fragments[1]`): kept as its parts, made a string only for an
 * error. A round of 80,000 record addresses is checked without a string made for each.
 */
class Where {
  private base = "";
  private i = -1;
  set(base: string, i = -1): this {
    this.base = base;
    this.i = i;
    return this;
  }
  path(rest = ""): string {
    return `${this.base}${this.i >= 0 ? `[${this.i}]` : ""}${rest}`;
  }
}

function fail(file: string, path: string, what: string): never {
  throw new ChainError("Corrupt", `${file}: ${path}: ${what}`, { data: { file, path } });
}

function obj(v: unknown, file: string, w: Where, keys: readonly string[]): Obj {
  if (typeof v !== "object" || v === null || Array.isArray(v)) fail(file, w.path(), "expected an object");
  const o = v as Obj;
  for (const k in o) if (Object.prototype.hasOwnProperty.call(o, k) && !keys.includes(k)) fail(file, w.path(), `unexpected key ${JSON.stringify(k)}`);
  for (const k of keys) if (!(k in o)) fail(file, w.path(), `missing key ${JSON.stringify(k)}`);
  return o;
}

function isInt(v: unknown, min: number): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= min;
}

function int(v: unknown, file: string, w: Where, rest: string, min = 0): number {
  if (!isInt(v, min)) fail(file, w.path(rest), `expected an integer >= ${min}`);
  return v;
}

function str(v: unknown, file: string, w: Where, rest = ""): string {
  if (typeof v !== "string") fail(file, w.path(rest), "expected a string");
  return v;
}

function hex64(v: unknown, file: string, w: Where, rest = ""): string {
  const s = str(v, file, w, rest);
  if (!/^[0-9a-f]{64}$/.test(s)) fail(file, w.path(rest), "expected 64 lowercase hex digits");
  return s;
}

function arr(v: unknown, file: string, w: Where, rest = ""): unknown[] {
  if (!Array.isArray(v)) fail(file, w.path(rest), "expected an array");
  return v;
}

function ref(v: unknown, file: string, w: Where, rest: string): void {
  if (Array.isArray(v) && v.length === 2 && isInt(v[0], 1) && isInt(v[1], 0)) return;
  const a = arr(v, file, w, rest);
  if (a.length !== 2) fail(file, w.path(rest), "expected [seq, row]");
  int(a[0], file, w, `${rest}[0]`, 1);
  int(a[1], file, w, `${rest}[1]`);
}

function refs(v: unknown, file: string, w: Where, rest: string): void {
  const a = arr(v, file, w, rest);
  for (let j = 0; j < a.length; j++) {
    const r = a[j];
    if (!(Array.isArray(r) && r.length === 2 && isInt(r[0], 1) && isInt(r[1], 0))) ref(r, file, w, `${rest}[${j}]`);
  }
}

function refOrNull(v: unknown, file: string, w: Where, rest: string): void {
  if (v !== null) ref(v, file, w, rest);
}

function strOrNull(v: unknown, file: string, w: Where, rest: string): void {
  if (v !== null) str(v, file, w, rest);
}

const ROUND_KEYS = [
  "format", "version", "conversation", "round", "prev", "parser", "policy", "range", "files", "turns", "calls", "launches",
  "messages", "compactions", "tombstones", "commit",
] as const;

/** Check that `value` has exactly the round shape; returns it typed. Throws ChainError `Corrupt`. */
export function validateRound(value: unknown, file: string): Round {
  const w = new Where();
  const o = obj(value, file, w.set("round"), ROUND_KEYS);
  if (o.format !== "lake-round") fail(file, "format", `expected "lake-round", got ${JSON.stringify(o.format)}`);
  if (o.version !== 1) fail(file, "version", `unsupported round version ${JSON.stringify(o.version)}`);
  str(o.conversation, file, w.set("conversation"));
  int(o.round, file, w.set("round"), "", 1);
  if (o.prev !== null) hex64(o.prev, file, w.set("prev"));
  const parser = obj(o.parser, file, w.set("parser"), ["name", "version"]);
  str(parser.name, file, w, ".name");
  int(parser.version, file, w, ".version");
  const policy = obj(o.policy, file, w.set("policy"), ["id", "version"]);
  str(policy.id, file, w, ".id");
  int(policy.version, file, w, ".version");
  const range = obj(o.range, file, w.set("range"), ["from", "to"]);
  const from = int(range.from, file, w, ".from", 1);
  const to = int(range.to, file, w, ".to");
  if (to < from - 1) fail(file, "range", "to is below from - 1");
  arr(o.files, file, w.set("files")).forEach((f, i) => {
    const x = obj(f, file, w.set("files", i), ["seq", "stream", "kind", "sha256", "records"]);
    const seq = int(x.seq, file, w, ".seq", 1);
    if (seq < from || seq > to) fail(file, w.path(".seq"), `seq ${seq} outside range ${from}..${to}`);
    str(x.stream, file, w, ".stream");
    str(x.kind, file, w, ".kind");
    hex64(x.sha256, file, w, ".sha256");
    int(x.records, file, w, ".records");
  });
  arr(o.turns, file, w.set("turns")).forEach((t, i) => {
    const x = obj(t, file, w.set("turns", i), ["stream", "turn", "records"]);
    str(x.stream, file, w, ".stream");
    int(x.turn, file, w, ".turn");
    refs(x.records, file, w, ".records");
  });
  arr(o.calls, file, w.set("calls")).forEach((c, i) => {
    const x = obj(c, file, w.set("calls", i), ["id", "stream", "turn", "call", "result", "fragments"]);
    str(x.id, file, w, ".id");
    str(x.stream, file, w, ".stream");
    int(x.turn, file, w, ".turn");
    refOrNull(x.call, file, w, ".call");
    refOrNull(x.result, file, w, ".result");
    refs(x.fragments, file, w, ".fragments");
  });
  arr(o.launches, file, w.set("launches")).forEach((l, i) => {
    const x = obj(l, file, w.set("launches", i), ["child", "call", "at", "anchor"]);
    if (typeof x.anchor !== "boolean") fail(file, w.path(".anchor"), "expected a boolean");
    str(x.child, file, w, ".child");
    strOrNull(x.call, file, w, ".call");
    ref(x.at, file, w, ".at");
  });
  arr(o.messages, file, w.set("messages")).forEach((m, i) => {
    const x = obj(m, file, w.set("messages", i), ["type", "op", "stream", "turn", "at"]);
    if (x.type !== "steering" && x.type !== "queued") fail(file, w.path(".type"), "expected steering or queued");
    strOrNull(x.op, file, w, ".op");
    str(x.stream, file, w, ".stream");
    int(x.turn, file, w, ".turn");
    ref(x.at, file, w, ".at");
  });
  arr(o.compactions, file, w.set("compactions")).forEach((c, i) => {
    const x = obj(c, file, w.set("compactions", i), ["stream", "turn", "at"]);
    str(x.stream, file, w, ".stream");
    int(x.turn, file, w, ".turn");
    ref(x.at, file, w, ".at");
  });
  arr(o.tombstones, file, w.set("tombstones")).forEach((t, i) => {
    const x = obj(t, file, w.set("tombstones", i), ["seq", "rows"]);
    int(x.seq, file, w, ".seq", 1);
    int(x.rows, file, w, ".rows");
  });
  hex64(o.commit, file, w.set("commit"));
  return o as unknown as Round;
}

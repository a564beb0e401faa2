// The round file: canonical JSON of the round with its commit digest, one trailing newline.
import { createHash } from "node:crypto";
import { canonicalJson, type Json } from "./canonical-json.js";
import { ChainError } from "./errors.js";
import type { RefTuple, Round, RoundBody } from "./types.js";

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
  const commit = commitDigest(body);
  const round: Round = { ...body, commit };
  const bytes = Buffer.from(`${canonicalJson(round as unknown as Json)}\n`, "utf8");
  return { round, bytes, commit, fileName: roundFileName(body.round, commit) };
}

/**
 * Decode and check a round file's bytes: valid JSON of the round shape, byte-identical to its canonical form, and a
 * commit digest that matches its content. Throws ChainError `Corrupt` naming `file` and the reason.
 */
export function decodeRound(bytes: Uint8Array, file: string): Round {
  const text = Buffer.from(bytes).toString("utf8");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ChainError("Corrupt", `${file}: round is not valid JSON`, { data: { file }, cause: e });
  }
  const round = validateRound(value, file);
  const canonical = `${canonicalJson(round as unknown as Json)}\n`;
  if (canonical !== text) throw new ChainError("Corrupt", `${file}: round bytes are not in canonical form`, { data: { file } });
  const expected = commitDigest(round);
  if (expected !== round.commit) {
    throw new ChainError("Corrupt", `${file}: commit digest mismatch (file says ${round.commit.slice(0, 12)}, content gives ${expected.slice(0, 12)})`, {
      data: { file, expected, actual: round.commit },
    });
  }
  return round;
}

// ---- shape validation -------------------------------------------------------------------------------------------

type Obj = Record<string, unknown>;

function fail(file: string, path: string, what: string): never {
  throw new ChainError("Corrupt", `${file}: ${path}: ${what}`, { data: { file, path } });
}

function obj(v: unknown, file: string, path: string, keys: readonly string[]): Obj {
  if (typeof v !== "object" || v === null || Array.isArray(v)) fail(file, path, "expected an object");
  const o = v as Obj;
  for (const k of Object.keys(o)) if (!keys.includes(k)) fail(file, path, `unexpected key ${JSON.stringify(k)}`);
  for (const k of keys) if (!(k in o)) fail(file, path, `missing key ${JSON.stringify(k)}`);
  return o;
}

function int(v: unknown, file: string, path: string, min = 0): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min) fail(file, path, `expected an integer >= ${min}`);
  return v;
}

function str(v: unknown, file: string, path: string): string {
  if (typeof v !== "string") fail(file, path, "expected a string");
  return v;
}

function hex64(v: unknown, file: string, path: string): string {
  const s = str(v, file, path);
  if (!/^[0-9a-f]{64}$/.test(s)) fail(file, path, "expected 64 lowercase hex digits");
  return s;
}

function arr(v: unknown, file: string, path: string): unknown[] {
  if (!Array.isArray(v)) fail(file, path, "expected an array");
  return v;
}

function ref(v: unknown, file: string, path: string): RefTuple {
  const a = arr(v, file, path);
  if (a.length !== 2) fail(file, path, "expected [seq, row]");
  return [int(a[0], file, `${path}[0]`, 1), int(a[1], file, `${path}[1]`)];
}

function refOrNull(v: unknown, file: string, path: string): RefTuple | null {
  return v === null ? null : ref(v, file, path);
}

function strOrNull(v: unknown, file: string, path: string): string | null {
  return v === null ? null : str(v, file, path);
}

const ROUND_KEYS = [
  "format", "version", "conversation", "round", "prev", "parser", "policy", "range", "files", "turns", "calls", "launches",
  "messages", "compactions", "tombstones", "commit",
] as const;

/** Check that `value` has exactly the round shape; returns it typed. Throws ChainError `Corrupt`. */
export function validateRound(value: unknown, file: string): Round {
  const o = obj(value, file, "round", ROUND_KEYS);
  if (o.format !== "lake-round") fail(file, "format", `expected "lake-round", got ${JSON.stringify(o.format)}`);
  if (o.version !== 1) fail(file, "version", `unsupported round version ${JSON.stringify(o.version)}`);
  str(o.conversation, file, "conversation");
  int(o.round, file, "round", 1);
  if (o.prev !== null) hex64(o.prev, file, "prev");
  const parser = obj(o.parser, file, "parser", ["name", "version"]);
  str(parser.name, file, "parser.name");
  int(parser.version, file, "parser.version");
  const policy = obj(o.policy, file, "policy", ["id", "version"]);
  str(policy.id, file, "policy.id");
  int(policy.version, file, "policy.version");
  const range = obj(o.range, file, "range", ["from", "to"]);
  const from = int(range.from, file, "range.from", 1);
  const to = int(range.to, file, "range.to");
  if (to < from - 1) fail(file, "range", "to is below from - 1");
  arr(o.files, file, "files").forEach((f, i) => {
    const p = `files[${i}]`;
    const x = obj(f, file, p, ["seq", "stream", "kind", "sha256", "records"]);
    const seq = int(x.seq, file, `${p}.seq`, 1);
    if (seq < from || seq > to) fail(file, `${p}.seq`, `seq ${seq} outside range ${from}..${to}`);
    str(x.stream, file, `${p}.stream`);
    str(x.kind, file, `${p}.kind`);
    hex64(x.sha256, file, `${p}.sha256`);
    int(x.records, file, `${p}.records`);
  });
  arr(o.turns, file, "turns").forEach((t, i) => {
    const p = `turns[${i}]`;
    const x = obj(t, file, p, ["stream", "turn", "records"]);
    str(x.stream, file, `${p}.stream`);
    int(x.turn, file, `${p}.turn`);
    arr(x.records, file, `${p}.records`).forEach((r, j) => ref(r, file, `${p}.records[${j}]`));
  });
  arr(o.calls, file, "calls").forEach((c, i) => {
    const p = `calls[${i}]`;
    const x = obj(c, file, p, ["id", "stream", "turn", "call", "result", "fragments"]);
    str(x.id, file, `${p}.id`);
    str(x.stream, file, `${p}.stream`);
    int(x.turn, file, `${p}.turn`);
    refOrNull(x.call, file, `${p}.call`);
    refOrNull(x.result, file, `${p}.result`);
    arr(x.fragments, file, `${p}.fragments`).forEach((r, j) => ref(r, file, `${p}.fragments[${j}]`));
  });
  arr(o.launches, file, "launches").forEach((l, i) => {
    const p = `launches[${i}]`;
    const x = obj(l, file, p, ["child", "call", "at", "anchor"]);
    if (typeof x.anchor !== "boolean") fail(file, `${p}.anchor`, "expected a boolean");
    str(x.child, file, `${p}.child`);
    strOrNull(x.call, file, `${p}.call`);
    ref(x.at, file, `${p}.at`);
  });
  arr(o.messages, file, "messages").forEach((m, i) => {
    const p = `messages[${i}]`;
    const x = obj(m, file, p, ["type", "op", "stream", "turn", "at"]);
    if (x.type !== "steering" && x.type !== "queued") fail(file, `${p}.type`, "expected steering or queued");
    strOrNull(x.op, file, `${p}.op`);
    str(x.stream, file, `${p}.stream`);
    int(x.turn, file, `${p}.turn`);
    ref(x.at, file, `${p}.at`);
  });
  arr(o.compactions, file, "compactions").forEach((c, i) => {
    const p = `compactions[${i}]`;
    const x = obj(c, file, p, ["stream", "turn", "at"]);
    str(x.stream, file, `${p}.stream`);
    int(x.turn, file, `${p}.turn`);
    ref(x.at, file, `${p}.at`);
  });
  arr(o.tombstones, file, "tombstones").forEach((t, i) => {
    const p = `tombstones[${i}]`;
    const x = obj(t, file, p, ["seq", "rows"]);
    int(x.seq, file, `${p}.seq`, 1);
    int(x.rows, file, `${p}.rows`);
  });
  hex64(o.commit, file, "commit");
  return o as unknown as Round;
}

// The public engine surface: mask strings and JSON values, decide quarantine for records.
import { createHmac } from "node:crypto";
import { canonicalJson } from "@lake/canonical-json";
import { RedactError, isRedactError } from "./errors.js";
import { keyBytes, RedactKey } from "./key.js";
import { Engine, GENERIC_RULE_ID, maskFor, shortHash, wholeValueIsSecret } from "./engine.js";
import { defaultRules, type Rule } from "./rules.js";
import { QUARANTINE_TYPE } from "./quarantine-type.js";

/** A JSON value, as records are handled: plain objects, arrays, strings, finite numbers, booleans, null. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** One masked secret. Holds the rule and keyed hash only, never the secret. */
export interface Finding {
  /** Id of the rule that found the secret. */
  readonly rule: string;
  /** 8 hex of HMAC-SHA256(key, secret): the tag inside the mask. */
  readonly hash: string;
  /** Where in the value: object keys and array indexes from the root (empty for a bare string). */
  readonly path: readonly (string | number)[];
  /** True when the secret was in an object key rather than a value. */
  readonly inKey: boolean;
  /** Start of the secret in the input string (UTF-16 code units). */
  readonly start: number;
  /** End (exclusive) of the secret in the input string. */
  readonly end: number;
}

/** The outcome of masking a string or a value. */
export interface RedactResult<T> {
  /** The masked string or value (a new value; the input is not modified). */
  readonly value: T;
  /** Ids of the rules that fired, sorted, each once. */
  readonly rules: readonly string[];
  /** The keyed hashes of the masked secrets, in finding order, each once. */
  readonly hashes: readonly string[];
  /** Every masked secret, in walk order. */
  readonly findings: readonly Finding[];
}

/** A record withheld whole: no part of its value is kept. */
export interface QuarantineRecord {
  readonly status: "quarantined";
  /** Rule ids (and `limit:*` conditions) that caused quarantine, plus every other rule that fired, sorted. */
  readonly rules_fired: readonly string[];
  /** 64 hex HMAC-SHA256(key, "lake-redact-record\0" + canonical JSON of the record): correlates duplicates. */
  readonly hash: string;
}

/** A record that passed: its masked value. */
export interface RedactedRecord<T = JsonValue> extends RedactResult<T> {
  readonly status: "ok";
}

/** Options of {@link createRedactor}. */
export interface RedactorOptions {
  /** The masking key ({@link loadOrCreateKey} or {@link memoryKey}). */
  readonly key: RedactKey;
  /** The rule table, in priority order (default: {@link defaultRules}). */
  readonly rules?: readonly Rule[];
  /**
   * Rule ids whose finding withholds a whole record in {@link Redactor.redactRecord}
   * (default `["private-key"]`; `[]` masks private keys like any other secret).
   */
  readonly quarantineRules?: readonly string[];
  /** Deepest nesting walked; deeper (or cyclic) values are `TooDeep` / quarantined (default 256). */
  readonly maxDepth?: number;
  /** Mask secrets inside object keys too (default true). */
  readonly redactKeys?: boolean;
  /** Mask a whole string value stored under a secret-named key (`"password": "…"`) when it looks random (default true). */
  readonly secretKeyNames?: boolean;
}

/** The masking engine for one key and rule table: `rules` and `quarantineRules` are the ones in use (the defaults filled in). */
export interface Redactor extends Required<Pick<RedactorOptions, "rules" | "quarantineRules">> {
  /** Mask every secret in one string. */
  redactString(s: string): RedactResult<string>;
  /**
   * Mask every string of a JSON value (object values, array items and, unless `redactKeys` is
   * false, object keys), at any depth. Throws `InvalidValue` for non-JSON input and `TooDeep`
   * past `maxDepth`.
   */
  redactValue<T extends JsonValue>(v: T): RedactResult<T>;
  /**
   * The collector's entry point for a canonical record: the masked record, or a quarantine
   * record when a quarantine rule fired or the record nests past `maxDepth`.
   */
  redactRecord<T extends JsonValue>(record: T): RedactedRecord<T> | QuarantineRecord;
  /** Build the quarantine record of a record withheld for `rulesFired` (for callers that decide themselves). */
  quarantineRecord(record: unknown, rulesFired: readonly string[]): QuarantineRecord;
  /** 8 hex keyed hash of a string, as it appears in masks (to correlate a known secret). */
  hash(secret: string): string;
}

/** Longest object key remembered as holding no secret, and how many are remembered at most. */
const CLEAN_KEY_MAX_LENGTH = 128;
const CLEAN_KEYS_MAX = 4096;

interface Acc {
  findings: Finding[];
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Create a redactor. Rules are compiled once; the redactor is cheap to call per record.
 *
 * @throws RedactError `InvalidRule` for a malformed rule table, `InvalidOption` for bad options.
 */
export function createRedactor(options: RedactorOptions): Redactor {
  if (!(options?.key instanceof RedactKey)) {
    // Accept keys from another copy of the package only through keyBytes (same module instance).
    throw new RedactError("InvalidOption", "createRedactor: `key` must come from loadOrCreateKey() or memoryKey()");
  }
  const key = options.key;
  keyBytes(key);
  const rules = options.rules ?? defaultRules;
  const engine = new Engine(rules);
  const ids = new Set(rules.map((r) => r.id));
  const quarantineRules = [...(options.quarantineRules ?? (ids.has("private-key") ? ["private-key"] : []))];
  for (const q of quarantineRules) {
    if (!ids.has(q)) throw new RedactError("InvalidOption", `createRedactor: quarantine rule "${q}" is not in the rule table`, { data: { rule: q } });
  }
  const maxDepth = options.maxDepth ?? 256;
  if (!Number.isInteger(maxDepth) || maxDepth < 1 || maxDepth > 10_000) {
    throw new RedactError("InvalidOption", `createRedactor: maxDepth must be an integer in 1..10000, got ${String(maxDepth)}`);
  }
  const redactKeys = options.redactKeys ?? true;
  const secretKeyNames = options.secretKeyNames ?? (ids.has(GENERIC_RULE_ID));
  const qset = new Set(quarantineRules);

  const maskString = (s: string, where: readonly (string | number)[], inKey: boolean, acc: Acc): string => {
    const spans = engine.scan(s);
    if (spans.length === 0) return s;
    // The findings keep the path as it is now (the walk's path array changes as it goes on).
    const path = [...where];
    let out = "";
    let at = 0;
    for (const sp of spans) {
      const hash = shortHash(key, sp.secret);
      out += s.slice(at, sp.start) + maskFor(sp.rule, hash);
      at = sp.end;
      acc.findings.push({ rule: sp.rule, hash, path, inKey, start: sp.start, end: sp.end });
    }
    return out + s.slice(at);
  };

  // Object keys that hold no secret: a record's field names repeat on every record, and scanning
  // a string is a function of the string alone.
  const cleanKeys = new Set<string>();
  const rememberCleanKey = (k: string): void => {
    if (k.length > CLEAN_KEY_MAX_LENGTH) return;
    if (cleanKeys.size >= CLEAN_KEYS_MAX) cleanKeys.clear();
    cleanKeys.add(k);
  };

  const walk = (v: unknown, path: (string | number)[], depth: number, acc: Acc): JsonValue => {
    if (depth > maxDepth) {
      throw new RedactError("TooDeep", `value nests deeper than maxDepth ${maxDepth} at ${formatPath(path)}`, { data: { path: [...path] } });
    }
    if (typeof v === "string") return maskString(v, path, false, acc);
    if (v === null || typeof v === "boolean") return v;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) throw new RedactError("InvalidValue", `not a JSON value at ${formatPath(path)}: non-finite number`, { data: { path: [...path] } });
      return v;
    }
    if (Array.isArray(v)) {
      const out: JsonValue[] = new Array(v.length);
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        out[i] = walk(v[i], path, depth + 1, acc);
        path.pop();
      }
      return out;
    }
    if (typeof v === "object" && isPlainObject(v)) {
      const out: { [k: string]: JsonValue } = {};
      for (const k of Object.keys(v)) {
        const child = (v as Record<string, unknown>)[k];
        if (child === undefined) continue; // JSON.stringify drops it too
        let nk = k;
        if (redactKeys && !cleanKeys.has(k)) {
          const first = acc.findings.length;
          nk = maskString(k, path, true, acc);
          if (acc.findings.length === first) rememberCleanKey(k);
          if (nk !== k) {
            // Two masked keys can collide only if they were different secrets with a hash clash; keep both.
            let n = 2;
            const base = nk;
            while (Object.prototype.hasOwnProperty.call(out, nk)) nk = `${base}#${n++}`;
            // A finding's path names the masked key, never the raw one.
            for (let i = first; i < acc.findings.length; i++) acc.findings[i] = { ...acc.findings[i]!, path: [...path, nk] };
          }
        }
        path.push(nk);
        if (secretKeyNames && typeof child === "string") {
          const before = acc.findings.length;
          const masked = maskString(child, path, false, acc);
          if (acc.findings.length === before && wholeValueIsSecret(k, child)) {
            const hash = shortHash(key, child);
            acc.findings.push({ rule: GENERIC_RULE_ID, hash, path: [...path], inKey: false, start: 0, end: child.length });
            out[nk] = maskFor(GENERIC_RULE_ID, hash);
          } else {
            out[nk] = masked;
          }
        } else {
          out[nk] = walk(child, path, depth + 1, acc);
        }
        path.pop();
      }
      return out;
    }
    const what = typeof v === "object" ? `${(v as object).constructor?.name ?? "object"} instance` : typeof v;
    throw new RedactError("InvalidValue", `not a JSON value at ${formatPath(path)}: ${what}`, { data: { path: [...path] } });
  };

  // A value with no finding (most records): no rule or hash lists to build.
  const result = <T>(value: T, acc: Acc): RedactResult<T> =>
    acc.findings.length === 0
      ? { value, rules: [], hashes: [], findings: acc.findings }
      : {
          value,
          rules: [...new Set(acc.findings.map((f) => f.rule))].sort(),
          hashes: [...new Set(acc.findings.map((f) => f.hash))],
          findings: acc.findings,
        };

  const quarantineRecord = (record: unknown, rulesFired: readonly string[]): QuarantineRecord => ({
    status: "quarantined",
    rules_fired: [...new Set(rulesFired)].sort(),
    hash: createHmac("sha256", keyBytes(key)).update("lake-redact-record\0").update(canonicalJson(record, { maxDepth: maxDepth + 1, refuse: (reason) => new RedactError("InvalidValue", reason) }), "utf8").digest("hex"),
  });

  return {
    rules,
    quarantineRules,
    redactString(s: string): RedactResult<string> {
      if (typeof s !== "string") throw new RedactError("InvalidValue", `redactString: expected a string, got ${typeof s}`);
      const acc: Acc = { findings: [] };
      return result(maskString(s, [], false, acc), acc);
    },
    redactValue<T extends JsonValue>(v: T): RedactResult<T> {
      const acc: Acc = { findings: [] };
      const value = walk(v, [], 0, acc) as T;
      return result(value, acc);
    },
    redactRecord<T extends JsonValue>(record: T): RedactedRecord<T> | QuarantineRecord {
      const acc: Acc = { findings: [] };
      let value: T;
      try {
        value = walk(record, [], 0, acc) as T;
      } catch (e) {
        if (isRedactError(e) && e.code === "TooDeep") return quarantineRecord(record, ["limit:depth", ...acc.findings.map((f) => f.rule)]);
        throw e;
      }
      if (acc.findings.length > 0) {
        const fired = acc.findings.map((f) => f.rule);
        if (fired.some((r) => qset.has(r))) return quarantineRecord(record, fired);
      }
      return { status: "ok", ...result(value, acc) };
    },
    quarantineRecord,
    hash: (secret: string) => shortHash(key, secret),
  };
}

function formatPath(path: readonly (string | number)[]): string {
  return path.length === 0 ? "$" : "$" + path.map((p) => (typeof p === "number" ? `[${p}]` : `.${p}`)).join("");
}

export { QUARANTINE_TYPE };

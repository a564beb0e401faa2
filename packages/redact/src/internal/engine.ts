// The redaction engine: compile the rule table, scan a string (keyword prefilter → the regexes
// of the rules whose keywords occur → checks → overlap resolution by rule priority), and mask
// the original characters of each secret with `[REDACTED:<rule>:<8 hex HMAC>]`.
import { createHmac } from "node:crypto";
import { RedactError } from "./errors.js";
import { KeywordMatcher } from "./keywords.js";
import { keyBytes, type RedactKey } from "./key.js";
import { MASK_PREFIX, charClasses, shannon } from "./checks.js";
import { isSecretName, patternChecked, plausibleValue, type Rule } from "./rules.js";
import { buildView, needsView, viewText } from "./view.js";

/** Rule id used for a whole string masked because its object key names a secret. */
export const GENERIC_RULE_ID = "generic-secret";

/** One secret found in a string: input coordinates (UTF-16 code units, end exclusive). */
export interface Span {
  readonly rule: string;
  readonly start: number;
  readonly end: number;
  /** The secret text as decoded in the detection view (used for the HMAC; never returned). */
  readonly secret: string;
}

/** How much text before a match a validator sees (to read a whole variable name). */
const BEFORE = 64;
const MASK_RE = /\[REDACTED:[a-z0-9][a-z0-9-]{0,63}:[0-9a-f]{8}\]/g;
const RULE_ID = /^[a-z0-9][a-z0-9-]{0,63}$/;
const ESCAPE_HINT = /\\u[0-9a-fA-F]{4}|\\\/|\\\r?\n/;

/** One rule, checked and compiled: `index` is its priority (its place in the table). */
function compileRule(rule: Rule, index: number, seen: Set<string>) {
  if (typeof rule?.id !== "string" || !RULE_ID.test(rule.id)) {
    throw new RedactError("InvalidRule", `rule ${index}: id must match ${RULE_ID.source}`, { data: { rule: String(rule?.id) } });
  }
  if (seen.has(rule.id)) throw new RedactError("InvalidRule", `rule ${rule.id}: duplicate id`, { data: { rule: rule.id } });
  seen.add(rule.id);
  if (!(rule.pattern instanceof RegExp)) throw new RedactError("InvalidRule", `rule ${rule.id}: pattern is not a RegExp`, { data: { rule: rule.id } });
  if (!Array.isArray(rule.keywords) || rule.keywords.length === 0 || rule.keywords.some((k) => typeof k !== "string" || k.length === 0 || !/^[\x00-\x7f]+$/.test(k))) {
    throw new RedactError("InvalidRule", `rule ${rule.id}: keywords must be a non-empty list of non-empty ASCII strings`, { data: { rule: rule.id } });
  }
  const flags = [...new Set(rule.pattern.flags.replace(/[^imsu]/g, "") + "gd")].join("");
  let re: RegExp;
  try {
    re = new RegExp(rule.pattern.source, flags);
  } catch (e) {
    throw new RedactError("InvalidRule", `rule ${rule.id}: pattern does not compile`, { data: { rule: rule.id }, cause: e });
  }
  // A default pattern is checked by the rule-table test instead: this run compiles the regex, which
  // otherwise waits for the first text holding one of the rule's keywords.
  if (!patternChecked(rule.pattern) && re.test("")) throw new RedactError("InvalidRule", `rule ${rule.id}: pattern matches the empty string`, { data: { rule: rule.id } });
  return {
    rule,
    index,
    re,
    /** Named groups holding the secret (`s`, `s2`, …), in pattern order. */
    secretGroups: [...rule.pattern.source.matchAll(/\(\?<(s\d*)>/g)].map((x) => x[1]!),
    stopwords: (rule.stopwords ?? []).map((w) => w.toLowerCase()),
  } as const;
}

/** A compiled rule: what {@link compileRule} makes of a {@link Rule}. */
type CompiledRule = ReturnType<typeof compileRule>;

/** A compiled rule table. */
export class Engine {
  readonly rules: readonly CompiledRule[];
  private readonly matcher: KeywordMatcher;
  private readonly hits: Uint8Array;

  constructor(rules: readonly Rule[]) {
    const seen = new Set<string>();
    this.rules = rules.map((rule, index) => compileRule(rule, index, seen));
    this.matcher = new KeywordMatcher(this.rules.map((r) => r.rule.keywords));
    this.hits = new Uint8Array(this.rules.length);
  }

  /** Secrets in `input`, in input order, non-overlapping (earlier rules win overlaps). */
  scan(input: string): Span[] {
    const hits = this.hits;
    hits.fill(0);
    let any = this.matcher.scan(input, hits) > 0;
    const escaped = needsView(input);
    if (!any && !(escaped && ESCAPE_HINT.test(input))) return [];
    const text = escaped ? viewText(input) : input;
    if (text !== input) {
      hits.fill(0);
      any = this.matcher.scan(text, hits) > 0;
      if (!any) return [];
    }
    let cands: { rule: number; start: number; end: number; secret: string }[] = [];
    for (const cr of this.rules) {
      if (hits[cr.index] === 0) continue;
      const re = cr.re;
      re.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = re.exec(text)) !== null) {
        if (m[0].length === 0) {
          re.lastIndex++;
          continue;
        }
        let gi = 0;
        if (cr.secretGroups.length > 0 && m.groups) {
          const name = cr.secretGroups.find((g) => m!.groups![g] !== undefined);
          const pos = name !== undefined ? m.indices?.groups?.[name] : undefined;
          if (pos) {
            cands.push(...this.check(cr, text, pos[0], pos[1], m[0], m.index));
            continue;
          }
        }
        for (let g = 1; g < m.length; g++) {
          if (m[g] !== undefined) {
            gi = g;
            break;
          }
        }
        const pos = m.indices?.[gi];
        if (!pos) continue;
        cands.push(...this.check(cr, text, pos[0], pos[1], m[0], m.index));
      }
    }
    if (cands.length === 0) return [];
    if (text.includes(MASK_PREFIX)) {
      // Text already masked is never masked again, nor is any part of a mask.
      const masks = [...text.matchAll(MASK_RE)].map((mm) => [mm.index, mm.index + mm[0].length] as const);
      cands = cands.filter((c) => !masks.some(([a, b]) => c.start < b && a < c.end));
      if (cands.length === 0) return [];
    }
    // Priority resolution: earlier rules first, then leftmost; an overlapping later candidate is dropped.
    cands.sort((a, b) => a.rule - b.rule || a.start - b.start);
    const kept: typeof cands = [];
    for (const c of cands) {
      let overlaps = false;
      for (const k of kept) {
        if (c.start < k.end && k.start < c.end) {
          overlaps = true;
          break;
        }
      }
      if (!overlaps) kept.push(c);
    }
    kept.sort((a, b) => a.start - b.start);
    const view = text === input ? { start: undefined, end: undefined } : buildView(input);
    if (view.start && view.start.length !== text.length) throw new Error("redact: view maps disagree with view text");
    return kept.map((c) => ({
      rule: this.rules[c.rule]!.rule.id,
      start: view.start ? view.start[c.start]! : c.start,
      end: view.end ? view.end[c.end - 1]! : c.end,
      secret: c.secret,
    }));
  }

  private check(cr: CompiledRule, text: string, start: number, end: number, match: string, at: number): { rule: number; start: number; end: number; secret: string }[] {
    if (end <= start) return [];
    const secret = text.slice(start, end);
    const rule = cr.rule;
    if (secret.includes(MASK_PREFIX)) return [];
    if (rule.entropy !== undefined && shannon(secret) < rule.entropy) return [];
    if (rule.allowlist?.some((a) => a.test(secret))) return [];
    if (cr.stopwords.length) {
      const l = secret.toLowerCase();
      if (cr.stopwords.some((w) => l.includes(w))) return [];
    }
    if (rule.validate && !rule.validate(secret, match, text.slice(Math.max(0, at - BEFORE), at))) return [];
    return [{ rule: cr.index, start, end, secret }];
  }
}

/** 8 hex of HMAC-SHA256(key, secret) — the correlation tag in a mask. */
export function shortHash(key: RedactKey, secret: string): string {
  return createHmac("sha256", keyBytes(key)).update(secret, "utf8").digest("hex").slice(0, 8);
}

/** The mask text for a secret. */
export function maskFor(rule: string, hash: string): string {
  return `${MASK_PREFIX}${rule}:${hash}]`;
}

/** True when a string value stored under `name` should be masked whole (structured JSON). */
export function wholeValueIsSecret(name: string, value: string): boolean {
  if (!isSecretName(name)) return false;
  if (!plausibleValue(value)) return false;
  if (/^(?:~?\/|\.\.?\/|[A-Za-z]:\\)|:\/\/|\s/.test(value)) return false;
  if (shannon(value) < 3.0 || charClasses(value) < 2) return false;
  return /[0-9!%^*_+.@#&=~-]/.test(value);
}

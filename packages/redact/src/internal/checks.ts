// Value checks shared by rules: entropy, character classes, placeholders, code references.

/** Shannon entropy in bits per character. */
export function shannon(s: string): number {
  if (s.length === 0) return 0;
  const counts = new Map<number, number>();
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** How many of lower, upper, digit, other characters occur in `s`. */
export function charClasses(s: string): number {
  let lower = 0, upper = 0, digit = 0, other = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 97 && c <= 122) lower = 1;
    else if (c >= 65 && c <= 90) upper = 1;
    else if (c >= 48 && c <= 57) digit = 1;
    else other = 1;
  }
  return lower + upper + digit + other;
}

/** The mask prefix; text already masked is never masked again. */
export const MASK_PREFIX = "[REDACTED:";

/** Words that mark a value as an example or placeholder rather than a live secret. */
export const PLACEHOLDER_WORDS = [
  "example", "placeholder", "your_", "your-", "yourkey", "yourtoken", "yourpassword", "<your", "changeme", "change_me",
  "dummy", "sample", "redacted", "xxxxxx", "******", "......", "000000000", "123456789", "abcdefgh", "replace_me",
  "replaceme", "insert_", "put_your", "todo", "notreal", "not_real", "fake_",
];

/** Published documentation keys (AWS, Stripe, jwt.io), assembled from parts; a value containing one is an example. */
export const DOC_EXAMPLE_KEYS = [
  ["AKIA", "IOSFODNN7EXAMPLE"].join(""),
  ["wJalrXUtnFEMI", "/K7MDENG/bPxRfiCYEXAMPLEKEY"].join(""),
  ["sk_test_", "4eC39HqLyjWDarjtT1zdp7dc"].join(""),
  ["SflKxwRJSMeKKF2QT4fwpMeJf36", "POk6yJV_adQssw5c"].join(""),
];

/** Whole values that are placeholders (compared lower-case). */
export const PLACEHOLDER_VALUES = new Set([
  "password", "passwd", "pass", "pwd", "pw", "p", "secret", "token", "user", "username", "admin", "root", "guest",
  "test", "none", "null", "nil", "undefined", "true", "false", "string", "required", "optional", "hidden", "masked",
  "changeme", "letmein", "default", "empty", "value", "your-password", "your_password", "mypassword", "mysecret",
  "apikey", "api_key", "api-key", "secretkey", "x", "xx", "xxx", "xxxx", "****", "***", "...", "…",
]);

/** True for `${VAR}`, `$VAR`, `$(cmd)`, `<name>`, `{{name}}`, `%s`, `%(name)s`, `:name`, `[name]`, `***`, masks. */
export function isTemplate(v: string): boolean {
  return (
    /^\$\{[^}]*\}?$|^\$\(|^\$[A-Za-z_][A-Za-z0-9_]*$|^\$\{|^<[^>]*>?$|^\{\{|^\{%|^%[sd(]|^%[A-Z_]+%$|^:[a-z_]+$|^\*+$|^[xX.•*#_-]+$/.test(v) ||
    v.includes(MASK_PREFIX)
  );
}

/** True when `v` is an obvious placeholder: template syntax, a placeholder word or value. */
export function isPlaceholder(v: string): boolean {
  if (isTemplate(v)) return true;
  const l = v.toLowerCase();
  if (PLACEHOLDER_VALUES.has(l)) return true;
  for (const w of PLACEHOLDER_WORDS) if (l.includes(w)) return true;
  for (const d of DOC_EXAMPLE_KEYS) if (v.includes(d)) return true;
  return false;
}

const IDENT_SEGMENT = /^(?:[a-z_$][a-z0-9_$]*(?:[A-Z][a-z0-9_$]+)*[A-Z]?|[A-Z][A-Z0-9_]*|(?:[A-Z][a-z0-9]+)+)$/;

/** `a.b.c` / `obj?.field` / `Cls.CONST` / `a.b()`: every segment an identifier in a usual case style. */
function isMemberChain(v: string): boolean {
  const body = v.replace(/\(\)?$/, "");
  if (!/^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+$/.test(body)) return false;
  if (body.replace(/[^0-9]/g, "").length > 3) return false;
  return body.split(/\??\./).every((seg) => IDENT_SEGMENT.test(seg));
}

/** True when `v` reads like code rather than a literal: `a.b.c`, `env.X`, `os.environ[...]`, `getX()`. */
export function isCodeReference(v: string): boolean {
  return (
    isMemberChain(v) ||
    /^(?:process\.env|os\.environ|os\.getenv|env\.|ENV\[|getenv|System\.getenv|config\.|settings\.|self\.|this\.)/.test(v) ||
    /^[A-Za-z_$][\w$]*\(/.test(v)
  );
}

// The rule table: every secret format @lake/redact knows, as data. Order is priority: when two
// rules match overlapping text, the earlier rule's finding wins (specific formats before the
// generic assignment rule). Example secrets are assembled from parts at load time.
import { ALPHABETS as A, b64url, cat, fake } from "./fake.js";
import { charClasses, isCodeReference, isPlaceholder, isTemplate, shannon } from "./checks.js";
import { VENDOR_FORMATS, lowEntropyOf, prefixOf, sampleOf, type VendorFormat } from "./vendors.js";

/** One secret-detection rule. Rules are plain data plus an optional validator. */
export interface Rule {
  /** Stable id, `[a-z0-9-]`; appears in masks (`[REDACTED:<id>:…]`) and `rules_fired`. */
  readonly id: string;
  /** One line: what the rule finds. */
  readonly description: string;
  /**
   * ASCII keywords, matched case-insensitively by the prefilter; the regex runs on a string only
   * when one of them occurs in it. Every match of `pattern` must contain one of them.
   */
  readonly keywords: readonly string[];
  /**
   * The pattern. The secret is the first named group `s`, `s2`, … that took part, else the first
   * capture group that took part in the match, else the whole match. Flags other than `i`, `s`, `m`, `u` are ignored
   * (the engine adds `g` and `d`). Quantifiers must be bounded (no catastrophic backtracking).
   */
  readonly pattern: RegExp;
  /** Minimum Shannon entropy (bits per character) of the secret. */
  readonly entropy?: number;
  /** A secret matching any of these is not a finding (documentation keys, known fixtures). */
  readonly allowlist?: readonly RegExp[];
  /** A secret containing any of these (case-insensitive) is not a finding. */
  readonly stopwords?: readonly string[];
  /**
   * Extra check on a candidate: `secret`, the whole `match` text and up to 64 characters of text
   * before the match (to read a whole variable name). False drops it.
   */
  readonly validate?: (secret: string, match: string, before: string) => boolean;
  /** Texts in which the rule must find a secret (checked by the rule-table test). */
  readonly examples: readonly string[];
  /** Texts in which the rule must find nothing. */
  readonly negatives: readonly string[];
}

const COMMON_STOPWORDS = ["example", "xxxxxxxx", "placeholder", "your_", "your-", "dummy", "sample"];

function mixed(min: number) {
  return (s: string) => charClasses(s) >= min;
}

/** Checks for a free-form password/token value taken from context (URLs, headers, assignments). */
export function plausibleValue(v: string, minLen = 8): boolean {
  if (v.length < minLen) return false;
  if (isPlaceholder(v) || isCodeReference(v)) return false;
  const classes = charClasses(v);
  if (classes < 2) return false;
  // Words joined by separators (`proxy-handled`, `Not_Set`, `USE_KEYCHAIN`) are settings, not secrets.
  if (/^[A-Za-z]+(?:[-_. ][A-Za-z]+)*$/.test(v) && v.split(/[-_. ]/).every((w) => /^(?:[a-z]+|[A-Z][a-z]*|[A-Z]+)$/.test(w))) return false;
  if (shannon(v) < 2.8) return false;
  return true;
}

/** Checks for a password found in `scheme://user:pass@` or `user:pass` context (may be short). */
export function plausiblePassword(v: string): boolean {
  if (v.length < 4) return false;
  if (isPlaceholder(v) || isTemplate(v)) return false;
  if (/^\d{1,6}$/.test(v)) return false;
  return true;
}

function decodeJsonSegment(seg: string): unknown {
  try {
    return JSON.parse(Buffer.from(seg, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

const JWT_RE = /^eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*$/;

/** A JWT whose header decodes to a JSON object. */
export function isJwt(s: string): boolean {
  if (!JWT_RE.test(s)) return false;
  const header = decodeJsonSegment(s.slice(0, s.indexOf(".")));
  return typeof header === "object" && header !== null && !Array.isArray(header);
}

/** Names of fields and variables that hold secrets (`DB_PASSWORD`, `apiKey`, `"client_secret"`). */
export const SECRET_NAME =
  /(?:password|passwd|passphrase|pwd|pass|secret|token|key|credentials?|creds|auth|pat)/i;

/** Words that make a name a secret on their own (`password`, `token`, `credentials`). */
const SECRET_WORDS = new Set(["password", "passwd", "passphrase", "pwd", "pass", "passw", "secret", "token", "credential", "credentials", "creds", "apikey", "authtoken", "accesstoken", "authkey", "secretkey", "privatekey", "masterkey", "signingkey", "encryptionkey", "accesskey", "appkey", "sas", "pat"]);
/** Words before `key` that make it a secret key (`api_key`, `DD_APP_KEY`, `AccountKey`, `license_key`). */
const KEY_QUALIFIERS = new Set([
  "api", "access", "secret", "private", "app", "application", "auth", "master", "encryption", "signing", "account", "shared", "license", "licence", "client",
  "admin", "service", "webhook", "deploy", "write", "read", "sdk", "ingest", "ingestion", "browser", "server", "live", "test", "prod", "root", "session", "hmac",
  "jwt", "crypt", "cipher", "aes", "storage", "subscription", "developer", "dev", "user", "bot", "integration", "management", "rest", "mobile", "upload", "push",
  "search", "mgmt", "org", "project", "personal", "team", "workspace", "access_key", "sa", "gcp", "aws", "azure", "openai", "anthropic", "stripe", "datadog",
  "dd", "algolia", "mailgun", "sendgrid", "twilio", "mistral", "cohere", "gemini", "google", "deepseek", "together", "groq", "pinecone", "sentry", "cf", "cloudflare",
  "alibaba", "aliyun", "tencent", "huawei", "oracle", "ibm", "consumer", "x_api", "xapi", "ocp_apim_subscription", "pk", "sk",
]);
/** Last words that make a secret-looking name about something else (`max_tokens`, `token_count`, `password_hint`, `cache_key`). */
const NOT_SECRET_LAST = new Set([
  "tokens", "count", "len", "length", "limit", "limits", "type", "types", "usage", "used", "budget", "name", "names", "file", "files", "path", "paths", "dir", "field",
  "header", "headers", "url", "uri", "urls", "endpoint", "expiry", "expires", "expiration", "expire", "expired", "expires_at", "ttl", "policy", "prompt", "label", "hint", "format", "id",
  "ids", "index", "idx", "size", "hash", "min", "max", "required", "enabled", "disabled", "pattern", "regex", "rule", "rules", "version", "kind", "env", "var", "ref",
  "arn", "location", "mode", "source", "store", "provider", "strategy", "method", "prefix", "suffix", "timeout", "at", "time", "date", "rotation", "reset", "policy",
  "fingerprint", "algorithm", "alg", "scheme", "scope", "scopes", "ok", "valid", "error", "errors", "status", "schema", "class", "manager", "service", "store",
  "endpoint", "command", "cmd", "helper", "script", "flag", "flags", "option", "options", "param", "params", "input", "placeholder", "text", "template", "mask", "masked",
  "hint", "question", "strength", "visible", "confirm", "confirmation", "changed", "set", "list", "map", "tag", "tags", "key_id", "keyid", "handle", "pair", "generator",
]);
/** Words before `key` that make it a lookup key, not a credential (`cache_key`, `primary_key`, `public_key`). */
const KEY_NOT_SECRET = new Set([
  "public", "primary", "foreign", "sort", "partition", "cache", "idempotency", "object", "s3", "row", "map", "hash", "dedupe", "dedup", "lookup", "unique", "composite",
  "ssh", "gpg", "pgp", "translation", "i18n", "list", "dict", "registry", "react", "hot", "usage", "group", "range", "shard", "routing", "sequence", "natural",
  "surrogate", "cluster", "clustering", "index", "search_key", "sort_key", "dist", "distribution", "record", "message", "event", "idempotent", "dedupe", "state",
  "local", "storage_key", "redis", "cache_key", "lock", "metric", "feature", "flag", "setting", "config", "env", "json", "yaml", "table", "column", "field",
]);
/** Words before `token` that make it something other than a credential (`max_tokens`, `next_page_token`). */
const TOKEN_NOT_SECRET = new Set(["max", "num", "n", "total", "input", "output", "cached", "reasoning", "prompt", "completion", "page", "next", "continuation", "cursor", "pagination", "sync", "cancellation", "cancel", "design", "lexer", "parser", "eos", "bos", "pad", "unk", "sep", "cls", "mask", "special", "stop"]);

/** Split a field or variable name into lower-case words (`DD_APP_KEY` → dd app key, `apiKey` → api key). */
function nameWords(name: string): string[] {
  return name
    .replace(/["'\]\s]+$/, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** Answers of {@link isSecretName} for names seen (a record's field names repeat on every record). */
const secretNames = new Map<string, boolean>();
const SECRET_NAMES_MAX = 4096;

/** True when a field or variable name says its value is a secret. */
export function isSecretName(name: string): boolean {
  let v = secretNames.get(name);
  if (v === undefined) {
    v = secretName(name);
    if (name.length <= 128) {
      if (secretNames.size >= SECRET_NAMES_MAX) secretNames.clear();
      secretNames.set(name, v);
    }
  }
  return v;
}

function secretName(name: string): boolean {
  const words = nameWords(name);
  if (words.length === 0 || words.length > 8) return false;
  const last = words.at(-1)!;
  if (NOT_SECRET_LAST.has(last) && words.length > 1) return false;
  for (let i = words.length - 1; i >= 0; i--) {
    const w = words[i]!;
    const prev = words[i - 1];
    // Only the last word or the one before a neutral tail (`password_value`, `token_str`) decides.
    const tail = words.slice(i + 1);
    if (tail.some((t) => !/^(?:value|val|str|string|b64|base64|raw|plain|plaintext|enc|encoded|data|env|1|2|v\d|new|old|current|prod|dev|test|staging|live)$/.test(t))) continue;
    if (w === "key" || w === "keys") {
      if (prev !== undefined && KEY_QUALIFIERS.has(prev) && !KEY_NOT_SECRET.has(prev)) return true;
      continue;
    }
    if (w === "token" || w === "auth") {
      if (prev !== undefined && TOKEN_NOT_SECRET.has(prev)) return false;
      return true;
    }
    // `signature` is not a secret name: thinking blocks, commits and packages carry signatures.
    if (SECRET_WORDS.has(w)) return true;
    if (/(?:password|passwd|secret|token|apikey|privatekey|secretkey|accesskey)$/.test(w)) return true;
  }
  return false;
}

/** The whole variable name a match starts inside: the name characters before it and at its start. */
function wholeName(match: string, before: string): string {
  return (/[A-Za-z0-9_.-]*$/.exec(before)?.[0] ?? "") + (/^[A-Za-z0-9_.-]*/.exec(match)?.[0] ?? "");
}

function genericValidate(secret: string, match: string, before = ""): boolean {
  const name = wholeName(match, before);
  if (!isSecretName(name)) return false;
  if (!plausibleValue(secret)) return false;
  if (/^(?:~?\/|\.\.?\/|[A-Za-z]:\\)|:\/\//.test(secret)) return false; // paths and URLs
  if (shannon(secret) < 3.0) return false;
  // An unquoted value must look random: a digit or a symbol besides letters.
  if (!/[0-9!%^*_+.@#&=~-]/.test(secret)) return false;
  return true;
}

/** Base64 of `user:password` where the password is a placeholder is a documentation example. */
function notPlaceholderBasic(secret: string): boolean {
  if (!/^[A-Za-z0-9+/]+=*$/.test(secret)) return true;
  const decoded = Buffer.from(secret, "base64").toString("latin1");
  if (!/^[\x20-\x7e]+:[\x20-\x7e]*$/.test(decoded)) return true;
  const pass = decoded.slice(decoded.indexOf(":") + 1);
  return plausiblePassword(pass);
}

// ---- example material (fake, assembled at load time) ----
const akid = cat("AK", "IA", fake(A.base32, 16, 101));
const asid = cat("AS", "IA", fake(A.base32, 16, 102));
const awsSecret = fake(A.base64, 40, 103);
const gh = (p: string, seed: number) => cat("gh", p, "_", fake(A.alnum, 36, seed));
const ghFine = cat("github", "_pat_", fake(A.alnum, 22, 111), "_", fake(A.alnum, 59, 112));
const glpat = cat("gl", "pat-", fake(A.alnum + "_-", 20, 121));
const gldt = cat("gl", "dt-", fake(A.alnum, 20, 122));
const xoxb = cat("xo", "xb-", fake(A.digits, 12, 131), "-", fake(A.digits, 13, 132), "-", fake(A.alnum, 24, 133));
const xoxp = cat("xo", "xp-", fake(A.digits, 11, 134), "-", fake(A.digits, 11, 135), "-", fake(A.digits, 12, 136), "-", fake(A.hex, 32, 137));
const slackHook = cat("https://hooks.", "slack.com/services/T", fake(A.upper + A.digits, 10, 141), "/B", fake(A.upper + A.digits, 10, 142), "/", fake(A.alnum, 24, 143));
const skLive = cat("sk", "_live_", fake(A.alnum, 24, 151));
const rkTest = cat("rk", "_test_", fake(A.alnum, 34, 152));
const whsec = cat("wh", "sec_", fake(A.alnum, 32, 153));
const sant = cat("sk-", "ant-", "api03-", fake(A.alnum + "_-", 93, 161), "AA");
const soa = cat("sk-", "proj-", fake(A.alnum + "_-", 120, 171));
const soaLegacy = cat("sk-", fake(A.alnum, 20, 172), "T3Blbk", "FJ", fake(A.alnum, 20, 173));
const aiza = cat("AI", "za", "Sy", fake(A.alnum + "_-", 33, 181));
const npmTok = cat("np", "m_", fake(A.alnum, 36, 191));
const pypiTok = cat("py", "pi-", "AgEIcHlwaS5vcmc", fake(A.base64url, 70, 201));
const hfTok = cat("h", "f_", fake(A.alnum, 34, 211));
const sgKey = cat("S", "G.", fake(A.base64url, 22, 221), ".", fake(A.base64url, 43, 222));
const hvs = cat("hv", "s.", fake(A.base64url, 90, 231));
const pemBody = fake(A.base64, 64 * 6, 241).replace(/(.{64})/g, "$1\n");
const pem = cat("-----BEGIN ", "RSA PRIVATE", " KEY-----\n", pemBody, "-----END RSA PRIVATE KEY-----");
const opensshPem = cat("-----BEGIN OPENSSH ", "PRIVATE KEY-----\n", fake(A.base64, 64 * 4, 242).replace(/(.{64})/g, "$1\n"), "-----END OPENSSH PRIVATE KEY-----");
const jwt = cat(b64url('{"alg":"HS256","typ":"JWT"}'), ".", b64url(`{"sub":"${fake(A.digits, 10, 251)}","exp":1767225600}`), ".", fake(A.base64url, 43, 252));
const jwtB64 = Buffer.from(jwt).toString("base64");
const dbPass = fake(A.alnum, 18, 261);
const bearer = fake(A.alnum + "._-", 40, 271);
const basic = Buffer.from(`deploy:${fake(A.alnum, 16, 272)}`).toString("base64");
const curlPass = fake(A.alnum, 14, 281);
const genericValue = fake(A.password, 24, 291);

const jwtIoSignature = cat("SflKxwRJSMeKKF2QT4fwpMeJf36", "POk6yJV_adQssw5c");

/**
 * A vendor format as a rule: the token between identifier boundaries, examples and negatives built
 * from its shape — when first read (only the rule-table test and the corpus read them; a redactor
 * never does, so start-up does not assemble seventy vendors' samples).
 */
function vendorRule(v: VendorFormat, n: number): Rule {
  const named = /\(\?<s>/.test(v.token);
  const pattern = new RegExp(`${v.lookbehind ?? "(?<![A-Za-z0-9_])"}${named ? `(?:${v.token})` : `(${v.token})`}(?![A-Za-z0-9_])`, v.flags ?? "");
  let built: { examples: readonly string[]; negatives: readonly string[] } | undefined;
  const texts = () => {
    if (built) return built;
    const sample = sampleOf(v.shape, 7000 + n);
    const other = sampleOf(v.shape, 8000 + n);
    const prefix = prefixOf(v.shape);
    const negatives = [...(v.negatives ?? [])];
    if (v.lowEntropyNegative !== false) negatives.push(lowEntropyOf(v.shape));
    negatives.push(sample.slice(0, prefix.length + 3) + " …");
    if (/^[A-Za-z0-9]/.test(sample)) negatives.push("z" + sample.slice(0, Math.floor(sample.length / 2)));
    const examples = [sample, `${v.env}=${other}`, `here's the key: ${sample} (keep it safe)`, JSON.stringify({ output: `export ${v.env}="${other}"` }), ...(v.examples ?? [])];
    return (built = { examples, negatives });
  };
  return {
    id: v.id,
    description: v.description,
    keywords: v.keywords,
    pattern,
    entropy: v.entropy ?? 3.0,
    stopwords: COMMON_STOPWORDS,
    get examples() {
      return texts().examples;
    },
    get negatives() {
      return texts().negatives;
    },
  };
}

/** A value taken from a command line or prose: random-looking, not a path, URL, flag, port mapping, number or identifier. */
export function plausibleLooseValue(v: string, minLen = 8): boolean {
  if (!plausibleValue(v, minLen)) return false;
  if (/^(?:~?\/|\.\.?\/|[A-Za-z]:\\)|:\/\/|^-/.test(v)) return false;
  if (/^[\d.:/-]+$/.test(v)) return false; // ports, addresses, dates, versions
  if (/^v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?$/.test(v)) return false;
  if (/^[\w-]+\.(?:ts|js|tsx|jsx|py|go|rs|md|json|ya?ml|toml|txt|log|sh|env|pem|key|crt|cfg|conf|ini|lock|sql|csv|html|css)$/i.test(v)) return false;
  return /[0-9!%^*_+.@#&=~$-]/.test(v) && shannon(v) >= 3.0;
}

/** A high-entropy credential next to a secret word in prose: long, mixed, with a digit, not hex-only hashes of a known size. */
export function plausibleProseSecret(v: string, close = false): boolean {
  const t = v.replace(/[.,;:!?)\]}>'"`]+$/, "");
  if (t.length < 10 || t.length > 300) return false;
  if (t.includes(MASK_PREFIX_TEXT)) return false;
  if (!plausibleLooseValue(t, 10)) return false;
  if (!/\d/.test(t) || !/[A-Za-z]/.test(t)) return false;
  // git SHAs and digests, unless the secret word sits right before the value ("app key: <40 hex>")
  if (/^[a-f0-9]+$/.test(t) && (!close || t.length < 24)) return false;
  if (!close && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(t)) return false; // UUIDs name things
  if (/^(?:sha\d+|md5|sha)[-:]/i.test(t)) return false;
  if (/^[A-Za-z]+(?:[_-][A-Za-z]+)+\d*$/.test(t)) return false; // snake/kebab identifiers
  if (/^[a-z]+(?:[A-Z][a-z0-9]+)+$/.test(t)) return false; // camelCase identifiers
  return shannon(t) >= (/^[a-f0-9]+$/i.test(t) ? 3.0 : t.length >= 20 ? 3.5 : 3.0) && charClasses(t) >= (t.length >= 16 ? 2 : 3);
}

const MASK_PREFIX_TEXT = "[REDACTED:";

/** "cache key", "primary key", "page token": the word before the secret word makes it a lookup key, not a credential. */
function lookupKeyWord(match: string, before: string): boolean {
  const word = /([A-Za-z0-9]+)[ _-]?$/.exec(before)?.[1]?.toLowerCase();
  if (word === undefined) return false;
  if (/^keys?\b/i.test(match)) return KEY_NOT_SECRET.has(word);
  if (/^tokens?\b/i.test(match)) return TOKEN_NOT_SECRET.has(word);
  return false;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
const SECRET_FLAG = /^--?(?:[a-z0-9]+[-_])*(?:password|passwd|pass|pwd|passphrase|secret|token|api-?key|access-?key|secret-?key|private-?key|client-?secret|auth|credentials?|creds|sas|sig)$/i;

/** The default rule table, in priority order. */
export const defaultRules: readonly Rule[] = [
  {
    id: "private-key",
    description: "PEM private key block (RSA, EC, DSA, OpenSSH, PKCS#8, encrypted, PGP); a block cut before END still matches",
    keywords: ["private key"],
    pattern: /-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:(?!-----)[\s\S]){0,65536}(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----)?/,
    validate: (s) => {
      const body = s.replace(/^-----BEGIN[^\n]*?-----/, "").replace(/-----END[\s\S]*$/, "").replace(/^[A-Za-z-]+:.*$/gm, "");
      const b64 = body.replace(/[^A-Za-z0-9+/]/g, "");
      return b64.length >= 64 && shannon(b64) >= 4.5;
    },
    examples: [pem, opensshPem, `key file:\n${pem}\n`, `"key": ${JSON.stringify(pem)}`],
    negatives: [
      "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
      "-----BEGIN PUBLIC KEY-----\n" + pemBody + "-----END PUBLIC KEY-----",
      "-----BEGIN CERTIFICATE-----\n" + pemBody + "-----END CERTIFICATE-----",
      "Generate a private key with openssl genrsa.",
    ],
  },
  {
    id: "aws-access-key-id",
    description: "AWS access key id (AKIA long-term, ASIA temporary, ABIA, ACCA)",
    keywords: ["akia", "asia", "abia", "acca", "a3t"],
    pattern: /(?<![A-Za-z0-9])((?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16})(?![A-Za-z0-9])/,
    entropy: 3.0,
    allowlist: [/EXAMPLE$/],
    examples: [`aws_access_key_id = ${akid}`, `"AccessKeyId": "${asid}"`, `export AWS_ACCESS_KEY_ID=${akid}`],
    negatives: [cat("AKIA", "IOSFODNN7", "EXAMPLE"), "AKIAAAAAAAAAAAAAAAAA", cat("AKIA", "1234"), "ASIAN markets", cat("XAKIA", fake(A.base32, 16, 104))],
  },
  {
    id: "aws-secret-access-key",
    description: "AWS secret access key (40 base64 characters) after an aws_secret_access_key / SecretAccessKey name",
    keywords: ["secretaccesskey", "secret_access_key", "secret-access-key", "secret.access.key", "secret access key", "aws_secret", "aws-secret", "aws.secret", "awssecret"],
    pattern: /(?:aws[_.\- ]?secret[_.\- ]?(?:access[_.\- ]?)?key|secret[_.\- ]?access[_.\- ]?key|aws[_.-]?secret)["'\]]{0,2}(?:\s{0,8}(?:=|:=|:|=>)\s{0,8}|[^\S\n]{1,8})["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/i,
    entropy: 4.0,
    allowlist: [/EXAMPLEKEY$/, /^[0-9a-f]{40}$/],
    examples: [`aws_secret_access_key = ${awsSecret}`, `"SecretAccessKey": "${awsSecret}"`, `AWS_SECRET_ACCESS_KEY=${awsSecret}`],
    negatives: [cat("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY"), `aws_secret_access_key = ${fake(A.hex, 40, 105)}`, "aws_secret_access_key = ${AWS_SECRET}"],
  },
  {
    id: "github-token",
    description: "GitHub token: personal (ghp_), OAuth (gho_), user-to-server (ghu_), server-to-server (ghs_), refresh (ghr_)",
    keywords: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
    pattern: /(?<![A-Za-z0-9_])(gh[pousr]_[A-Za-z0-9]{36,251})(?![A-Za-z0-9_])/,
    entropy: 3.5,
    validate: (s) => charClasses(s.slice(4)) >= 2,
    examples: [gh("p", 106), `GITHUB_TOKEN=${gh("o", 107)}`, `token ${gh("u", 108)}`, gh("s", 109), gh("r", 110)],
    negatives: ["ghp_" + "x".repeat(36), "ghp_short", "ghp_" + "0123456789".repeat(4), "my_ghp_" + fake(A.alnum, 36, 113) + "_x"],
  },
  {
    id: "github-fine-grained-pat",
    description: "GitHub fine-grained personal access token (github_pat_)",
    keywords: ["github_pat_"],
    pattern: /(?<![A-Za-z0-9_])(github_pat_[A-Za-z0-9_]{50,255})(?![A-Za-z0-9_])/,
    entropy: 3.5,
    examples: [ghFine, `"token": "${ghFine}"`],
    negatives: ["github_pat_" + "X".repeat(82), "github_pat_abc"],
  },
  {
    id: "gitlab-token",
    description: "GitLab tokens: glpat- and its siblings (gldt-, glrt-, glcbt-, glptt-, glft-, glimt-, glagent-, glsoat-, gloas-, glffct-, glwt-) and GR1348941 runner registration tokens",
    keywords: ["glpat-", "gldt-", "glrt-", "glcbt-", "glptt-", "glft-", "glimt-", "glagent-", "glsoat-", "gloas-", "glffct-", "glwt-", "gr1348941"],
    pattern: /(?<![A-Za-z0-9_-])((?:gl(?:pat|dt|rt|cbt|ptt|ft|imt|agent|soat|oas|ffct|wt)-|GR1348941)[A-Za-z0-9_-]{20,100}(?:\.[A-Za-z0-9_-]{1,40}){0,2})(?![A-Za-z0-9_-])/,
    entropy: 3.3,
    examples: [glpat, `CI_DEPLOY=${gldt}`, cat("GR134", "8941", fake(A.alnum, 20, 123)), cat("gl", "pat-", fake(A.base64url, 27, 124), ".01.", fake(A.alnum, 9, 125))],
    negatives: ["glpat-" + "x".repeat(20), "glpat-<your-token>", "glpat-short"],
  },
  {
    id: "slack-token",
    description: "Slack tokens: bot (xoxb-), user (xoxp-), app-level (xapp-), refresh/config (xoxe.) and legacy xoxa/xoxo/xoxs/xoxr",
    keywords: ["xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xoxe.", "xapp-"],
    pattern: /(?<![A-Za-z0-9_-])(xox[abposre]-(?:\d-)?[0-9]{6,15}-[A-Za-z0-9-]{8,200}|xapp-\d-[A-Z0-9]{6,15}-\d{6,15}-[A-Za-z0-9]{20,100}|xoxe\.xox[bp]-\d-[A-Za-z0-9]{40,250})(?![A-Za-z0-9_-])/,
    entropy: 3.0,
    examples: [xoxb, `SLACK_TOKEN=${xoxp}`, cat("xa", "pp-1-A", fake(A.upper + A.digits, 10, 138), "-", fake(A.digits, 13, 139), "-", fake(A.hex, 64, 140))],
    negatives: ["xoxb-your-token-here", "xoxb-123", "xoxb-000000000000-000000000000-000000000000"],
  },
  {
    id: "slack-webhook",
    description: "Slack incoming webhook / workflow URL (the path after hooks.slack.com/ is masked)",
    keywords: ["hooks.slack.com"],
    pattern: /https?:\/\/hooks\.slack\.com\/((?:services|workflows|triggers)\/[A-Za-z0-9+/_-]{20,200})/,
    entropy: 3.0,
    stopwords: ["xxxx", "your"],
    examples: [slackHook, `SLACK_WEBHOOK_URL="${slackHook}"`],
    negatives: ["https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "https://hooks.slack.com/", "see hooks.slack.com docs"],
  },
  {
    id: "stripe-key",
    description: "Stripe secret and restricted keys (sk_live_, sk_test_, rk_live_, rk_test_) and webhook signing secrets (whsec_)",
    keywords: ["sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"],
    pattern: /(?<![A-Za-z0-9_])((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,247}|whsec_[A-Za-z0-9+/=]{24,128})(?![A-Za-z0-9_])/,
    entropy: 3.3,
    allowlist: [new RegExp("^" + cat("sk_test_", "4eC39HqLyjWDarjtT1zdp7dc") + "$")],
    stopwords: COMMON_STOPWORDS,
    examples: [skLive, `stripe.api_key = "${rkTest}"`, `STRIPE_WEBHOOK_SECRET=${whsec}`],
    negatives: [cat("sk_test_", "4eC39HqLyjWDarjtT1zdp7dc"), "sk_live_xxxxxxxxxxxxxxxx", "pk_live_" + fake(A.alnum, 24, 154), "ask_test_suite"],
  },
  {
    id: "anthropic-api-key",
    description: "Anthropic API, admin and OAuth keys (sk-ant-api03-, sk-ant-admin01-, sk-ant-oat01-, …)",
    keywords: ["sk-ant-"],
    pattern: /(?<![A-Za-z0-9_-])(sk-ant-(?:api|admin|oat|ort|sid)\d{2}-[A-Za-z0-9_-]{40,200})(?![A-Za-z0-9_-])/,
    entropy: 3.5,
    examples: [sant, `ANTHROPIC_API_KEY=${sant}`],
    negatives: ["sk-ant-api03-...", "sk-ant-api03-" + "x".repeat(93)],
  },
  {
    id: "openai-api-key",
    description: "OpenAI API keys: project (sk-proj-), service account (sk-svcacct-), admin (sk-admin-), legacy sk-…T3BlbkFJ… and 48-character sk- keys",
    keywords: ["sk-"],
    pattern: /(?<![A-Za-z0-9_-])(sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{40,300}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|sk-[A-Za-z0-9]{48})(?![A-Za-z0-9_-])/,
    entropy: 3.5,
    validate: mixed(3),
    stopwords: COMMON_STOPWORDS,
    examples: [soa, `OPENAI_API_KEY=${soaLegacy}`, cat("sk-", fake(A.alnum, 48, 174))],
    negatives: ["sk-...", "sk-" + "x".repeat(48), "task-management-component-library-for-react-native-apps-v2", "sk-proj-your-api-key-goes-here-xxxxxxxxxxxxxxxxxxxxxxxxxx"],
  },
  {
    id: "google-api-key",
    description: "Google API key (AIza + 35 characters)",
    keywords: ["aiza"],
    pattern: /(?<![A-Za-z0-9_-])(AIza[0-9A-Za-z_-]{35})(?![A-Za-z0-9_-])/,
    entropy: 3.5,
    stopwords: COMMON_STOPWORDS,
    examples: [aiza, `const firebaseConfig = { apiKey: "${aiza}" };`],
    negatives: ["AIzaSyXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "AIzaSy-EXAMPLE-KEY-1234567890abcdefghi", "AIzaShort"],
  },
  {
    id: "npm-token",
    description: "npm access token (npm_) and _authToken values in .npmrc",
    keywords: ["npm_", "_authtoken"],
    pattern: /(?<![A-Za-z0-9_])(npm_[A-Za-z0-9]{36})(?![A-Za-z0-9_])|_authToken\s{0,4}=\s{0,4}["']?([^\s"'$<{][^\s"']{7,300})/,
    entropy: 3.3,
    stopwords: COMMON_STOPWORDS,
    examples: [npmTok, `//registry.npmjs.org/:_authToken=${npmTok}`, `//npm.example.com/:_authToken=${fake(A.alnum, 30, 192)}`],
    negatives: ["//registry.npmjs.org/:_authToken=${NPM_TOKEN}", "npm_" + "x".repeat(36), "npm_config_cache"],
  },
  {
    id: "pypi-token",
    description: "PyPI / TestPyPI API token (pypi-Ag… macaroon)",
    keywords: ["pypi-ag"],
    pattern: /(?<![A-Za-z0-9_-])(pypi-Ag[A-Za-z0-9_-]{50,500})(?![A-Za-z0-9_-])/,
    entropy: 3.5,
    examples: [pypiTok, `password = ${pypiTok}`],
    negatives: ["pypi-AgEIcHlwaS5vcmc" + "x".repeat(50), "pypi-AgEI"],
  },
  {
    id: "huggingface-token",
    description: "Hugging Face user access token (hf_) and organization token (api_org_)",
    keywords: ["hf_", "api_org_"],
    pattern: /(?<![A-Za-z0-9_])(hf_[A-Za-z0-9]{34,40}|api_org_[A-Za-z0-9]{34})(?![A-Za-z0-9_])/,
    entropy: 3.5,
    validate: mixed(2),
    examples: [hfTok, `HF_TOKEN=${hfTok}`, cat("api_", "org_", fake(A.alnum, 34, 212))],
    negatives: ["hf_" + "x".repeat(34), "hf_transformersmodelconfigurationxyz"],
  },
  {
    id: "sendgrid-api-key",
    description: "SendGrid API key (SG.<22>.<43>)",
    keywords: ["sg."],
    pattern: /(?<![A-Za-z0-9_-])(SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])/,
    entropy: 3.5,
    examples: [sgKey, `SENDGRID_API_KEY='${sgKey}'`],
    negatives: ["SG." + "x".repeat(22) + "." + "x".repeat(43), "msg.content"],
  },
  {
    id: "vault-token",
    description: "HashiCorp Vault tokens: service (hvs.), batch (hvb.), recovery (hvr.), and legacy s. tokens after a VAULT_TOKEN / X-Vault-Token name",
    keywords: ["hvs.", "hvb.", "hvr.", "vault_token", "vault-token", "vaulttoken"],
    pattern: /(?<![A-Za-z0-9_-])(hv[sbr]\.[A-Za-z0-9_-]{24,400})(?![A-Za-z0-9_-])|(?:vault[_-]?token)["']?\s{0,4}[:=]\s{0,4}["']?(s\.[A-Za-z0-9]{24})(?![A-Za-z0-9])/i,
    entropy: 3.5,
    examples: [hvs, `VAULT_TOKEN=${cat("s.", fake(A.alnum, 24, 232))}`, `-H "X-Vault-Token: ${hvs}"`],
    negatives: ["hvs." + "x".repeat(24), "VAULT_TOKEN=s.xxxxxxxxxxxxxxxxxxxxxxxx"],
  },
  ...VENDOR_FORMATS.map(vendorRule),
  {
    id: "jwt",
    description: "JSON Web Token (three base64url segments, header decoding to a JSON object)",
    keywords: ["eyj"],
    pattern: /(?<![A-Za-z0-9_-])(eyJ[A-Za-z0-9_-]{8,4000}\.eyJ[A-Za-z0-9_-]{4,16000}\.[A-Za-z0-9_-]{0,4000})(?![A-Za-z0-9_-])/,
    allowlist: [new RegExp(jwtIoSignature + "$")],
    validate: (s) => isJwt(s),
    examples: [jwt, `Cookie: session=${jwt}`, `{"id_token":"${jwt}"}`],
    negatives: [
      cat(b64url('{"alg":"HS256","typ":"JWT"}'), ".", b64url('{"sub":"1234567890","name":"John Doe","iat":1516239022}'), ".", jwtIoSignature),
      "eyJhbGciOi.eyJzdWIi",
      cat("eyJ", fake(A.base64url, 20, 253), ".eyJ", fake(A.base64url, 20, 254), ".x"),
    ],
  },
  {
    id: "jwt-base64",
    description: "A JWT wrapped in standard base64 (Kubernetes secrets, base64-encoded env values)",
    keywords: ["zxlk"],
    pattern: /(?<![A-Za-z0-9+/])(ZXlK[A-Za-z0-9+/]{60,16000}={0,2})(?![A-Za-z0-9+/=])/,
    validate: (s) => isJwt(Buffer.from(s, "base64").toString("latin1").trim()),
    examples: [jwtB64, `  token: ${jwtB64}`],
    negatives: ["ZXlK" + "A".repeat(60), Buffer.from("eyJ not a token at all, just some text that goes on and on").toString("base64")],
  },
  {
    id: "url-credentials",
    description: "Password in a URL's userinfo (postgres://, mysql://, mongodb+srv://, redis://, amqp://, https://, …); the user is kept",
    keywords: ["://"],
    pattern: /:\/\/[^\s:/?#@"'<>`[\]]{0,128}:([^\s/?#@"'<>`]{1,256})@(?=[A-Za-z0-9[])/,
    validate: (s) => plausiblePassword(s),
    examples: [`postgres://app:${dbPass}@db.internal:5432/prod`, `MONGO_URL=mongodb+srv://svc:${dbPass}@cluster0.example.net/app`, `redis://:${dbPass}@cache:6379/0`, `amqp://guest:${dbPass}@mq:5672/`],
    negatives: ["postgres://user:password@localhost:5432/db", "mysql://root:${MYSQL_PASSWORD}@db/app", "https://example.com:8443/path", "redis://:<password>@host:6379", "postgres://user:****@host/db", "ssh://git@github.com:22/org/repo.git"],
  },
  {
    id: "auth-header",
    description: "Credentials in an Authorization / Proxy-Authorization header (Bearer, Basic, Token, …) or after `Bearer`",
    keywords: ["authorization", "bearer"],
    pattern: /(?:authorization)["']?\s{0,4}[:=]\s{0,4}["']?\s{0,4}(?:bearer|basic|token|bot|digest|negotiate|apikey|sso-key)?\s{0,4}([A-Za-z0-9._~+/-]{8,4096}=*)|\bbearer\s{1,4}([A-Za-z0-9._~+/-]{16,4096}=*)/i,
    entropy: 3.0,
    stopwords: COMMON_STOPWORDS,
    validate: (s) => charClasses(s) >= 2 && !isPlaceholder(s) && !isCodeReference(s) && notPlaceholderBasic(s),
    examples: [`Authorization: Bearer ${bearer}`, `-H "Authorization: Basic ${basic}"`, `headers = {"Authorization": "Bearer ${bearer}"}`, `bearer ${bearer}`],
    negatives: ["Authorization: Bearer ${TOKEN}", "Authorization: Bearer <token>", "the bearer token is sent in the authorization header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Bearer $API_KEY"],
  },
  {
    id: "curl-user",
    description: "Password in `curl -u user:pass` / `curl --user user:pass` (the user is kept)",
    keywords: ["curl"],
    pattern: /\bcurl\b[^\n|;&]{0,400}?\s(?:-u\s{0,4}|--user(?:\s{1,4}|=)|--proxy-user(?:\s{1,4}|=))["']?[^\s:"']{1,128}:([^\s"']{1,256})/,
    validate: (s) => plausiblePassword(s),
    examples: [`curl -u admin:${curlPass} https://jenkins.example.net/api/json`, `curl -s --user "deploy:${curlPass}" -X POST https://example.org/hook`],
    negatives: ["curl -u user:password https://example.com", 'curl -u "$USER:$PASS" https://example.com', "curl -u admin: https://x", "docker run -u 1000:1000 image", "curl -u ${CI_USER}:${CI_TOKEN} https://x"],
  },
  {
    id: "url-query-secret",
    description: "A credential in a URL query string: sig=, signature=, token=, access_token=, api_key=, key=, password=, X-Amz-Signature=, X-Goog-Signature=",
    keywords: ["sig=", "signature=", "token=", "key=", "password=", "pwd=", "secret=", "auth=", "credential="],
    pattern: /[?&;](?:sig|signature|token|access_token|refresh_token|id_token|auth_token|private_token|api_key|apikey|api-key|key|auth|password|passwd|pwd|secret|client_secret|x-amz-signature|x-amz-security-token|x-goog-signature|x-goog-credential|credential)=([^&\s#"'<>\\`]{8,4096})/i,
    validate: (s) => plausibleLooseValue(decodeURIComponentSafe(s)) || (/^[A-Za-z0-9%_.~+/-]{16,}$/.test(s) && shannon(s) >= 3.5 && /\d/.test(s)),
    examples: [
      `https://api.example.test/v1/export?format=csv&token=${fake(A.alnum, 32, 401)}`,
      `https://bucket.s3.amazonaws.com/a.tgz?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=${fake(A.hex, 64, 402)}`,
      `wss://stream.example.test/live?api_key=${fake(A.alnum, 40, 403)}`,
    ],
    negatives: ["https://example.test/?token=${TOKEN}", "https://example.test/search?key=value&page=2", "https://example.test/?sort_key=created_at&token=<token>", "?key=user_profile_settings"],
  },
  {
    id: "cli-secret-flag",
    description: "A value after a secret-named command-line flag: --password X, --token=X, --api-key 'X', --client-secret X, and `aws configure set aws_secret_access_key X`-style setters",
    keywords: ["pass", "pwd", "secret", "token", "key", "auth", "cred", "sas", "sig"],
    pattern:
      /(?<![\w-])(?:--?(?<f>[A-Za-z0-9][A-Za-z0-9_-]{0,40})(?:=|[^\S\n]{1,4})|(?:configure|config|secret|secrets|env|variable|var)[^\S\n]+(?:set|add|put|create)[^\S\n]+(?<n>[A-Za-z0-9_.-]{1,60})[^\S\n]{1,4}(?:--body[^\S\n]{1,4}|--value[^\S\n]{1,4})?)(?:"(?<s>[^"\n]{6,512})"|'(?<s2>[^'\n]{6,512})'|(?<s3>[^\s"'`;|&<>()]{6,512}))/,
    validate: (s, m) => {
      const flag = /^--?([A-Za-z0-9][A-Za-z0-9_-]{0,40})/.exec(m)?.[0];
      const name = flag ?? /(?:set|add|put|create)[^\S\n]+([A-Za-z0-9_.-]{1,60})/.exec(m)?.[1] ?? "";
      if (flag ? !SECRET_FLAG.test(flag) : !isSecretName(name)) return false;
      return plausibleLooseValue(s, 6) || (/^["']/.test(m.slice(m.length - s.length - 1)) && plausiblePassword(s) && charClasses(s) >= 3);
    },
    examples: [
      `mongosh --username admin --password ${fake(A.password, 18, 411)} --host db`,
      `yarn config set npmAuthToken ${fake(A.alnum, 36, 412)}`,
      `gh secret set DEPLOY_TOKEN --body "${fake(A.alnum, 30, 413)}"`,
      `vault login --token=${fake(A.alnum, 26, 414)}1`,
      `./deploy.sh --api-key '${fake(A.password, 24, 415)}' --region eu-west-1`,
    ],
    negatives: ["pnpm test --passWithNoTests", "git commit --author dev --token-file ./t.txt", "npm install --save-dev token-cli", "deploy --password-stdin < pw.txt", "cli --api-key $API_KEY", "mycli --token ${TOKEN}", "--max-tokens 4096", "run --key-file ./id_ed25519", "aws configure set region eu-west-1"],
  },
  {
    id: "cli-password-arg",
    description: "A password after -p / -P / -a in database, login and archive commands (mysql -pX, az login -p 'X', docker login -p X, sshpass -p X, redis-cli -a X, openssl -pass pass:X)",
    keywords: ["mysql", "mariadb", "sshpass", "docker", "podman", "helm", "login", "psql", "mongo", "redis-cli", "zip", "7z", "openssl", "pass:"],
    pattern:
      /(?:\b(?:mysql|mysqldump|mariadb|mysqladmin)\b[^\n|;&]{0,300}?\s-p(?<s>[^\s"'`;|&<>()-][^\s"'`;|&<>()]{3,255})|\b(?:az|docker|podman|helm|oc|sshpass|login|redis-cli|zip|unzip|7z)\b[^\n|;&]{0,300}?\s-[pPa](?:[^\S\n]{1,4}|(?=["']))(?:"(?<s2>[^"\n]{4,256})"|'(?<s3>[^'\n]{4,256})'|(?<s4>[^\s"'`;|&<>()-][^\s"'`;|&<>()]{5,255}))|\bpass:(?<s5>[^\s"'`;|&<>()]{4,256}))/,
    validate: (s, m) => {
      if (isPlaceholder(s) || isTemplate(s) || /^\d+(?::\d+)*$/.test(s) || /^[\d.]+:\d+/.test(s)) return false;
      if (/\b(?:docker|podman)\b/.test(m) && !/\blogin\b/.test(m)) return false;
      const quoted = /["']$/.test(m.slice(0, m.length - s.length));
      return quoted ? plausiblePassword(s) && charClasses(s) >= 2 : plausibleLooseValue(s, 6) || charClasses(s) >= 3;
    },
    examples: [
      `mysql -h db.internal -u root -p${fake(A.password, 16, 421)} app`,
      `az login --service-principal -u ${fake(A.hex, 8, 422)} -p '${fake(A.password, 34, 423)}' --tenant contoso.onmicrosoft.com`,
      `docker login -u ci -p ${fake(A.alnum, 24, 424)}9 registry.example.test`,
      `redis-cli -h cache -a ${fake(A.alnum, 20, 425)}7 PING`,
      `openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:${fake(A.alnum, 14, 426)}2`,
    ],
    negatives: ["mysql -u root -p mydb", "docker run -p 8080:80 nginx", "docker run -p 127.0.0.1:5432:5432 postgres", "sshpass -p $PASS ssh host", "zip -r out.zip src", "az login -p '${AZ_SECRET}'", "docker run -a stdout busybox"],
  },
  {
    id: "call-secret-arg",
    description: "A secret passed with its name to a setter call: os.environ.setdefault(\"API_KEY\", \"…\"), os.Setenv(\"TOKEN\", \"…\"), headers.set('X-Api-Key', '…')",
    keywords: ["pass", "pwd", "secret", "token", "key", "cred", "auth", "pat"],
    pattern: /\(\s{0,4}["'](?<n>[A-Za-z0-9_.-]{1,60})["']\s{0,4},\s{0,4}(?:"(?<s>[^"\n]{6,512})"|'(?<s2>[^'\n]{6,512})')/,
    validate: (s, m) => genericValidate(s, /["']([A-Za-z0-9_.-]{1,60})["']/.exec(m)?.[1] ?? ""),
    examples: [`os.environ.setdefault("DD_APP_KEY", "${fake(A.hex, 40, 441)}")`, `os.Setenv("MISTRAL_API_KEY", "${fake(A.alnum, 32, 442)}")`, `headers.set('X-Api-Key', '${fake(A.alnum, 36, 443)}')`],
    negatives: ['os.environ.setdefault("API_KEY", "${API_KEY}")', 'config.get("token", "default")', 'headers.set("X-Request-Id", "' + fake(A.alnum, 30, 444) + '")', 'setdefault("password_hint", "first pet name")'],
  },
  {
    id: "generic-secret",
    description: "A value assigned to a secret-named key: KEY=value, key: value, \"password\": \"…\" (entropy, character-class and placeholder checks)",
    keywords: [
      "pass", "pwd", "secret", "token", "key", "cred", "auth", "pat",
    ],
    pattern:
      /(?:pass|pwd|secret|token|key|cred|auth|pat)[A-Za-z0-9_.-]{0,40}["'\]]{0,2}\s{0,4}(?::=|=>|[=:])\s{0,8}(?:"([^"\n]{6,512})"|'([^'\n]{6,512})'|`([^`\n]{6,512})`|([^\s"'`,;(){}[\]<>]{8,512})(?![\w(]))/i,
    entropy: 3.0,
    validate: genericValidate,
    examples: [`DB_PASSWORD=${genericValue}`, `"password": "${genericValue}"`, `client_secret: '${genericValue}'`, `export API_TOKEN="${genericValue}"`, `apiKey = "${genericValue}"`],
    negatives: [
      "password: string", "max_tokens: 4096", '"input_tokens": 12345678', "const token = await getToken();", "API_KEY=${API_KEY}", 'password: "********"',
      "token = response.data.token", "API_KEY=your-api-key-here", '"password": ""', "SECRET_KEY=<your-secret-key>", "token_count = 123456789", 'password = os.environ["DB_PASSWORD"]',
    ],
  },
  {
    id: "prose-secret",
    description: "A random-looking credential next to key / token / secret / password / credential in prose (\"the secret key is …\", \"my Datadog key: …\")",
    keywords: ["key", "token", "secret", "password", "passwd", "passphrase", "credential", "pwd", "pat"],
    pattern:
      /\b(?:(?:api|access|secret|private|app|auth|license|account|admin|master|client|service)[ _-]?)?(?:keys?|tokens?|secrets?|password|passwd|passphrase|credentials?|pwd|pat)\b(?:[^\S\n]{1,3}(?:[A-Za-z][a-z’']{0,14}|[=:→,—–-]|->)){0,5}?(?:[^\S\n]{0,3}(?::|=|->|→|is|was))?[^\S\n]{1,4}[`"'(<[]?(?<s>[A-Za-z0-9_+/=.~!@#$%^&*:-]{10,300})/i,
    validate: (s, m, before) => !lookupKeyWord(m, before) && plausibleProseSecret(s, /(?:keys?|tokens?|secrets?|password|passwd|passphrase|credentials?|creds|pat)[^\S\n]{0,3}(?::|=|is|was|to|as|→|->|-|—)?[^\S\n]{0,3}[`"'(<[]?$/i.test(m.slice(0, m.length - s.length))),
    examples: [
      `the secret key is ${fake(A.alnum, 30, 431)}7 and it expires tomorrow`,
      `here's my Datadog app key: ${fake(A.hex, 40, 432)}`,
      `I rotated the token — new value ${fake(A.alnum + "_-", 36, 433)}3, please update CI`,
      `password was ${fake(A.password, 14, 434)}5!`,
    ],
    negatives: [
      "The key insight is that usage rows are keyed by session_id and timestamps.",
      "the token count was 123456789 and the password policy requires 12 characters",
      "use the key feature-flags-enabled for that",
      "commit token handling: 3f2c9a1b7d4e5f60718293a4b5c6d7e8f9012345",
      "the secret is stored in AWS_SECRET_ACCESS_KEY and read by getSecretValue()",
      "password reset link: https://example.test/reset?step=2",
      "set the key to src/internal/rules.ts",
      "api key id 550e8400-e29b-41d4-a716-446655440000",
    ],
  },
];

/** Ids of the default rules, in priority order. */
export const defaultRuleIds: readonly string[] = defaultRules.map((r) => r.id);

/** Each default pattern with its flags and source as the table built it (see {@link patternChecked}). */
const CHECKED = new WeakMap<RegExp, string>(defaultRules.map((r) => [r.pattern, `${r.pattern.flags}/${r.pattern.source}`]));

/**
 * True for a pattern of the default table, as built: test/rules.test.ts checks that none of them
 * matches the empty string, so the engine need not run each one to check it when it compiles the
 * table (a regex's first run compiles it, and most rules never run on a short text).
 */
export function patternChecked(pattern: RegExp): boolean {
  return CHECKED.get(pattern) === `${pattern.flags}/${pattern.source}`;
}

// The labelled corpus: every rule's secret format in every context (raw, JSON-escaped once and
// twice, code, a curl command, a .env file, split across lines by a backslash-newline
// continuation), plus hard negatives. Deterministic for a seed; all secrets are fake and built
// at run time from parts. Secret spans are marked while building (private-use characters that
// JSON.stringify leaves alone) and the marks removed at the end, so labels are exact even in
// escaped text.
import { ALPHABETS as A, b64url, cat, fake, prng } from "../src/internal/fake.js";
import { VENDOR_FORMATS, sampleOf } from "../src/internal/vendors.js";

/** A labelled secret: which rule should find it and where it is in `text`. */
export interface Label {
  readonly rule: string;
  readonly start: number;
  readonly end: number;
  /** The secret as written in `text` (escaped where the context escapes it). */
  readonly raw: string;
}

/** One corpus text. */
export interface CorpusItem {
  readonly id: string;
  /** Context name (raw, json, json2, code, python, curl, env, split, json-split) or `negative:<kind>`. */
  readonly context: string;
  readonly text: string;
  readonly labels: readonly Label[];
}

const S = "\uE000";
const E = "\uE001";
const m = (s: string) => S + s + E;

type R = () => number;

interface Plant {
  readonly rule: string;
  /** Env var name used in the .env and split contexts. */
  readonly name: string;
  /** The secret's natural form with the secret marked. */
  form(r: R): string;
  /** The secret alone (marked), for contexts that assign it to a name; defaults to `form`. */
  value?(r: R): string;
  /** Overrides the curl context. */
  curl?(r: R): string;
  /** False when the secret cannot be cut by a continuation (multi-line blocks). */
  readonly splittable?: boolean;
}

const pem = (r: R, kind: string) =>
  cat("-----BEGIN ", kind, "PRIVATE", " KEY-----\n", fake(A.base64, 64 * (4 + Math.floor(r() * 8)), r).replace(/(.{64})/g, "$1\n"), fake(A.base64, 20, r), "==\n-----END ", kind, "PRIVATE KEY-----");
const jwt = (r: R) =>
  cat(b64url(`{"alg":"${["HS256", "RS256", "ES256"][Math.floor(r() * 3)]}","typ":"JWT","kid":"${fake(A.hex, 8, r)}"}`), ".", b64url(`{"sub":"${fake(A.digits, 9, r)}","scope":"read write","exp":${1767225600 + Math.floor(r() * 1e6)}}`), ".", fake(A.base64url, 43, r));
const pass = (r: R) => fake(A.alnum, 12 + Math.floor(r() * 12), r);
const host = (r: R) => ["db.internal", "10.0.3.12", "prod-cluster.example.net", "localhost", "cache.svc.cluster.local"][Math.floor(r() * 5)]!;

/** Vendor formats whose whole token is the secret (the others mask only a part of a URL or connection string). */
const VENDOR_PLANTS: Plant[] = VENDOR_FORMATS.filter((v) => !/\(\?<s/.test(v.token)).map((v) => ({ rule: v.id, name: v.env, form: (r: R) => m(sampleOf(v.shape, Math.floor(r() * 1e9))) }));

/** Rules without a plant here: context rules (scored by the format corpus, test/formats.ts) and vendor formats masked in part. */
export const UNPLANTED: readonly string[] = [
  ...VENDOR_FORMATS.filter((v) => /\(\?<s/.test(v.token)).map((v) => v.id),
  "url-query-secret", "cli-secret-flag", "cli-password-arg", "call-secret-arg", "prose-secret",
];

/** One plant per rule of the default table (but {@link UNPLANTED}). */
export const PLANTS: readonly Plant[] = [
  ...VENDOR_PLANTS,
  { rule: "private-key", name: "PRIVATE_KEY", splittable: false, form: (r) => m(pem(r, ["RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED ", "DSA "][Math.floor(r() * 6)]!)) },
  { rule: "aws-access-key-id", name: "AWS_ACCESS_KEY_ID", form: (r) => m(cat(["AK", "AS"][Math.floor(r() * 2)]!, "IA", fake(A.base32, 16, r))) },
  {
    rule: "aws-secret-access-key",
    name: "AWS_SECRET_ACCESS_KEY",
    form: (r) => `aws_secret_access_key = ${m(fake(A.base64, 40, r))}`,
    value: (r) => m(fake(A.base64, 40, r)),
  },
  { rule: "github-token", name: "GITHUB_TOKEN", form: (r) => m(cat("gh", "pousr"[Math.floor(r() * 5)]!, "_", fake(A.alnum, 36, r))) },
  { rule: "github-fine-grained-pat", name: "GH_PAT", form: (r) => m(cat("github", "_pat_", fake(A.alnum, 22, r), "_", fake(A.alnum, 59, r))) },
  { rule: "gitlab-token", name: "GITLAB_TOKEN", form: (r) => m(cat("gl", ["pat", "dt", "rt", "ptt", "ft", "oas"][Math.floor(r() * 6)]!, "-", fake(A.alnum + "_-", 20, r))) },
  {
    rule: "slack-token",
    name: "SLACK_BOT_TOKEN",
    form: (r) => m(cat("xo", "x", "bp"[Math.floor(r() * 2)]!, "-", fake(A.digits, 12, r), "-", fake(A.digits, 13, r), "-", fake(A.alnum, 24, r))),
  },
  {
    rule: "slack-webhook",
    name: "SLACK_WEBHOOK_URL",
    form: (r) => cat("https://hooks.", "slack.com/", m(cat("services/T", fake(A.upper + A.digits, 10, r), "/B", fake(A.upper + A.digits, 10, r), "/", fake(A.alnum, 24, r)))),
  },
  { rule: "stripe-key", name: "STRIPE_SECRET_KEY", form: (r) => m(cat(["sk", "rk"][Math.floor(r() * 2)]!, ["_live_", "_test_"][Math.floor(r() * 2)]!, fake(A.alnum, 24 + Math.floor(r() * 76), r))) },
  { rule: "anthropic-api-key", name: "ANTHROPIC_API_KEY", form: (r) => m(cat("sk-", "ant-", "api03-", fake(A.alnum + "_-", 93, r), "AA")) },
  {
    rule: "openai-api-key",
    name: "OPENAI_API_KEY",
    form: (r) => m(r() < 0.7 ? cat("sk-", ["proj", "svcacct", "admin"][Math.floor(r() * 3)]!, "-", fake(A.alnum + "_-", 80 + Math.floor(r() * 80), r)) : cat("sk-", fake(A.alnum, 20, r), "T3Blbk", "FJ", fake(A.alnum, 20, r))),
  },
  { rule: "google-api-key", name: "GOOGLE_API_KEY", form: (r) => m(cat("AI", "za", "Sy", fake(A.alnum + "_-", 33, r))) },
  { rule: "npm-token", name: "NPM_TOKEN", form: (r) => m(cat("np", "m_", fake(A.alnum, 36, r))) },
  { rule: "pypi-token", name: "PYPI_TOKEN", form: (r) => m(cat("py", "pi-", "AgEIcHlwaS5vcmc", fake(A.base64url, 60 + Math.floor(r() * 100), r))) },
  { rule: "huggingface-token", name: "HF_TOKEN", form: (r) => m(cat("h", "f_", fake(A.alnum, 34, r))) },
  { rule: "sendgrid-api-key", name: "SENDGRID_API_KEY", form: (r) => m(cat("S", "G.", fake(A.base64url, 22, r), ".", fake(A.base64url, 43, r))) },
  { rule: "vault-token", name: "VAULT_TOKEN", form: (r) => m(cat("hv", "sbr"[Math.floor(r() * 3)]!, ".", fake(A.base64url, 24 + Math.floor(r() * 80), r))) },
  { rule: "jwt", name: "ID_TOKEN", form: (r) => m(jwt(r)) },
  { rule: "jwt-base64", name: "SA_TOKEN_B64", form: (r) => m(Buffer.from(jwt(r)).toString("base64")) },
  {
    rule: "url-credentials",
    name: "DATABASE_URL",
    form: (r) => {
      const scheme = ["postgres", "postgresql", "mysql", "mongodb+srv", "redis", "amqp", "https", "rediss"][Math.floor(r() * 8)]!;
      return `${scheme}://${["app", "svc_user", "admin", "deploy", ""][Math.floor(r() * 5)]}:${m(pass(r))}@${host(r)}:${1000 + Math.floor(r() * 9000)}/${["prod", "app", "0", "vhost"][Math.floor(r() * 4)]}`;
    },
  },
  {
    rule: "auth-header",
    name: "AUTH_HEADER",
    form: (r) => (r() < 0.6 ? `Authorization: Bearer ${m(fake(A.alnum + "._-", 32 + Math.floor(r() * 40), r))}` : `Authorization: Basic ${m(Buffer.from(`svc-${fake(A.lower, 5, r)}:${pass(r)}`).toString("base64"))}`),
    curl: (r) => `curl -sS -H "Authorization: Bearer ${m(fake(A.alnum + "._-", 40, r))}" https://api.example.test/v2/me`,
  },
  {
    rule: "curl-user",
    name: "CURL_CMD",
    form: (r) => `curl -s -u ${["admin", "ci", "deploy"][Math.floor(r() * 3)]}:${m(pass(r))} https://ci.example.test/job/build`,
    curl: (r) => `curl --fail --user "jenkins:${m(pass(r))}" -X POST https://ci.example.test/job/x/build`,
  },
  {
    rule: "generic-secret",
    name: "DB_PASSWORD",
    form: (r) => {
      const v = m(fake(A.password, 16 + Math.floor(r() * 16), r));
      const k = Math.floor(r() * 5);
      return [`DB_PASSWORD=${v}`, `"client_secret": "${v}"`, `api_key = '${v}'`, `SESSION_SECRET="${v}"`, `password: ${v}`][k]!;
    },
    value: (r) => m(fake(A.password, 16 + Math.floor(r() * 16), r)),
    curl: (r) => `curl -X POST https://auth.example.test/login -H 'Content-Type: application/json' -d '{"username":"ci","password":"${m(fake(A.alnum, 20, r))}"}'`,
  },
];

const CONTEXTS: Record<string, (p: Plant, r: R) => string> = {
  raw: (p, r) => `Here is what I found in the config:\n${p.form(r)}\nLet me know if you need anything else.`,
  json: (p, r) => JSON.stringify({ type: "tool_result", tool_use_id: "toolu_" + fake(A.alnum, 24, r), content: `$ cat config\n${p.form(r)}\n(exit 0)` }),
  json2: (p, r) => JSON.stringify(JSON.stringify({ cmd: "deploy", input: { note: "from ticket", value: p.form(r) } })),
  code: (p, r) => `import { Client } from "./client.js";\n\nconst config = {\n  region: "eu-west-1",\n  value: \`${p.form(r)}\`,\n};\nexport const client = new Client(config);\n`,
  python: (p, r) => `import os\n\nSETTINGS = """\n${p.form(r)}\n"""\n\ndef main():\n    print(len(SETTINGS))\n`,
  curl: (p, r) => (p.curl ? p.curl(r) : `curl -sS -X POST https://api.example.test/v1/items -H 'Content-Type: text/plain' --data-raw '${p.form(r)}'`),
  env: (p, r) => {
    const v = p.value ? p.value(r) : p.form(r);
    const line = v.includes("\n") ? `${p.name}="${v}"` : `${p.name}=${v}`;
    return `# .env (production)\nNODE_ENV=production\nPORT=3000\n${line}\nLOG_LEVEL=debug\nFEATURE_FLAGS=a,b,c\n`;
  },
  split: (p, r) => {
    const v = p.value ? p.value(r) : p.form(r);
    const a = v.indexOf(S) + 1;
    const b = v.indexOf(E);
    const cut = a + Math.max(4, Math.floor((b - a) / 2));
    return `docker run --rm \\\n  -e ${p.name}=${v.slice(0, cut)}\\\n${v.slice(cut)} \\\n  registry.example.test/app:1.4.2`;
  },
  "json-split": (p, r) => JSON.stringify({ type: "tool_use", input: { command: CONTEXTS.split!(p, r) } }),
};

function unmark(text: string, rule: string): { text: string; labels: Label[] } {
  let out = "";
  const labels: Label[] = [];
  let open = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === S) open = out.length;
    else if (c === E) {
      labels.push({ rule, start: open, end: out.length, raw: out.slice(open) });
      open = -1;
    } else out += c;
  }
  return { text: out, labels };
}

function negatives(r: R): { kind: string; text: string }[] {
  const uuid = () => `${fake(A.hex, 8, r)}-${fake(A.hex, 4, r)}-4${fake(A.hex, 3, r)}-a${fake(A.hex, 3, r)}-${fake(A.hex, 12, r)}`;
  const sha = () => fake(A.hex, 40, r);
  const out: { kind: string; text: string }[] = [];
  const add = (kind: string, text: string) => out.push({ kind, text });
  for (let i = 0; i < 6; i++) {
    add("uuid", `{"sessionId":"${uuid()}","uuid":"${uuid()}","parentUuid":"${uuid()}","requestId":"req_${fake(A.alnum, 24, r)}"}`);
    add("uuid", `session ${uuid()} resumed; tool_use_id toolu_${fake(A.alnum, 24, r)}; message msg_${fake(A.alnum, 24, r)}`);
    add("git-sha", `commit ${sha()}\nAuthor: Dev <dev@example.test>\n\n    fix: bump deps\n\ncommit ${sha()}\nMerge: ${sha().slice(0, 7)} ${sha().slice(0, 7)}`);
    add("git-sha", `${sha().slice(0, 7)} HEAD@{0}: commit: update token handling\n${sha()} refs/heads/main\n"after": "${sha()}"`);
    add("checksum", `${fake(A.hex, 64, r)}  dist/app-linux-amd64.tar.gz\n${fake(A.hex, 32, r)}  README.md\nsha256:${fake(A.hex, 64, r)}`);
    add("checksum", `"digest": "sha256:${fake(A.hex, 64, r)}", "etag": "\\"${fake(A.hex, 32, r)}\\""`);
    add("integrity", `"node_modules/left-pad": {\n  "version": "1.3.0",\n  "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",\n  "integrity": "sha512-${fake(A.base64, 86, r)}=="\n}`);
    add("integrity", `left-pad@^1.3.0:\n  resolution: {integrity: sha512-${fake(A.base64, 86, r)}==}\n  "integrity": "sha1-${fake(A.base64, 27, r)}="`);
    add("base64-image", `data:image/png;base64,iVBORw0KGgo${fake(A.base64, 2000 + Math.floor(r() * 4000), r)}==`);
    add("base64-image", JSON.stringify({ type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j/4AAQSkZJRg" + fake(A.base64, 3000, r) } }));
  }
  const placeholders = [
    "export GITHUB_TOKEN=${GITHUB_TOKEN}", "API_KEY=<your-key>", "OPENAI_API_KEY=sk-...", "Authorization: Bearer ${TOKEN}", "Authorization: Bearer <token>",
    'curl -H "Authorization: Bearer $API_TOKEN" https://api.example.test', "DATABASE_URL=postgres://user:password@localhost:5432/mydb", "password: ${DB_PASSWORD}",
    '"password": "<password>"', "SECRET_KEY=changeme", "STRIPE_SECRET_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx", "token: {{ vault_token }}", "api_key = os.environ['API_KEY']",
    "const apiKey = process.env.OPENAI_API_KEY;", "AWS_SECRET_ACCESS_KEY=your-secret-access-key", "ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "redis://:${REDIS_PASSWORD}@redis:6379",
    "curl -u $USER:$TOKEN https://api.example.test", "password = getpass.getpass()", "HF_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "-----BEGIN PRIVATE KEY-----\n<your private key here>\n-----END PRIVATE KEY-----",
    'SLACK_WEBHOOK_URL="https://hooks.slack.com/services/XXX/YYY/ZZZ"', "mongodb://<username>:<password>@cluster0.example.net/test", "password: ********", "token = None",
  ];
  for (const p of placeholders) add("placeholder", p);
  const docs = [
    cat("aws_access_key_id = AKIA", "IOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfi", "CYEXAMPLEKEY"),
    cat("stripe.api_key = 'sk_test_", "4eC39HqLyjWDarjtT1zdp7dc'"),
    cat("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"),
    "Authorization: Basic dXNlcjpwYXNzd29yZA==",
    "curl -u user:password https://example.com/api",
    "https://user:pass@example.com/path",
    "AIzaSyDUMMYKEYEXAMPLE-EXAMPLE-EXAMPLE12",
  ];
  for (const d of docs) add("doc-example", d);
  const prose = [
    '"usage": {"input_tokens": 12, "cache_read_input_tokens": 48211, "output_tokens": 913, "max_tokens": 32000}',
    "The bearer token is passed in the Authorization header; rotate the secret key every 90 days.",
    "interface Login { username: string; password: string; token?: string }",
    "const token = await auth.getAccessToken();\nif (!token) throw new Error('no token');",
    "def login(username, password):\n    session.token = create_token(username)\n    return session.token",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + fake(A.base64, 43, r) + " dev@laptop",
    "-----BEGIN CERTIFICATE-----\n" + fake(A.base64, 64 * 6, r).replace(/(.{64})/g, "$1\n") + "-----END CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----\n" + fake(A.base64, 64 * 4, r).replace(/(.{64})/g, "$1\n") + "-----END PUBLIC KEY-----",
    "git push -u origin feature/token-refresh && docker run -u 1000:1000 app",
    "Visit https://docs.example.test:8443/guide?token_type=bearer#auth for the password reset flow.",
    "tasks: task-runner-component-library-for-react-native-and-web-v2, disk-usage-report",
    "pk_live_" + fake(A.alnum, 24, r) + " is the publishable key (safe to embed)",
    '{"cwd":"/home/dev/project","gitBranch":"fix/secret-scanning","version":"2.1.38","pwd":"/home/dev/project"}',
  ];
  for (const p of prose) add("prose", p);
  return out;
}

/** Build the labelled corpus: every plant in every context `variants` times, then the hard negatives. */
export function generateLabelledCorpus(seed = 1, variants = 3): CorpusItem[] {
  const r = prng(seed);
  const items: CorpusItem[] = [];
  for (const p of PLANTS) {
    for (const [ctx, build] of Object.entries(CONTEXTS)) {
      if ((ctx === "split" || ctx === "json-split") && p.splittable === false) continue;
      for (let v = 0; v < variants; v++) {
        const { text, labels } = unmark(build(p, r), p.rule);
        items.push({ id: `${p.rule}/${ctx}/${v}`, context: ctx, text, labels });
      }
    }
  }
  for (let v = 0; v < variants; v++) {
    for (const n of negatives(r)) items.push({ id: `negative/${n.kind}/${items.length}`, context: `negative:${n.kind}`, text: n.text, labels: [] });
  }
  return items;
}

/** A fresh fake secret of `rule`, unmarked, and the text it sits in (its natural form). */
export function plantFor(rule: string, seed: number): { form: string; secret: string } {
  const p = PLANTS.find((x) => x.rule === rule);
  if (!p) throw new Error(`no plant for rule ${rule}`);
  const { text, labels } = unmark(p.form(prng(seed)), rule);
  return { form: text, secret: labels[0]!.raw };
}

import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { MASK_PATTERN, createRedactor, isRedactError, memoryKey, type JsonValue } from "../src/index.js";
import { buildView, viewText } from "../src/internal/view.js";
import { plantFor } from "./corpus.js";

const key = memoryKey("11".repeat(32));
const red = createRedactor({ key });
const gh = plantFor("github-token", 7).secret;
const pg = plantFor("url-credentials", 8);
const pem = plantFor("private-key", 9).secret;

describe("masking", () => {
  it("replaces only the secret with [REDACTED:<rule>:<8 hex>]", () => {
    const r = red.redactString(`token is ${gh}, keep it`);
    expect(r.value).toMatch(/^token is \[REDACTED:github-token:[0-9a-f]{8}\], keep it$/);
    expect(r.rules).toEqual(["github-token"]);
    expect(r.hashes).toEqual([red.hash(gh)]);
    expect(r.findings[0]).toMatchObject({ rule: "github-token", start: 9, end: 9 + gh.length, path: [], inKey: false });
    expect(JSON.stringify(r)).not.toContain(gh);
  });

  it("keeps the user of a URL and masks the password", () => {
    const r = red.redactString(pg.form);
    expect(r.value).toBe(pg.form.replace(`:${pg.secret}@`, `:[REDACTED:url-credentials:${red.hash(pg.secret)}]@`));
  });

  it("equal secrets correlate across contexts; another key gives other tags", () => {
    const a = red.redactString(`GITHUB_TOKEN=${gh}`).hashes;
    const b = red.redactString(JSON.stringify(JSON.stringify({ t: `x\n${gh}\n` }))).hashes;
    expect(a).toEqual(b);
    const other = createRedactor({ key: memoryKey("22".repeat(32)) }).redactString(gh).hashes;
    expect(other).not.toEqual(a);
  });

  it("is idempotent: masked text is not masked again", () => {
    const once = red.redactString(`a ${gh} b ${pg.form} password="${"Zq9!x" + "Lw2#rT8pV"}"`).value;
    expect(red.redactString(once).value).toBe(once);
    expect([...once.matchAll(MASK_PATTERN)].length).toBe(3);
  });

  it("finds a secret inside an escaped JSON string inside a string, keeping the escaping valid", () => {
    const inner = JSON.stringify({ cmd: `export GITHUB_TOKEN="${gh}"\necho ok`, pem });
    const doubly = JSON.stringify(inner); // a string holding escaped JSON
    const r = red.redactString(doubly);
    expect(r.rules).toEqual(["github-token", "private-key"]);
    const back = JSON.parse(JSON.parse(r.value) as string) as { cmd: string; pem: string };
    expect(back.cmd).toMatch(/^export GITHUB_TOKEN="\[REDACTED:github-token:[0-9a-f]{8}\]"\necho ok$/);
    expect(back.pem).toMatch(/^\[REDACTED:private-key:[0-9a-f]{8}\]$/);
  });

  it("decodes \\uXXXX escapes", () => {
    const escaped = [...gh].map((c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")).join("");
    const r = red.redactString(`{"t":"${escaped}"}`);
    expect(r.value).toMatch(/^\{"t":"\[REDACTED:github-token:[0-9a-f]{8}\]"\}$/);
    expect(r.hashes).toEqual([red.hash(gh)]);
  });

  it("joins a key broken by a backslash-newline continuation and masks both parts", () => {
    const text = `docker run \\\n  -e GITHUB_TOKEN=${gh.slice(0, 20)}\\\n${gh.slice(20)} \\\n  app`;
    const r = red.redactString(text);
    expect(r.value).toBe(`docker run \\\n  -e GITHUB_TOKEN=[REDACTED:github-token:${red.hash(gh)}] \\\n  app`);
  });

  it("finds secrets in multi-line tool output", () => {
    const out = ["$ env | sort", "HOME=/home/dev", `GITHUB_TOKEN=${gh}`, `DATABASE_URL=${pg.form}`, "$ cat id_rsa", pem, "(exit 0)"].join("\n");
    const r = createRedactor({ key, quarantineRules: [] }).redactString(out);
    expect(r.rules).toEqual(["github-token", "private-key", "url-credentials"]);
    expect(r.value).toContain("HOME=/home/dev\n");
    expect(r.value).not.toContain(gh);
    expect(r.value.split("\n").length).toBe(7);
  });

  it("view text (fast path) equals the mapped view, and maps cover whole escapes", () => {
    const chars = fc.constantFrom("\\", '"', "n", "u", "0", "0", "4", "1", "a", "F", "\n", " ", "x", "/", "'");
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 60 }).map((a) => a.join("")), (s) => {
        const v = buildView(s);
        expect(viewText(s)).toBe(v.text);
        if (v.start && v.end) {
          for (let i = 0; i < v.text.length; i++) {
            expect(v.start[i]!).toBeLessThan(v.end[i]!);
            if (i > 0) expect(v.start[i]!).toBeGreaterThanOrEqual(v.end[i - 1]!);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe("redactValue", () => {
  const record = {
    type: "user",
    message: { content: [{ type: "tool_result", content: `GITHUB_TOKEN=${gh}` }, { type: "text", text: "hello" }] },
    env: { DB_PASSWORD: "Qm7#vT2p" + "Xz9!kL4w", HOME: "/home/dev" },
    [gh]: true,
    n: 3,
    ok: null,
  };

  it("walks nested objects, arrays and keys; masks secret-named values whole; leaves the input alone", () => {
    const before = JSON.stringify(record);
    const r = red.redactValue(record as JsonValue);
    expect(JSON.stringify(record)).toBe(before);
    const out = JSON.stringify(r.value);
    expect(out).not.toContain(gh);
    expect(out).not.toContain("Xz9!kL4w");
    expect(r.rules).toEqual(["generic-secret", "github-token"]);
    expect(r.findings.map((f) => [f.path.join("/"), f.inKey])).toEqual([
      ["message/content/0/content", false],
      ["env/DB_PASSWORD", false],
      [`[REDACTED:github-token:${red.hash(gh)}]`, true],
    ]);
    expect((r.value as { env: { HOME: string } }).env.HOME).toBe("/home/dev");
  });

  it("masks the same record alike on every call: keys seen clean before, a secret key each time", () => {
    const r = createRedactor({ key });
    const rec = { text: "hello", [gh]: "x" } as JsonValue;
    const first = r.redactRecord(rec);
    for (let i = 0; i < 3; i++) expect(r.redactRecord(rec)).toEqual(first);
    expect(first.status === "ok" && first.findings.map((f) => [f.rule, f.inKey])).toEqual([["github-token", true]]);
    // A key seen without a secret still has its value scanned.
    expect(r.redactRecord({ text: `token ${gh}` })).toMatchObject({ status: "ok", rules: ["github-token"] });
    expect(r.redactRecord({ text: "nothing here" })).toEqual({ status: "ok", value: { text: "nothing here" }, rules: [], hashes: [], findings: [] });
  });

  it("rejects non-JSON values with InvalidValue and deep nesting with TooDeep", () => {
    for (const bad of [{ a: 1n }, { a: () => 1 }, { d: new Date(0) }, [Symbol("x")], { n: Number.NaN }]) {
      try {
        red.redactValue(bad as unknown as JsonValue);
        expect.unreachable();
      } catch (e) {
        expect(isRedactError(e) && e.code).toBe("InvalidValue");
      }
    }
    let deep: JsonValue = "x";
    for (let i = 0; i < 300; i++) deep = [deep];
    expect(() => red.redactValue(deep)).toThrow(/deeper than maxDepth 256/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => red.redactValue(cyclic as JsonValue)).toThrow(expect.objectContaining({ code: "TooDeep" }));
  });
});

describe("redactRecord and quarantine", () => {
  it("the record hash is the golden one: HMAC over the record's canonical JSON, nesting past the cap as \"[depth]\"", () => {
    // Expected hashes were computed by the writer before it moved to @lake/canonical-json: the bytes must not change.
    const deep = { b: [1.5, -0, 1e21, 'é\u2028"x'], a: { z: { y: { x: { w: "past the cap" } } } }, "\u00e9": null, A: true };
    expect(createRedactor({ key, maxDepth: 3 }).redactRecord(deep)).toEqual({ status: "quarantined", rules_fired: ["limit:depth"], hash: "bb8c1d4663a749892cd0b2ef9b3fc6ba874f17efe52f6ce703e5ce5e4e8f850f" });
    const rec = { type: "user", text: `token ${gh}`, n: [0.1, 2, { k: false }], Z: "last", a: "first" };
    expect(createRedactor({ key, quarantineRules: ["github-token"] }).redactRecord(rec)).toEqual({ status: "quarantined", rules_fired: ["github-token"], hash: "c529233678720c148226750dc63dc9f1a8de5668a25be62d5d7605a6be314f36" });
  });

  it("quarantines a record holding a private key by default, keeping no part of it", () => {
    const rec = { type: "tool_result", content: `cat ~/.ssh/id_rsa\n${pem}`, note: gh };
    const q = red.redactRecord(rec);
    expect(q).toEqual({ status: "quarantined", rules_fired: ["github-token", "private-key"], hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(Object.keys(q).sort()).toEqual(["hash", "rules_fired", "status"]);
    // Same record, same key → same hash, whatever the key order; another key → another hash.
    expect(red.redactRecord({ note: gh, content: rec.content, type: rec.type })).toEqual(q);
    expect((createRedactor({ key: memoryKey() }).redactRecord(rec) as { hash: string }).hash).not.toBe((q as { hash: string }).hash);
  });

  it("masks private keys instead when the policy has no quarantine rules", () => {
    const r = createRedactor({ key, quarantineRules: [] }).redactRecord({ content: pem });
    expect(r.status).toBe("ok");
    expect(JSON.stringify(r)).toMatch(/\[REDACTED:private-key:[0-9a-f]{8}\]/);
  });

  it("quarantines a record nested past maxDepth as limit:depth", () => {
    let deep: JsonValue = gh;
    for (let i = 0; i < 20; i++) deep = { a: deep };
    const q = createRedactor({ key, maxDepth: 10 }).redactRecord(deep);
    expect(q).toMatchObject({ status: "quarantined", rules_fired: ["limit:depth"] });
    expect(JSON.stringify(q)).not.toContain(gh);
  });

  it("passes a clean record through unchanged", () => {
    const rec = { type: "assistant", message: { usage: { input_tokens: 12, output_tokens: 900, max_tokens: 32000 }, content: "done" } };
    expect(red.redactRecord(rec)).toEqual({ status: "ok", value: rec, rules: [], hashes: [], findings: [] });
  });

  it("validates options and rules with typed errors", () => {
    const bad = (f: () => unknown, code: string) => {
      try {
        f();
        expect.unreachable();
      } catch (e) {
        expect(isRedactError(e) && e.code).toBe(code);
      }
    };
    bad(() => createRedactor({ key, quarantineRules: ["nope"] }), "InvalidOption");
    bad(() => createRedactor({ key, maxDepth: 0 }), "InvalidOption");
    bad(() => createRedactor({ key: {} as never }), "InvalidOption");
    const r0 = red.rules[0]!;
    bad(() => createRedactor({ key, rules: [r0, r0] }), "InvalidRule");
    bad(() => createRedactor({ key, rules: [{ ...r0, id: "Bad Id" }] }), "InvalidRule");
    bad(() => createRedactor({ key, rules: [{ ...r0, keywords: [] }] }), "InvalidRule");
    bad(() => createRedactor({ key, rules: [{ ...r0, pattern: /x*/ }] }), "InvalidRule");
  });

  it("accepts a custom rule table", () => {
    const internal = {
      id: "acme-token",
      description: "ACME internal token",
      keywords: ["acme_"],
      pattern: /\bacme_[a-z0-9]{16}\b/,
      examples: [],
      negatives: [],
    };
    const r = createRedactor({ key, rules: [...red.rules, internal] });
    expect(r.redactString("use acme_" + "0a1b2c3d4e5f6a7b now").rules).toEqual(["acme-token"]);
  });
});

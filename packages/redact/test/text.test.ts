import { describe, expect, it } from "vitest";
import { CLAIM_TEXT_FIELDS, MASK_PATTERN, isRedactError, memoryKey, redactText } from "../src/index.js";
import { cat, fake, ALPHABETS as A } from "../src/internal/fake.js";

const key = memoryKey("00".repeat(32));
const ghp = cat("gh", "p_", fake(A.alnum, 36, 7));
const pw = fake(A.password, 20, 8);

describe("redactText (claims and other free text)", () => {
  it("masks every claim text field and keeps the others byte for byte", () => {
    const claim = { agent: "agent-1", kind: "fact", text: `deploy with GITHUB_TOKEN=${ghp} and password: ${pw}`, subject: `token ${ghp}`, repo: "org/repo" };
    const r = redactText(key, claim);
    const out = JSON.stringify(r.value);
    expect(out).not.toContain(ghp);
    expect(out).not.toContain(pw);
    expect(r.value.agent).toBe("agent-1");
    expect(r.value.repo).toBe("org/repo");
    expect(r.value.text.match(MASK_PATTERN)?.length).toBe(2);
    expect(r.rules).toEqual(["generic-secret", "github-token"]);
    expect(r.findings.map((f) => f.path)).toEqual([["text"], ["text"], ["subject"]]);
    // The same secret in two fields carries one hash.
    expect(r.hashes.length).toBe(2);
    expect(claim.text).toContain(ghp); // the input is not modified
  });

  it("is idempotent and masks a private key instead of withholding the claim", () => {
    const body = fake(A.base64, 64 * 5, 9).replace(/(.{64})/g, "$1\n");
    const text = `the key was -----BEGIN OPENSSH PRIVATE KEY-----\n${body}-----END OPENSSH PRIVATE KEY----- (rotated)`;
    const once = redactText(key, { text });
    expect(once.rules).toEqual(["private-key"]);
    expect(once.value.text).toMatch(/^the key was \[REDACTED:private-key:[0-9a-f]{8}\] \(rotated\)$/);
    const twice = redactText(key, once.value);
    expect(twice.value).toEqual(once.value);
    expect(twice.findings).toEqual([]);
  });

  it("calls a key function only when a secret is found", () => {
    let calls = 0;
    const lazy = () => (calls++, key);
    expect(redactText(lazy, { text: "Use pnpm, never npm install" }).value.text).toBe("Use pnpm, never npm install");
    expect(calls).toBe(0);
    const r = redactText(lazy, { text: `token ${ghp}` });
    expect(calls).toBe(1);
    expect(r.value.text).toBe(redactText(key, { text: `token ${ghp}` }).value.text);
  });

  it("takes other field lists and refuses a key it did not make", () => {
    expect(CLAIM_TEXT_FIELDS).toEqual(["text", "subject", "repo"]);
    expect(redactText(key, { note: `ghtoken ${ghp}`, text: ghp }, ["note"]).value.text).toBe(ghp);
    let err: unknown;
    try {
      redactText({} as never, { text: "x" });
    } catch (e) {
      err = e;
    }
    expect(isRedactError(err) && err.code).toBe("InvalidOption");
  });
});

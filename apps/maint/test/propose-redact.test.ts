// propose masks secrets before anything is written: the claim event, the promoted claim and the
// snapshot (its bytes and its FTS index) hold masks, never the secret.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createRedactor, loadOrCreateKey } from "@lake/redact";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { BACKENDS, freshStore, initStore, keys, run } from "./helpers.js";

afterAll(cleanupTempDirs);

// Fake secrets assembled at run time.
const ghp = ["gh", "p_", "Zr8kQ2mW9xT4vB7nL1pS6dF3hJ0cY5aE8uR2"].join("");
const password = ["Vq7", "!mK2#pX9", "zL4wR8"].join("");

describe.each(BACKENDS)("propose masks secrets (%s)", (backend) => {
  it("no byte of the event, the promoted claim or the snapshot holds the secret; the mask carries the root key's hash", async () => {
    const url = await freshStore(backend, "claims-redact");
    const store = await initStore(url);
    const root = tempDir("claims-root");
    const text = `Deploy with GITHUB_TOKEN=${ghp}; the staging db password is ${password}`;
    const p = await run(["propose", "--store", url, "--root", root, "--agent", "a1", "--repo", "lake", "--subject", `token ${ghp}`, "--text", text, "--json"]);
    expect(p.code, p.err.join()).toBe(0);
    const out = JSON.parse(p.out[0]!);
    expect(out.masked.map((m: { rule: string }) => m.rule).sort()).toEqual(["github-token", "github-token", "prose-secret"]);
    const hash = createRedactor({ key: loadOrCreateKey(root) }).hash(ghp);
    expect(out.event.text).toContain(`GITHUB_TOKEN=[REDACTED:github-token:${hash}]`);
    expect(out.event.subject).toBe(`token [REDACTED:github-token:${hash}]`);

    expect((await run(["promote", "--store", url, "--json"])).code).toBe(0);
    const s = await run(["snapshot", "--store", url, "--json"]);
    expect(s.code, s.err.join()).toBe(0);
    const snap = JSON.parse(s.out[0]!);
    const file = join(tempDir("claims-snap"), "s.sqlite");
    await store.download(`snapshot/${snap.content_hash}.sqlite`, file);

    const blobs: [string, Buffer][] = [];
    for (const k of [...(await keys(store, "claims/")), `snapshot/${snap.content_hash}.sqlite`]) blobs.push([k, Buffer.from((await store.get(k))!.body)]);
    expect(blobs.length).toBe(3);
    for (const [k, b] of blobs) {
      for (const needle of [ghp, password, ghp.slice(4, 20), password.slice(2, 12)]) expect(b.includes(needle), `${k} holds ${needle.slice(0, 4)}…`).toBe(false);
    }
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare("SELECT count(*) AS n FROM claims_fts WHERE claims_fts MATCH ?").get(`"${ghp.slice(4)}"`)).toEqual({ n: 0 });
      expect(db.prepare("SELECT count(*) AS n FROM claims_fts WHERE claims_fts MATCH ?").get("staging")).toEqual({ n: 1 });
    } finally {
      db.close();
    }
    store.close();
  });
});

it("a claim with no secret is written as given and never creates the key file", async () => {
  const url = await freshStore("local", "claims-plain");
  const store = await initStore(url);
  const root = join(tempDir("claims-plain-root"), "root");
  const p = await run(["propose", "--store", url, "--root", root, "--agent", "a1", "--text", "Use pnpm, never npm install", "--json"]);
  expect(p.code, p.err.join()).toBe(0);
  expect(JSON.parse(p.out[0]!)).toMatchObject({ event: { text: "Use pnpm, never npm install" }, masked: [] });
  expect(existsSync(root)).toBe(false);
  const [k] = await keys(store, "claims/events/");
  expect(JSON.parse(readFileSync(join(new URL(url).pathname, k!), "utf8")).text).toBe("Use pnpm, never npm install");
  store.close();
});

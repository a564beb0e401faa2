import { existsSync, mkdirSync, readFileSync, writeFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import {
  LayoutError,
  acquireLease,
  agentKey,
  casUpdate,
  claimEventKey,
  compactedMarkerKey,
  compactedPartKey,
  compactedUsageKey,
  defaultStoreUrl,
  legacyDefaultStorePath,
  digestKey,
  fleetClaimKey,
  initFleet,
  intentKey,
  isLayoutError,
  isLive,
  isUlid,
  leaseKey,
  listLeases,
  openStore,
  parseKey,
  parseStoreUrl,
  quarantineKey,
  readFleet,
  readLease,
  resourceKey,
  sealedKey,
  segmentKey,
  sessionPrefix,
  snapshotBlobKey,
  ulid,
  ulidTime,
  unquoteEtag,
  validatePartitionValue,
  FLEET_KEY,
  SNAPSHOT_LATEST_KEY,
} from "../src/index.js";
import * as storeOnly from "../src/store.js";
import * as root from "../src/index.js";
import { ready, startWorker } from "../src/internal/testing/race.js";

afterAll(() => cleanupTempDirs());

const vec = (name: string) => JSON.parse(readFileSync(new URL(`./vectors/${name}`, import.meta.url), "utf8"));

describe("key layout", () => {
  const builders: Record<string, (...a: never[]) => string> = {
    fleet: () => FLEET_KEY,
    agent: agentKey,
    intent: intentKey,
    lease: leaseKey,
    segment: segmentKey,
    sealed: sealedKey,
    digest: digestKey,
    compactedPart: compactedPartKey,
    compactedUsage: compactedUsageKey,
    compactedMarker: compactedMarkerKey,
    claimEvent: claimEventKey,
    fleetClaim: fleetClaimKey,
    snapshotBlob: snapshotBlobKey,
    snapshotLatest: () => SNAPSHOT_LATEST_KEY,
    quarantine: quarantineKey,
  };
  it("builds the spec's keys and parses them back (golden vectors)", () => {
    const v = vec("keys.json") as { vectors: { build: string; args?: unknown[]; key: string; parsed: unknown }[]; not_keys: string[] };
    for (const c of v.vectors) {
      expect((builders[c.build] as (...a: unknown[]) => string)(...(c.args ?? []))).toBe(c.key);
      expect(parseKey(c.key)).toEqual(c.parsed);
    }
    for (const k of v.not_keys) expect(parseKey(k), k).toBeUndefined();
  });

  it("resourceKey matches sha256sum over repo \\0 resource and separates (ab,c) from (a,bc)", () => {
    for (const c of vec("resource-key.json").vectors as { repo: string; resource: string; resource_key: string }[]) {
      expect(resourceKey(c.repo, c.resource)).toBe(c.resource_key);
    }
    expect(resourceKey("ab", "c")).not.toBe(resourceKey("a", "bc"));
  });

  it("rejects partition values that would break the layout, naming the field", () => {
    for (const bad of ["", "a/b", "a=b", "..", ".hidden", "a b", "a\0b", "x".repeat(201), "é"]) {
      expect(() => validatePartitionValue("agent", bad), JSON.stringify(bad)).toThrow(LayoutError);
    }
    const p = { dt: "2025-03-09", fleet: "f", runtime: "codex", agent: "a", session: "s" };
    expect(() => sessionPrefix({ ...p, agent: "a/b" })).toThrow(/invalid agent "a\/b": character "\/"/);
    expect(() => sessionPrefix({ ...p, dt: "2025-02-29" })).toThrow(/not a calendar date/);
    expect(() => segmentKey(p, 1_000_000)).toThrow(/0\.\.999999/);
    expect(() => compactedPartKey({ dt: "2025-03-09", fleet: "f" }, "XYZ", 0)).toThrow(/gen/);
    expect(() => claimEventKey("2025-03-09", "a", "nope")).toThrow(/ULID/);
    try {
      agentKey("a=b");
    } catch (e) {
      expect(isLayoutError(e, "InvalidKey")).toBe(true);
    }
  });

  it("property: every valid partition round-trips through segmentKey and parseKey; seq order is LIST order", () => {
    const value = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._@+~:-]{0,20}$/);
    const date = fc.date({ min: new Date("2000-01-01"), max: new Date("2099-12-31"), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    fc.assert(
      fc.property(date, value, value, value, value, fc.integer({ min: 0, max: 999_998 }), (dt, fleet, runtime, agent, session, seq) => {
        const p = { dt, fleet, runtime, agent, session };
        const k = segmentKey(p, seq);
        expect(parseKey(k)).toEqual({ kind: "segment", ...p, seq });
        expect(Buffer.compare(Buffer.from(k), Buffer.from(segmentKey(p, seq + 1)))).toBe(-1);
      }),
      { numRuns: 300 },
    );
  });
});

describe("ulid", () => {
  it("encodes the time, sorts in creation order and decodes", () => {
    const t = Date.parse("2025-03-09T10:00:00Z");
    const ids = Array.from({ length: 50 }, () => ulid(t));
    expect(ids.every(isUlid)).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(50);
    expect(ulidTime(ids[0]!)).toBe(t);
    expect(ulidTime("01JNRZ5QX2C3V4B5N6M7K8J9H0")).toBe(1741373497250); // decoded independently (Crockford base32 by hand)
    expect(ulid(0).slice(0, 10)).toBe("0000000000");
    expect(isUlid("01jnrz5qx2c3v4b5n6m7k8j9h0")).toBe(false);
  });
});

describe("store URLs and defaults", () => {
  it("parses file and s3 URLs and refuses others with InvalidUrl", () => {
    expect(parseStoreUrl("file:///srv/lake/fleet")).toEqual({ kind: "file", root: "/srv/lake/fleet", url: "file:///srv/lake/fleet" });
    expect(parseStoreUrl("/srv/x")).toMatchObject({ kind: "file", root: "/srv/x" });
    expect(parseStoreUrl("s3://my-bucket/ctxlake-teamA/")).toEqual({ kind: "s3", bucket: "my-bucket", prefix: "ctxlake-teamA", url: "s3://my-bucket/ctxlake-teamA" });
    expect(parseStoreUrl("s3://my-bucket")).toMatchObject({ bucket: "my-bucket", prefix: "" });
    for (const bad of ["relative/dir", "http://x/y", "s3://B/x", "s3://bucket/../x", ""]) {
      expect(() => parseStoreUrl(bad), bad).toThrow(expect.objectContaining({ code: "InvalidUrl" }));
    }
  });

  it("defaults to $LAKE_STORE, else fleet/ inside the local root; the old default was beside it", () => {
    expect(defaultStoreUrl({ LAKE_STORE: "s3://b1/p" }, "/home/u")).toBe("s3://b1/p");
    expect(defaultStoreUrl({ LAKE_ROOT: "/data/lake" }, "/home/u")).toBe("file:///data/lake/fleet");
    expect(defaultStoreUrl({ XDG_DATA_HOME: "/x/share" }, "/home/u")).toBe("file:///x/share/lake/fleet");
    expect(defaultStoreUrl({}, "/home/u")).toBe("file:///home/u/.local/share/lake/fleet");
    expect(legacyDefaultStorePath({}, "/home/u")).toBe("/home/u/.local/share/fleet");
    expect(legacyDefaultStorePath({ LAKE_ROOT: "/data/lake" }, "/home/u")).toBe("/data/fleet");
  });

  it("unquotes ETags", () => {
    expect(unquoteEtag('"abc"')).toBe("abc");
    expect(unquoteEtag('W/"abc"')).toBe("abc");
    expect(unquoteEtag("abc")).toBe("abc");
  });
});

describe("errors", () => {
  it("carry code, data and cause; the guard refuses an error that only looks like one", () => {
    const e = new LayoutError("Corrupt", "k: bad", { data: { key: "k" }, cause: new Error("root") });
    expect(isLayoutError(e)).toBe(true);
    expect(isLayoutError(e, "Corrupt")).toBe(true);
    expect(isLayoutError(e, "NotFound")).toBe(false);
    expect((e.cause as Error).message).toBe("root");
    expect(e.data.key).toBe("k");
    // Across two real builds of the package: apps/reader/test/error-brands.test.ts.
    expect(isLayoutError(Object.assign(new Error("x"), { code: "Corrupt" }))).toBe(false);
  });
});

describe("on-disk formats", () => {
  it("local etags are sha256 of the content; a stored lease vector is read as written", async () => {
    const dir = tempDir("layout-fmt");
    const s = openStore(pathToFileURL(dir).href);
    const { etag: vecEtag, content } = vec("local-store.json").etag;
    expect((await s.put("x.txt", Buffer.from(content))).etag).toBe(vecEtag);
    const lease = vec("lease.json");
    const key = leaseKey(resourceKey(lease.repo, lease.resource));
    mkdirSync(join(dir, "live", "leases"), { recursive: true });
    writeFileSync(join(dir, ...key.split("/")), JSON.stringify(lease));
    expect(await readLease(s, { repo: lease.repo, resource: lease.resource })).toEqual(lease);
    const now = Date.parse("2030-01-01T00:00:30Z");
    expect(await listLeases(s, { now: () => now })).toEqual([
      { resource_key: resourceKey(lease.repo, lease.resource), repo: lease.repo, resource: lease.resource, status: "held", owner: "agent-7", epoch: 3, expires_at: lease.expires_at, live: true },
    ]);
    // taking it over after expiry (+ skew) continues the epoch
    const r = await acquireLease(s, { repo: lease.repo, resource: lease.resource, owner: "b", ttlSeconds: 10 }, { now: () => Date.parse("2030-01-01T00:01:06Z") });
    expect(r).toEqual({ acquired: true, epoch: 4, owner: "b", expires_at: "2030-01-01T00:01:16.000Z" });
    const stored = JSON.parse(readFileSync(join(dir, ...key.split("/")), "utf8"));
    expect(stored.prev_nonces.slice(0, 2)).toEqual([lease.nonce, ...lease.prev_nonces]);
  });

  it("fleet.json is written once", async () => {
    const s = openStore(pathToFileURL(tempDir("layout-fleet")).href);
    expect(await readFleet(s)).toBeUndefined();
    const a = await initFleet(s, "teamA", () => 0);
    expect(a).toEqual({ created: true, manifest: { fleet_id: "teamA", created_at: "1970-01-01T00:00:00.000Z", schema_version: 1 } });
    const b = await initFleet(s, "teamB");
    expect(b).toEqual({ created: false, manifest: a.manifest });
    expect(await readFleet(s)).toEqual(a.manifest);
  });

  it("isLive applies the skew bound and distrusts expiries beyond the longest ttl", () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    expect(isLive("2030-01-01T00:00:00.000Z", now + 4_999, 5_000)).toBe(true);
    expect(isLive("2030-01-01T00:00:00.000Z", now + 5_001, 5_000)).toBe(false);
    expect(isLive("2031-01-01T00:00:00.000Z", now, 5_000)).toBe(false);
    expect(isLive("garbage", now)).toBe(false);
  });
});

describe("local backend crash safety", () => {
  // The key lock is @lake/durable's lock file (proven-dead holders, the older formats, racing and
  // killed breakers: packages/durable/test/lock.test.ts). Here: where a key's lock lives, the layout's
  // age rule for key locks (held for milliseconds, so one 30 s old is a dead holder on another host),
  // and Locked naming the key after lockTimeoutMs.
  it("a key's lock at its vector path: a live one of another host times out with Locked; one older than 30 s is broken", async () => {
    const dir = tempDir("layout-lock");
    const v = vec("local-store.json").lock;
    mkdirSync(join(dir, ".lake-store", "locks"), { recursive: true });
    writeFileSync(join(dir, v.file), JSON.stringify({ pid: 1, host: "elsewhere", nonce: "live", t: Date.now() }));
    const quick = openStore(pathToFileURL(dir).href, { local: { lockTimeoutMs: 300 } });
    const t0 = Date.now();
    await expect(quick.put(v.key, Buffer.from("{}"))).rejects.toMatchObject({ code: "Locked", data: { key: v.key } });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    writeFileSync(join(dir, v.file), JSON.stringify({ pid: 1, host: "elsewhere", nonce: "old", t: Date.now() - 120_000 }));
    await quick.put(v.key, Buffer.from('{"n":1}'));
    expect(Buffer.from((await quick.get(v.key))!.body).toString()).toBe('{"n":1}');
    expect(existsSync(join(dir, v.file))).toBe(false);
  });

  it("SIGKILLed writers never leave a torn object or a wedged key", async () => {
    const dir = tempDir("layout-kill");
    const url = pathToFileURL(dir).href;
    const s = openStore(url, { local: { lockTimeoutMs: 10_000 } });
    let last = 0;
    for (let round = 0; round < 4; round++) {
      const child = startWorker(["spin", url, "c.json"]);
      await ready(child);
      await new Promise((r) => setTimeout(r, 100 + round * 70));
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
      const cur = await s.get("c.json");
      const n = cur === undefined ? 0 : (JSON.parse(Buffer.from(cur.body).toString()) as { n: number }).n;
      expect(n).toBeGreaterThanOrEqual(last);
      const r = await casUpdate<{ n: number }>(s, "c.json", (c) => ({ n: (c?.n ?? 0) + 1 }));
      expect(r.value?.n).toBe(n + 1);
      last = n + 1;
    }
    expect(last).toBeGreaterThan(4);
    // only temp files of killed writers may remain, never visible as keys
    const keys: string[] = [];
    for await (const o of s.listAll("")) keys.push(o.key);
    expect(keys).toEqual(["c.json"]);
    expect(readdirSync(join(dir, ".lake-store"))).toEqual(expect.arrayContaining(["locks"]));
  }, 60_000);
});

describe("@lake/layout/store", () => {
  it("is the root's store opening, nothing else", () => {
    expect(Object.keys(storeOnly).sort()).toEqual(["LayoutError", "configFile", "configuredAgent", "defaultLocalRoot", "defaultReaderCache", "defaultStoreUrl", "isLayoutError", "legacyDefaultStorePath", "openStore", "parseStoreUrl", "readConfig"]);
    for (const k of Object.keys(storeOnly) as (keyof typeof storeOnly)[]) expect(storeOnly[k]).toBe(root[k]);
  });

  it("@lake/layout/defaults is the defaults and the config file, the same functions as the root exports", async () => {
    const defaults = await import("../src/defaults.js");
    expect(Object.keys(defaults).sort()).toEqual(["LayoutError", "configFile", "configuredAgent", "defaultLocalRoot", "defaultReaderCache", "defaultStoreUrl", "isLayoutError", "legacyDefaultStorePath", "readConfig"]);
    for (const k of Object.keys(defaults) as (keyof typeof defaults)[]) expect(defaults[k]).toBe(root[k]);
  });
});

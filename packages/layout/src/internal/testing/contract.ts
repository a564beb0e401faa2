// The one contract every ObjectStore backend must pass: no-replace create, compare-and-swap
// conflicts, list order and paging, leases with fencing under racing processes, the snapshot
// pointer, uploads and downloads, the roster. `storeContract(backend)` registers it as vitest tests;
// each test gets a fresh fleet root from `backend.fresh`. lake runs it against the local directory
// and S3 backends (test/contract-local.test.ts, test/contract-s3.test.ts).
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  acquireLease,
  casUpdate,
  declareIntent,
  heartbeat,
  leaveRoster,
  listIntents,
  listLeases,
  listRoster,
  openStore,
  publishSnapshot,
  readLease,
  readSnapshotPointer,
  releaseLease,
  renewLease,
  snapshotBlobKey,
  syncSnapshotCache,
  type LeaseAcquireResult,
  type ObjectStore,
} from "../../index.js";
import { race } from "./race.js";

/**
 * A backend under test. It is reached through {@link openStore} by URL (the racing child processes
 * open it the same way), so a new backend is a new URL scheme of `openStore`.
 */
export interface ContractBackend {
  /** Named in the suite's title (`ObjectStore contract: <name>`). */
  readonly name: string;
  /** The URL of a new, empty fleet root; `label` names the test asking. */
  fresh(label: string): Promise<string>;
  /** A sibling root next to `url` (another fleet in the same bucket or directory). */
  sibling(url: string, name: string): string;
}

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const utf8Sort = (keys: string[]) => [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

async function withStore<T>(backend: ContractBackend, label: string, fn: (store: ObjectStore, url: string) => Promise<T>): Promise<T> {
  const url = await backend.fresh(label);
  const store = openStore(url);
  try {
    return await fn(store, url);
  } finally {
    store.close();
  }
}

async function pool<T>(items: readonly T[], n: number, fn: (t: T) => Promise<unknown>): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (i < items.length) await fn(items[i++]!);
  }));
}

/** Register the contract's tests for `backend` (call it at the top level of a vitest test file). */
export function storeContract(backend: ContractBackend): void {
  describe(`ObjectStore contract: ${backend.name}`, () => {
    const dirs: string[] = [];
    const tempDir = (label: string): string => {
      const d = mkdtempSync(join(tmpdir(), `${label}-`));
      dirs.push(d);
      return d;
    };
    afterAll(() => {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    it("reads back what it wrote, with an etag that changes with the content", () =>
      withStore(backend, "basic", async (s) => {
        expect(await s.get("a/b.json")).toBeUndefined();
        expect(await s.head("a/b.json")).toBeUndefined();
        const w1 = await s.put("a/b.json", enc("one"));
        const g1 = await s.get("a/b.json");
        expect(dec(g1!.body)).toBe("one");
        expect(g1!.etag).toBe(w1.etag);
        expect(g1!.etag).not.toMatch(/"/);
        const w2 = await s.put("a/b.json", enc("two"));
        expect(w2.etag).not.toBe(w1.etag);
        const h = await s.head("a/b.json");
        expect(h).toMatchObject({ key: "a/b.json", size: 3, etag: w2.etag });
        await s.delete("a/b.json");
        await s.delete("a/b.json"); // missing: not an error
        expect(await s.get("a/b.json")).toBeUndefined();
        await expect(s.get("../x")).rejects.toMatchObject({ code: "InvalidKey" });
        await expect(s.put("/abs", enc("x"))).rejects.toMatchObject({ code: "InvalidKey" });
      }));

    it("putIfAbsent never replaces: one winner among concurrent creators", () =>
      withStore(backend, "noreplace", async (s) => {
        const first = await s.putIfAbsent("live/x.json", enc("first"));
        expect(first.status).toBe("written");
        const again = await s.putIfAbsent("live/x.json", enc("second"));
        expect(again.status).toBe("conflict");
        expect(again.status === "conflict" && dec(again.current!.body)).toBe("first");
        const rs = await Promise.all(Array.from({ length: 12 }, (_, i) => s.putIfAbsent("live/race.json", enc(`racer-${i}`))));
        const winners = rs.flatMap((r, i) => (r.status === "written" ? [i] : []));
        expect(winners).toHaveLength(1);
        const stored = dec((await s.get("live/race.json"))!.body);
        expect(stored).toBe(`racer-${winners[0]}`);
        for (const r of rs) if (r.status === "conflict") expect(dec(r.current!.body)).toBe(stored);
      }));

    it("putIfMatch is compare-and-swap: stale etags and missing keys conflict, one racer wins", () =>
      withStore(backend, "cas", async (s) => {
        expect((await s.putIfMatch("k.json", enc("x"), "0123456789abcdef0123456789abcdef")).status).toBe("conflict");
        expect(await s.get("k.json")).toBeUndefined();
        const { etag: e1 } = await s.put("k.json", enc("v1"));
        const ok = await s.putIfMatch("k.json", enc("v2"), e1);
        expect(ok.status).toBe("written");
        const stale = await s.putIfMatch("k.json", enc("v3"), e1);
        expect(stale.status).toBe("conflict");
        expect(stale.status === "conflict" && dec(stale.current!.body)).toBe("v2");
        const cur = (await s.get("k.json"))!;
        const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => s.putIfMatch("k.json", enc(`r${i}`), cur.etag)));
        expect(rs.filter((r) => r.status === "written")).toHaveLength(1);
        const i = rs.findIndex((r) => r.status === "written");
        expect(dec((await s.get("k.json"))!.body)).toBe(`r${i}`);
      }));

    it("lists in UTF-8 byte order, pages over more than 1,000 keys, groups by delimiter", () =>
      withStore(backend, "list", async (s) => {
        const keys: string[] = [];
        for (let i = 0; i < 1040; i++) keys.push(`p/k${String(i * 7919 % 1040).padStart(4, "0")}`);
        keys.push("p/a-c", "p/a/b", "p/a.b", "p/B", "p/\u00e9t\u00e9", "p/z/y/x", "p/z/y-w", "p/~end");
        await pool(keys, 16, (k) => s.put(k, enc(k)));
        await s.put("q/outside", enc("q")); // other prefix: never listed
        const expected = utf8Sort(keys);
        // default page size is 1,000
        const p1 = await s.list("p/");
        expect(p1.objects).toHaveLength(1000);
        expect(p1.cursor).toBeDefined();
        const p2 = await s.list("p/", { cursor: p1.cursor! });
        expect(p2.cursor).toBeUndefined();
        expect([...p1.objects, ...p2.objects].map((o) => o.key)).toEqual(expected);
        // small pages and listAll agree
        const small: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await s.list("p/", cursor === undefined ? { maxKeys: 97 } : { maxKeys: 97, cursor });
          expect(page.objects.length).toBeLessThanOrEqual(97);
          small.push(...page.objects.map((o) => o.key));
          cursor = page.cursor;
        } while (cursor !== undefined);
        expect(small).toEqual(expected);
        const all: string[] = [];
        for await (const o of s.listAll("p/k10")) all.push(o.key);
        expect(all).toEqual(expected.filter((k) => k.startsWith("p/k10")));
        // delimiter: keys and common prefixes share one order and one page budget
        const merged = utf8Sort([...expected.filter((k) => !k.slice(2).includes("/")), "p/a/", "p/z/"]);
        const d = await s.list("p/", { delimiter: "/" });
        const page1 = merged.slice(0, 1000);
        expect(d.prefixes).toEqual(page1.filter((k) => k.endsWith("/")));
        expect(d.objects.map((o) => o.key)).toEqual(page1.filter((k) => !k.endsWith("/")));
        const d2 = await s.list("p/", { delimiter: "/", cursor: d.cursor! });
        expect([...d2.objects.map((o) => o.key), ...d2.prefixes].sort()).toEqual(merged.slice(1000).sort());
        const dz = await s.list("p/z/", { delimiter: "/" });
        expect(dz.prefixes).toEqual(["p/z/y/"]);
        expect(dz.objects.map((o) => o.key)).toEqual(["p/z/y-w"]);
        // delimiter with paging: prefixes and keys together, nothing repeated or lost
        const seen: string[] = [];
        cursor = undefined;
        do {
          const page = await s.list("p/", cursor === undefined ? { delimiter: "/", maxKeys: 50 } : { delimiter: "/", maxKeys: 50, cursor });
          seen.push(...page.objects.map((o) => o.key), ...page.prefixes);
          cursor = page.cursor;
        } while (cursor !== undefined);
        expect(utf8Sort(seen)).toEqual(merged);
      }), 120_000);

    it("keeps several fleets side by side: sibling roots never see each other's keys", async () => {
      const url = await backend.fresh("fleets");
      const a = openStore(url);
      const b = openStore(backend.sibling(url, "teamB"));
      const a2 = openStore(backend.sibling(url, "team")); // a prefix of the other names
      try {
        await a.put("fleet.json", enc("A"));
        await b.put("fleet.json", enc("B"));
        await a2.put("live/x.json", enc("A2"));
        expect(dec((await a.get("fleet.json"))!.body)).toBe("A");
        expect(dec((await b.get("fleet.json"))!.body)).toBe("B");
        const keys = async (s: ObjectStore) => {
          const out: string[] = [];
          for await (const o of s.listAll("")) out.push(o.key);
          return out;
        };
        expect(await keys(a)).toEqual(["fleet.json"]);
        expect(await keys(b)).toEqual(["fleet.json"]);
        expect(await keys(a2)).toEqual(["live/x.json"]);
      } finally {
        a.close();
        b.close();
        a2.close();
      }
    });

    it("20 concurrent lease takers in 4 processes: exactly one holder", () =>
      withStore(backend, "lease-race", async (s, url) => {
        const owners = Array.from({ length: 20 }, (_, i) => `agent-${i}`);
        const groups = [0, 1, 2, 3].map((g) => owners.filter((_, i) => i % 4 === g));
        const results = (await race<LeaseAcquireResult[]>(groups.map((o) => ["lease", url, "repo-1", "src/main.ts", "60", ...o]))).flat();
        expect(results).toHaveLength(20);
        const winners = results.filter((r) => r.acquired);
        expect(winners).toHaveLength(1);
        const w = winners[0]!;
        expect(w.epoch).toBe(1);
        for (const r of results) expect({ owner: r.owner, epoch: r.epoch }).toEqual({ owner: w.owner, epoch: 1 });
        const stored = await readLease(s, { repo: "repo-1", resource: "src/main.ts" });
        expect(stored).toMatchObject({ status: "held", owner: w.owner, epoch: 1 });
        expect(typeof stored!.nonce).toBe("string");
      }), 120_000);

    it("epochs strictly increase across takeovers; renew and release need the holder's epoch", () =>
      withStore(backend, "epochs", async (s) => {
        const t = { repo: "r", resource: "deploy" };
        let clock = Date.parse("2030-01-01T00:00:00Z");
        const opts = { now: () => clock, skewMs: 2000 };
        const epochs: number[] = [];
        const a = await acquireLease(s, { ...t, owner: "a", ttlSeconds: 10 }, opts);
        expect(a).toEqual({ acquired: true, epoch: 1, owner: "a", expires_at: "2030-01-01T00:00:10.000Z" });
        epochs.push(a.epoch);
        expect(await acquireLease(s, { ...t, owner: "b", ttlSeconds: 10 }, opts)).toMatchObject({ acquired: false, owner: "a", epoch: 1 });
        // within the skew bound after expiry, the lease is still a's
        clock += 11_000;
        expect((await acquireLease(s, { ...t, owner: "b", ttlSeconds: 10 }, opts)).acquired).toBe(false);
        expect((await renewLease(s, { ...t, owner: "a", epoch: 1, ttlSeconds: 10 }, opts)).renewed).toBe(true);
        clock += 12_001 + 2000; // past expires_at + skew
        const b = await acquireLease(s, { ...t, owner: "b", ttlSeconds: 10 }, opts);
        expect(b.acquired).toBe(true);
        epochs.push(b.epoch);
        expect((await renewLease(s, { ...t, owner: "a", epoch: 1, ttlSeconds: 10 }, opts)).renewed).toBe(false);
        expect((await releaseLease(s, { ...t, owner: "a", epoch: 1 }, opts)).released).toBe(false);
        expect((await releaseLease(s, { ...t, owner: "b", epoch: b.epoch }, opts)).released).toBe(true);
        const c = await acquireLease(s, { ...t, owner: "c", ttlSeconds: 10 }, opts);
        epochs.push(c.epoch);
        for (let i = 0; i < 5; i++) {
          await releaseLease(s, { ...t, owner: i % 2 ? "d" : "c" }, opts);
          epochs.push((await acquireLease(s, { ...t, owner: i % 2 ? "c" : "d", ttlSeconds: 10 }, opts)).epoch);
        }
        for (let i = 1; i < epochs.length; i++) expect(epochs[i]!).toBeGreaterThan(epochs[i - 1]!);
        expect(epochs).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
        const list = await listLeases(s, opts);
        expect(list).toEqual([expect.objectContaining({ repo: "r", resource: "deploy", status: "held", epoch: 8, live: true })]);
      }));

    it("an expired lease is taken over (real clock, short ttl)", () =>
      withStore(backend, "expiry", async (s) => {
        const t = { repo: "r", resource: "x" };
        const opts = { skewMs: 200 };
        const a = await acquireLease(s, { ...t, owner: "a", ttlSeconds: 1 }, opts);
        expect(a.acquired).toBe(true);
        expect((await acquireLease(s, { ...t, owner: "b", ttlSeconds: 1 }, opts)).acquired).toBe(false);
        await new Promise((r) => setTimeout(r, 1300));
        const b = await acquireLease(s, { ...t, owner: "b", ttlSeconds: 5 }, opts);
        expect(b).toMatchObject({ acquired: true, owner: "b", epoch: a.epoch + 1 });
        expect((await listLeases(s, { ...opts, liveOnly: true })).map((l) => l.owner)).toEqual(["b"]);
      }));

    it("16 workers x 10 CAS increments (4 processes) end at 160", () =>
      withStore(backend, "counter", async (s, url) => {
        await race<{ attempts: number }>([0, 1, 2, 3].map(() => ["incr", url, "counters/c.json", "4", "10"]));
        const v = JSON.parse(dec((await s.get("counters/c.json"))!.body)) as { n: number; nonce: string; prev_nonces: string[] };
        expect(v.n).toBe(160);
        expect(v.prev_nonces.length).toBeGreaterThan(0);
        expect(new Set([v.nonce, ...v.prev_nonces]).size).toBe(1 + v.prev_nonces.length);
      }), 120_000);

    it("casUpdate stops when fn returns undefined and reports corrupt objects by key", () =>
      withStore(backend, "casfn", async (s) => {
        const r = await casUpdate<{ n: number }>(s, "c.json", () => undefined);
        expect(r.changed).toBe(false);
        expect(await s.get("c.json")).toBeUndefined();
        await s.put("bad.json", enc("{not json"));
        await expect(casUpdate(s, "bad.json", () => ({ n: 1 }))).rejects.toMatchObject({ code: "Corrupt", data: { key: "bad.json" } });
      }));

    it("the snapshot pointer never names a missing blob; the cache mirrors it byte for byte", () =>
      withStore(backend, "snapshot", async (s) => {
        const dir = tempDir("layout-snap");
        const blobs = Array.from({ length: 6 }, (_, i) => Buffer.from(`SQLite format 3\0 snapshot ${i} `.repeat(200 + i)));
        let stop = false;
        const seen: string[] = [];
        const watcher = (async () => {
          while (!stop) {
            const p = await readSnapshotPointer(s);
            if (p) {
              seen.push(p.content_hash);
              const blob = await s.get(snapshotBlobKey(p.content_hash));
              expect(blob, `pointer names ${p.content_hash}`).toBeDefined();
              expect(createHash("sha256").update(blob!.body).digest("hex")).toBe(p.content_hash);
            }
          }
        })();
        const paths = await Promise.all(blobs.map(async (b, i) => {
          const p = join(dir, `snap-${i}.sqlite`);
          await writeFile(p, b);
          return p;
        }));
        const results = await Promise.all(paths.map((p) => publishSnapshot(s, { path: p })));
        stop = true;
        await watcher;
        expect(results.every((r) => r.swapped)).toBe(true);
        const ptr = await readSnapshotPointer(s);
        expect(results.map((r) => r.content_hash)).toContain(ptr!.content_hash);
        // a second publish of the same blob does not overwrite or re-point
        const again = await publishSnapshot(s, blobs[0]!);
        expect(again.content_hash).toBe(results[0]!.content_hash);
        const cache = join(dir, "cache");
        const c1 = await syncSnapshotCache(s, cache);
        expect(c1!.downloaded).toBe(true);
        const want = blobs.find((b) => createHash("sha256").update(b).digest("hex") === c1!.content_hash) ?? blobs[0]!;
        expect(Buffer.compare(await readFile(c1!.path), want)).toBe(0);
        expect((await syncSnapshotCache(s, cache))!.downloaded).toBe(false);
        await writeFile(c1!.path, "tampered");
        expect((await syncSnapshotCache(s, cache))!.downloaded).toBe(true);
        expect(Buffer.compare(await readFile(c1!.path), want)).toBe(0);
      }), 120_000);

    it("uploads large objects from a file (multipart on S3) and downloads them to a file", () =>
      withStore(backend, "upload", async (s) => {
        const dir = tempDir("layout-up");
        const big = Buffer.alloc(11 * 1024 * 1024 + 124);
        for (let i = 0; i < big.length; i += 4) big.writeUInt32LE((i * 2654435761) >>> 0, i);
        const src = join(dir, "big.parquet");
        await writeFile(src, big);
        const r = await s.upload("sessions/big.parquet", { path: src }, { partSize: 5 * 1024 * 1024 });
        expect(r.status).toBe("written");
        const out = join(dir, "out", "big.parquet");
        const d = await s.download("sessions/big.parquet", out);
        expect(d.size).toBe(big.length);
        expect(Buffer.compare(await readFile(out), big)).toBe(0);
        expect((await s.head("sessions/big.parquet"))!.size).toBe(big.length);
        const again = await s.upload("sessions/big.parquet", { path: src }, { ifAbsent: true, partSize: 5 * 1024 * 1024 });
        expect(again.status).not.toBe("unknown");
        const small = await s.upload("sessions/small.bin", (async function* () {
          yield enc("ab");
          yield enc("cd");
        })(), { ifAbsent: true });
        expect(small.status).toBe("written");
        expect(dec((await s.get("sessions/small.bin"))!.body)).toBe("abcd");
        await expect(s.download("sessions/none", join(dir, "none"))).rejects.toMatchObject({ code: "NotFound" });
      }), 120_000);

    it("roster heartbeats and intents: CAS writes, only live entries listed", () =>
      withStore(backend, "roster", async (s) => {
        let clock = Date.parse("2030-06-01T12:00:00Z");
        const opts = { now: () => clock, skewMs: 1000 };
        await heartbeat(s, { agent_id: "a1", runtime: "claude-code", repo: "lake", branch: "main", tool: "Edit", ttlSeconds: 30 }, opts);
        await heartbeat(s, { agent_id: "a2", runtime: "codex", repo: "lake", branch: "dev", ttlSeconds: 5 }, opts);
        await declareIntent(s, { agent_id: "a1", intents: [{ repo: "lake", resource: "src/x.ts" }], note: "refactor", ttlSeconds: 30 }, opts);
        await declareIntent(s, { agent_id: "a2", intents: [{ repo: "lake", resource: "src/y.ts" }], ttlSeconds: 5 }, opts);
        expect((await listRoster(s, opts)).map((e) => e.agent_id)).toEqual(["a1", "a2"]);
        clock += 7000; // a2 expired (5 s + 1 s skew)
        const roster = await listRoster(s, opts);
        expect(roster.map((e) => [e.agent_id, e.tool, e.runtime])).toEqual([["a1", "Edit", "claude-code"]]);
        const intents = await listIntents(s, opts);
        expect(intents.map((i) => [i.agent_id, i.intents[0]!.resource])).toEqual([["a1", "src/x.ts"]]);
        expect(intents[0]!.intents[0]!.resource_key).toMatch(/^[0-9a-f]{64}$/);
        await heartbeat(s, { agent_id: "a1", runtime: "claude-code", repo: "lake", branch: "main", tool: "Bash", ttlSeconds: 30 }, opts);
        expect((await listRoster(s, opts))[0]).toMatchObject({ tool: "Bash", started_at: "2030-06-01T12:00:00.000Z" });
        await leaveRoster(s, "a1", opts);
        expect(await listRoster(s, opts)).toEqual([]);
        expect((await listRoster(s, { ...opts, includeExpired: true })).map((e) => [e.agent_id, e.live])).toEqual([["a1", false], ["a2", false]]);
      }));
  });
}

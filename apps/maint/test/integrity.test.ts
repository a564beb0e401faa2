// Content hashes end to end in lake-maint: single bits flipped at random positions of a bronze
// segment and of a compacted part are named by verify every time, and compact never copies a
// damaged segment (its session is left out, the partition's others compacted) — through the built bin.
import { randomInt } from "node:crypto";
import { EXIT } from "@lake/cli";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compactedMarkerKey, segmentKey, type ObjectStore, type SessionPartition } from "@lake/layout";
import { readSegment } from "@lake/segments";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { freshStore, initStore, keys, pushSession, rec, row, runBin, split, type Backend } from "./helpers.js";

afterAll(cleanupTempDirs);

const P = (session: string): SessionPartition => ({ dt: "2026-02-10", fleet: "f1", runtime: "claude-code", agent: "host-a", session });

async function bytesOf(store: ObjectStore, key: string): Promise<Buffer> {
  return Buffer.from((await store.get(key))!.body);
}

function flipped(good: Buffer, bit: number): Buffer {
  const bad = Buffer.from(good);
  bad[bit >> 3] = bad[bit >> 3]! ^ (1 << (bit & 7));
  return bad;
}

/** ≥ 20 distinct random bit positions, plus the first byte, the footer's last bytes and the middle. */
function positions(size: number, n = 22): number[] {
  const s = new Set<number>([3, size * 8 - 2, (size - 6) * 8 + 5, (size >> 1) * 8]);
  while (s.size < n) s.add(randomInt(size * 8));
  return [...s];
}

async function setup(backend: Backend): Promise<{ url: string; store: ObjectStore; ids: Map<string, string[]> }> {
  const url = await freshStore(backend, "integrity");
  const store = await initStore(url);
  const ids = new Map<string, string[]>();
  for (const s of ["aaaa0001", "bbbb0002"]) {
    const recs = Array.from({ length: 40 }, (_, i) => rec(s, i, `text ${s} ${i}`));
    ids.set(s, recs.map((r) => r.record_id!));
    await pushSession(store, P(s), split(recs.map((r) => row(r, "host-a")), 2));
  }
  return { url, store, ids };
}

/** The record ids of the live generation's parts. */
async function liveRecordIds(store: ObjectStore): Promise<string[] | undefined> {
  const got = await store.get(compactedMarkerKey({ dt: "2026-02-10", fleet: "f1" }));
  if (!got) return undefined;
  const marker = JSON.parse(Buffer.from(got.body).toString("utf8")) as { parts: { key: string }[] };
  const dir = tempDir("parts");
  const out: string[] = [];
  for (const [i, p] of marker.parts.entries()) {
    const path = join(dir, `p${i}.parquet`);
    await store.download(p.key, path);
    out.push(...(await readSegment(path, "compacted")).map((r) => r.record_id!));
  }
  return out;
}

describe.each(["local", "s3"] as const)("content hashes in lake-maint (%s)", (backend) => {
  it("a flipped bit in a bronze segment: verify names it, compact leaves its session out and compacts the rest", async () => {
    const { url, store, ids } = await setup(backend);
    const key = segmentKey(P("aaaa0001"), 1);
    const good = await bytesOf(store, key);
    const bits = backend === "local" ? positions(good.length) : positions(good.length, 3);
    for (const bit of bits) {
      await store.put(key, flipped(good, bit));
      const v = await runBin(["verify", "--store", url], {}, backend);
      expect(v.code, `bit ${bit}: ${v.stdout}`).toBe(EXIT.partial);
      expect(v.stdout.split("\n").filter((l) => l.startsWith(`${key}: damaged: `)), `bit ${bit}`).toHaveLength(1);
      const c = await runBin(["compact", "--store", url], {}, backend);
      expect(c.code, `bit ${bit}: ${c.stdout}${c.stderr}`).toBe(EXIT.partial);
      expect(c.stdout).toContain(`skipped ${key}: ${key}: damaged segment: `);
      expect(c.stdout).toMatch(/^compacted dt=2026-02-10\/fleet=f1: gen [0-9a-f]{32} \(40 rows from 40, 1 parts/m);
      // Nothing of the damaged session was copied: the generation holds the other session exactly.
      expect((await liveRecordIds(store))?.sort()).toEqual([...ids.get("bbbb0002")!].sort());
      if (bit === bits[0]) {
        // The next compaction over the same damage changes nothing and says why again.
        const again = await runBin(["compact", "--store", url], {}, backend);
        expect(again.code).toBe(EXIT.partial);
        expect(again.stdout).toMatch(/^unchanged dt=2026-02-10\/fleet=f1/m);
        expect(again.stdout).toContain(`skipped ${key}: `);
      }
      // Reset the partition for the next position.
      for (const k of await keys(store, "sessions/compacted/")) await store.delete(k);
    }
    await store.put(key, good);
    const c = await runBin(["compact", "--store", url], {}, backend);
    expect(c.code, c.stdout).toBe(0);
    expect((await liveRecordIds(store))?.length).toBe(80);
    const v = await runBin(["verify", "--store", url], {}, backend);
    expect(v.code, v.stdout).toBe(0);
    store.close();
  }, 600_000);

  it("a flipped bit in a compacted part: verify names the part every time; the part carries its own hash", async () => {
    const { url, store } = await setup(backend);
    const c = await runBin(["compact", "--store", url, "--part-rows", "50"], {}, backend);
    expect(c.code, c.stdout).toBe(0);
    const marker = JSON.parse(Buffer.from((await store.get(compactedMarkerKey({ dt: "2026-02-10", fleet: "f1" })))!.body).toString("utf8")) as { parts: { key: string }[] };
    expect(marker.parts).toHaveLength(2);
    const key = marker.parts[1]!.key;
    const good = await bytesOf(store, key);
    expect(good.includes(Buffer.from("lake.sha256"))).toBe(true);
    const bits = backend === "local" ? positions(good.length) : positions(good.length, 3);
    for (const bit of bits) {
      await store.put(key, flipped(good, bit));
      const v = await runBin(["verify", "--store", url], {}, backend);
      expect(v.code, `bit ${bit}: ${v.stdout}`).toBe(EXIT.partial);
      const lines = v.stdout.trim().split("\n");
      expect(lines.filter((l) => l.startsWith(`${key}: damaged: `)), `bit ${bit}: ${v.stdout}`).toHaveLength(1);
      expect(lines.every((l) => l.startsWith(key) || l.includes(key) || l.includes("usage")), v.stdout).toBe(true);
    }
    await store.put(key, good);
    const v = await runBin(["verify", "--store", url], {}, backend);
    expect(v.code, v.stdout).toBe(0);
    store.close();
  }, 600_000);
});

describe("lake-maint seal and digest with a damaged segment", () => {
  it("skip that session (named, exit 3) and do the others", async () => {
    const { url, store } = await setup("local");
    for (const k of await keys(store, "sessions/")) if (k.endsWith("/_SEALED")) await store.delete(k);
    const key = segmentKey(P("aaaa0001"), 0);
    const good = await bytesOf(store, key);
    await store.put(key, good.subarray(0, good.length - 20)); // a cut footer
    const s = await runBin(["seal", "--store", url, "--idle", "0"], {}, "local");
    expect(s.code, s.stdout + s.stderr).toBe(EXIT.partial);
    expect(s.stdout).toContain(`skipped ${key}: ${key}: damaged segment: not a Parquet file`);
    expect(s.stdout).toContain("sealed sessions/dt=2026-02-10/fleet=f1/runtime=claude-code/agent=host-a/session=bbbb0002/_SEALED");
    const d = await runBin(["digest", "--store", url], {}, "local");
    expect(d.code, d.stdout + d.stderr).toBe(0);
    expect(d.stdout).toContain("session=bbbb0002/digest.json");
    expect(readFileSync(new URL(url).pathname + "/" + key).length).toBe(good.length - 20);
    store.close();
  }, 120_000);
});

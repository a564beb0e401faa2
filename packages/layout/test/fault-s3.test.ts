// Fault test: the responses of successful conditional writes are dropped (the request reaches the
// server and is applied, then the client sees a timeout or a 5xx). The S3 backend must still reach
// the right outcome by re-reading and looking for its own nonce.
import { afterAll, describe, expect, it } from "vitest";
import type { S3Client } from "@aws-sdk/client-s3";
import { createTestBucket, s3Client } from "@lake/tooling/s3";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { acquireLease, casUpdate, openStore, publishSnapshot, readLease, readSnapshotPointer, snapshotBlobKey, type ObjectStore } from "../src/index.js";

afterAll(() => cleanupTempDirs());

interface Faults {
  dropped: number;
  /** Conditional writes that reached the server (the SDK's own retries included). */
  sent?: number;
  /** Called after a conditional write was applied and before its response is dropped. */
  between?: () => Promise<void>;
}

/**
 * A client whose successful conditional PutObjects lose their response with probability `rate`.
 * "outer": the caller sees a timeout (no SDK retry). "inner": the SDK's retry loop sees a 503 and
 * sends the write again, which the server now refuses with 412 — one's own success turned into a 412.
 */
function faultyClient(mode: "outer" | "inner", rate: number, faults: Faults, seed = 1): S3Client {
  const client = s3Client();
  let x = seed;
  const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  type Next = (args: { input: unknown }) => Promise<unknown>;
  const drop = (next: Next, context: { commandName?: string }) => async (args: { input: unknown }) => {
      const input = args.input as { IfMatch?: string; IfNoneMatch?: string };
      const conditional = context.commandName === "PutObjectCommand" && (input.IfMatch !== undefined || input.IfNoneMatch !== undefined);
      if (conditional) faults.sent = (faults.sent ?? 0) + 1;
      const result = await next(args);
      if (conditional && rnd() < rate) {
        faults.dropped++;
        await faults.between?.();
        throw mode === "outer"
          ? Object.assign(new Error("socket timed out after the request was sent"), { name: "TimeoutError" })
          : Object.assign(new Error("service unavailable (dropped response)"), { name: "ServiceUnavailable", $fault: "server", $metadata: { httpStatusCode: 503 } });
      }
      return result;
    };
  // Outer: around the whole send (no retry sees the error). Inner: inside the SDK's retry loop.
  const where = mode === "outer" ? { step: "initialize", name: "dropOuter" } : { step: "finalizeRequest", priority: "low", name: "dropInner" };
  client.middlewareStack.add(drop as never, where as never);
  return client;
}

function open(url: string, client: S3Client): ObjectStore {
  return openStore(url, { s3: { client } });
}

describe.each(["outer", "inner"] as const)("S3 with dropped responses (%s)", (mode) => {
  it("a create whose every response is dropped still reports written", async () => {
    const { url } = await createTestBucket(`fault-create-${mode}`);
    const faults: Faults = { dropped: 0 };
    const s = open(url, faultyClient(mode, 1, faults));
    const r = await s.putIfAbsent("live/x.json", new TextEncoder().encode('{"a":1}'));
    expect(r.status).toBe("written");
    const again = await s.putIfAbsent("live/x.json", new TextEncoder().encode('{"a":2}'));
    expect(again.status).toBe("conflict");
    expect(faults.dropped).toBeGreaterThanOrEqual(1);
    // inner: the SDK re-sent the applied write and got 412 for its own success
    if (mode === "inner") expect(faults.sent).toBeGreaterThanOrEqual(3);
    else expect(faults.sent).toBe(2);
  });

  it("a lease acquisition whose response is dropped is still ours, at epoch 1, once", async () => {
    const { url } = await createTestBucket(`fault-lease-${mode}`);
    const faults: Faults = { dropped: 0 };
    const s = open(url, faultyClient(mode, 1, faults));
    const a = await acquireLease(s, { repo: "r", resource: "x", owner: "a", ttlSeconds: 60 });
    expect(a).toMatchObject({ acquired: true, epoch: 1, owner: "a" });
    expect(await readLease(s, { repo: "r", resource: "x" })).toMatchObject({ status: "held", owner: "a", epoch: 1 });
    // 8 racers, each on its own faulty client that drops every success: exactly one holder
    const t = { repo: "r", resource: "race" };
    const rs = await Promise.all(Array.from({ length: 8 }, (_, i) => acquireLease(open(url, faultyClient(mode, 1, faults, i + 7)), { ...t, owner: `o${i}`, ttlSeconds: 60 })));
    expect(rs.filter((r) => r.acquired)).toHaveLength(1);
    const w = rs.find((r) => r.acquired)!;
    expect(await readLease(s, t)).toMatchObject({ owner: w.owner, epoch: 1 });
    expect(faults.dropped).toBeGreaterThan(1);
  });

  it("concurrent CAS increments with half the responses dropped count exactly", async () => {
    const { url } = await createTestBucket(`fault-count-${mode}`);
    const faults: Faults = { dropped: 0 };
    await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        const s = open(url, faultyClient(mode, 0.5, faults, w + 1));
        for (let i = 0; i < 8; i++) await casUpdate<{ n: number }>(s, "c.json", (cur) => ({ n: (cur?.n ?? 0) + 1 }));
      }),
    );
    const s = open(url, s3Client());
    const v = JSON.parse(new TextDecoder().decode((await s.get("c.json"))!.body)) as { n: number };
    expect(v.n).toBe(32);
    expect(faults.dropped).toBeGreaterThan(4);
  }, 120_000);

  it("a write that landed and was overwritten before the re-read is found in prev_nonces, not repeated", async () => {
    const { url } = await createTestBucket(`fault-over-${mode}`);
    const plain = open(url, s3Client());
    await casUpdate<{ n: number }>(plain, "c.json", () => ({ n: 0 }));
    let once = true;
    const faults: Faults = {
      dropped: 0,
      between: async () => {
        if (!once) return;
        once = false;
        // someone else increments on top of our (applied, unacknowledged) write
        await casUpdate<{ n: number }>(plain, "c.json", (cur) => ({ n: (cur?.n ?? 0) + 10 }));
      },
    };
    const s = open(url, faultyClient(mode, 1, faults));
    const r = await casUpdate<{ n: number }>(s, "c.json", (cur) => ({ n: (cur?.n ?? 0) + 1 }));
    if (!r.changed) throw new Error("expected the increment to be reported as done");
    expect(r.value.n).toBe(1);
    const v = JSON.parse(new TextDecoder().decode((await plain.get("c.json"))!.body)) as { n: number; prev_nonces: string[] };
    expect(v.n).toBe(11);
    expect(v.prev_nonces).toContain(r.value.nonce);
  });

  it("a snapshot publish with dropped responses leaves the pointer on a present blob", async () => {
    const { url } = await createTestBucket(`fault-snap-${mode}`);
    const faults: Faults = { dropped: 0 };
    const s = open(url, faultyClient(mode, 1, faults));
    const blob = new TextEncoder().encode("SQLite format 3\0 fault test");
    const r = await publishSnapshot(s, blob);
    expect(r.swapped).toBe(true);
    const p = await readSnapshotPointer(s);
    expect(p!.content_hash).toBe(r.content_hash);
    expect(await s.head(snapshotBlobKey(r.content_hash))).toBeDefined();
    expect(faults.dropped).toBeGreaterThanOrEqual(2);
  });
});

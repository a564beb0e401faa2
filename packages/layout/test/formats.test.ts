import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import * as L from "../src/formats.js";
import { isLayoutError } from "../src/index.js";

interface Vector {
  kind: string;
  key: string;
  value: Record<string, unknown>;
  bytes: string;
  sha256: string;
}
const vectors = JSON.parse(readFileSync(new URL("./vectors/formats.json", import.meta.url), "utf8")) as {
  compaction_gen: { dt: string; fleet: string; format: number; sessions: L.CompactedSession[]; gen: string };
  objects: Vector[];
};

const enc: Record<string, (v: never) => Uint8Array> = {
  fleet: L.encodeFleet,
  sealed: L.encodeSealed,
  compacted: L.encodeCompacted,
  digest: L.encodeDigest,
  quarantine: L.encodeQuarantine,
  "claim-event": L.encodeClaimEvent,
  "fleet-claim": L.encodeFleetClaim,
};
const dec: Record<string, (key: string, body: Uint8Array) => unknown> = {
  fleet: L.decodeFleet,
  sealed: L.decodeSealed,
  compacted: L.decodeCompacted,
  digest: L.decodeDigest,
  quarantine: L.decodeQuarantine,
  "claim-event": (k, b) => L.decodeClaimEvent(k, b, "host-a"),
  "fleet-claim": (k, b) => L.decodeFleetClaim(k, b, (L.parseKey(k) as { claimId: string }).claimId),
};
const bytes = (s: string) => Buffer.from(s, "utf8");
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

function corruptWith(fn: () => unknown, reason: string, key: string): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(isLayoutError(err, "Corrupt"), String(err)).toBe(true);
  expect((err as Error).message).toContain(key);
  expect((err as Error).message).toContain(reason);
}

describe("fleet object golden vectors", () => {
  it("covers every object kind the layout writes as JSON", () => {
    expect(new Set(vectors.objects.map((v) => v.kind))).toEqual(new Set(Object.keys(enc)));
  });
  for (const v of vectors.objects) {
    it(`${v.kind}: encodes to the stored bytes and decodes back (${v.key})`, () => {
      const b = enc[v.kind]!(v.value as never);
      expect(Buffer.from(b).toString("utf8")).toBe(v.bytes);
      expect(sha(b)).toBe(v.sha256);
      expect(dec[v.kind]!(v.key, bytes(v.bytes))).toEqual(v.value);
      expect(L.parseKey(v.key)).toBeDefined();
    });
    it(`${v.kind}: refuses garbage, a non-object, and each field removed`, () => {
      corruptWith(() => dec[v.kind]!(v.key, bytes("{not json")), "not JSON", v.key);
      corruptWith(() => dec[v.kind]!(v.key, bytes("[1,2]")), "not a JSON object", v.key);
      for (const field of Object.keys(v.value)) {
        if (field === "sealed_by" || field === "claim_id" && v.kind === "claim-event") continue;
        const { [field]: _gone, ...rest } = v.value;
        if (v.kind === "claim-event" && (field === "repo" || field === "subject" || field === "kind")) continue; // defaults
        expect(() => dec[v.kind]!(v.key, bytes(JSON.stringify(rest))), `${v.kind} without ${field}`).toThrow();
      }
    });
  }
  it("compactionGen matches the vector and ignores session order", () => {
    const g = vectors.compaction_gen;
    expect(L.compactionGen(g.dt, g.fleet, g.sessions, g.format)).toBe(g.gen);
    expect(L.compactionGen(g.dt, g.fleet, [...g.sessions].reverse())).toBe(g.gen);
    expect(L.compactionGen(g.dt, g.fleet, g.sessions, 1)).not.toBe(g.gen);
  });
  it("_COMPACTED: a marker naming no parts, parts outside its gen, or totals that do not add up is refused", () => {
    const v = vectors.objects.find((o) => o.kind === "compacted")!;
    const m = v.value as unknown as L.CompactedMarker;
    const bad = (x: unknown) => bytes(JSON.stringify(x));
    corruptWith(() => L.decodeCompacted(v.key, bad({ ...m, parts: [] })), "names no parts", v.key);
    corruptWith(() => L.decodeCompacted(v.key, bad({ ...m, parts: [{ ...m.parts[0]!, key: m.parts[0]!.key.replace(m.gen, "0".repeat(32)) }] })), "parts[0] key", v.key);
    corruptWith(() => L.decodeCompacted(v.key, bad({ ...m, rows: m.rows + 1 })), "rows says", v.key);
    corruptWith(() => L.decodeCompacted(v.key, bad({ ...m, format: 9 })), "format 9", v.key);
    const { usage: _u, ...noUsage } = m;
    corruptWith(() => L.decodeCompacted(v.key, bad(noUsage)), "names no usage rollup", v.key);
    expect(L.decodeCompacted(v.key, bad({ ...noUsage, format: 1 })).usage).toBeUndefined();
    corruptWith(() => L.decodeCompacted(v.key, bad({ ...m, parts: [{ ...m.parts[0]!, sha256: "x" }] })), "sha256", v.key);
    // nonce fields written by casUpdate are not part of the marker
    expect(L.decodeCompacted(v.key, bad({ ...m, nonce: "n", prev_nonces: [] }))).toEqual(m);
  });
  it("_SEALED, snapshot pointer and live objects refuse wrong types", () => {
    const k = "sessions/dt=2026-02-10/fleet=f/runtime=r/agent=a/session=s/_SEALED";
    corruptWith(() => L.decodeSealed(k, bytes('{"sealed_at":"yesterday","segments":1,"rows":1}')), "sealed_at", k);
    corruptWith(() => L.decodeSealed(k, bytes('{"sealed_at":"2026-02-10T00:00:00.000Z","segments":-1,"rows":1}')), "segments", k);
    corruptWith(() => L.decodeSnapshotPointer(L.SNAPSHOT_LATEST_KEY, bytes('{"content_hash":"ABC"}')), "content_hash", L.SNAPSHOT_LATEST_KEY);
    expect(L.decodeSnapshotPointer(L.SNAPSHOT_LATEST_KEY, bytes(`{"content_hash":"${"a".repeat(64)}","nonce":"x"}`))).toEqual({ content_hash: "a".repeat(64) });
    const lk = L.leaseKey("b".repeat(64));
    const lease = { status: "held", owner: "o", epoch: 3, expires_at: "2030-01-01T00:01:00.000Z", repo: "r", resource: "x", acquired_at: "2030-01-01T00:00:00.000Z" };
    expect(L.decodeLease(lk, bytes(JSON.stringify(lease)))).toEqual(lease);
    corruptWith(() => L.decodeLease(lk, bytes(JSON.stringify({ ...lease, status: "taken" }))), "status", lk);
    const ak = L.agentKey("a1");
    const hb = { agent_id: "a1", runtime: "codex", repo: "", branch: "", tool: "", status: "active", started_at: lease.acquired_at, updated_at: lease.acquired_at, expires_at: lease.expires_at };
    expect(L.decodeRosterEntry(ak, bytes(JSON.stringify(hb)), "a1")).toEqual(hb);
    corruptWith(() => L.decodeRosterEntry(ak, bytes(JSON.stringify(hb)), "a2"), "does not match", ak);
    const ik = L.intentKey("a1");
    const it = { agent_id: "a1", intents: [{ repo: "r", resource: "x", resource_key: L.resourceKey("r", "x") }], note: "", declared_at: lease.acquired_at, expires_at: lease.expires_at };
    expect(L.decodeIntentRecord(ik, bytes(JSON.stringify(it)), "a1")).toEqual(it);
    corruptWith(() => L.decodeIntentRecord(ik, bytes(JSON.stringify({ ...it, intents: [{ repo: "r" }] })), "a1"), "resource", ik);
    expect(L.decodeSnapshotMeta("snapshot/x.sqlite", [{ key: "schema_version", value: "1" }, { key: "claims", value: "4" }])).toEqual({ schema_version: 1, claims: 4 });
    corruptWith(() => L.decodeSnapshotMeta("snapshot/x.sqlite", [{ key: "schema_version", value: "2" }]), "schema_version", "snapshot/x.sqlite");
  });
  it("sessionLabel: part 1 is the id, part N the id with .N", () => {
    expect(L.sessionLabel("abc", 1)).toBe("abc");
    expect(L.sessionLabel("abc", 3)).toBe("abc.3");
  });
  it("every single-byte change of a vector without optional fields is refused as Corrupt or decodes to a different value", () => {
    // Not for objects with optional or defaulted fields: a changed byte in such a field's name makes
    // an unknown field, which decoders ignore (forward compatibility), and the default stands in.
    for (const v of vectors.objects.filter((o) => o.kind !== "claim-event" && !("sealed_by" in o.value))) {
      const b = bytes(v.bytes);
      fc.assert(
        fc.property(fc.integer({ min: 0, max: b.length - 2 }), fc.integer({ min: 1, max: 255 }), (i, x) => {
          // every byte but the final newline (whitespace there is not content)
          const c = Buffer.from(b);
          c[i] = c[i]! ^ x;
          let got: unknown;
          try {
            got = dec[v.kind]!(v.key, c);
          } catch (e) {
            expect(isLayoutError(e, "Corrupt")).toBe(true);
            return;
          }
          expect(L.canonicalJson(got)).not.toBe(L.canonicalJson(v.value));
        }),
        { numRuns: 100 },
      );
    }
  });
});

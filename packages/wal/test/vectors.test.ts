import { describe, expect, it } from "vitest";
import {
  decodeWal,
  encodeLineageFrame,
  encodeRecordFrame,
  isWalError,
  uuidToLineageId,
  VER_LINEAGE,
  walAddress,
  type WalEntry,
} from "../src/index.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { manifest, readHex, sha256, vectorsDir } from "./helpers.js";

describe("golden WAL vectors", () => {
  it("covers every frame kind and every refusal", () => {
    const statuses = new Set(manifest.wal.map((v) => v.expect.status));
    expect([...statuses].sort()).toEqual(["corrupt", "newer_writer", "ok", "sequence_error", "spliced"]);
    expect(manifest.wal.some((v) => v.expect.records.some((r) => r.gated))).toBe(true);
    expect(manifest.wal.some((v) => v.expect.torn_tail)).toBe(true);
    expect(manifest.wal.some((v) => v.expect.skipped.length > 0)).toBe(true);
  });

  for (const v of manifest.wal) {
    it(`${v.name}: ${v.description}`, () => {
      const bytes = readHex(v.file);
      expect(bytes.length).toBe(v.bytes);
      expect(sha256(bytes)).toBe(v.sha256);
      const records: { seq: number; type: string; gated: boolean }[] = [];
      const skipped: { seq: number; type: string }[] = [];
      let lineage: string | null = null;
      const onEntry = (e: WalEntry) => {
        if (e.kind === "lineage") lineage = e.lineageId;
        else if (e.kind === "record") records.push({ seq: e.seq, type: e.record.type, gated: e.gated });
        else skipped.push({ seq: e.seq, type: e.type });
      };
      let code: string | null = null;
      let offset: number | null = null;
      let torn = false;
      try {
        const r = decodeWal(bytes, { file: v.file, onEntry });
        torn = r.tornTail !== null;
        expect(r.lineageId).toBe(v.expect.lineage_id);
      } catch (e) {
        if (!isWalError(e)) throw e;
        code = e.code;
        offset = e.data.offset ?? null;
        expect(e.message.startsWith(`${v.file}: `)).toBe(true);
        expect(e.message).not.toContain("\n");
      }
      expect(code).toBe(v.expect.error_code);
      expect(offset).toBe(v.expect.error_offset);
      expect(torn).toBe(v.expect.torn_tail);
      expect(records).toEqual(v.expect.records);
      expect(skipped).toEqual(v.expect.skipped);
      if (v.expect.status === "ok") expect(lineage).toBe(v.expect.lineage_id);
    });
  }

  it("the frame digests in the manifest are the digests in the frames", () => {
    let n = 0;
    for (const v of manifest.wal) {
      const lines = readFileSync(join(vectorsDir, v.file), "utf8").split("\n").filter((l) => l.length > 0);
      expect(lines.length).toBe(v.frame_digests.length);
      lines.forEach((l, i) => {
        const f = Buffer.from(l, "hex");
        const d = v.frame_digests[i];
        if (f.length < 53) return expect(d).toBeNull();
        expect(f.subarray(21, 53).toString("hex")).toBe(d);
        n++;
      });
    }
    expect(n).toBeGreaterThan(50);
  });

  it("the encoder reproduces every valid vector byte for byte", () => {
    let checked = 0;
    for (const v of manifest.wal.filter((x) => x.reencode)) {
      const bytes = readHex(v.file);
      const parts: Buffer[] = [];
      let pos = 0;
      while (pos < bytes.length) {
        const len = bytes.readUInt32LE(pos);
        const ver = bytes[pos + 4]!;
        const payload = bytes.subarray(pos + 53, pos + 53 + len);
        if (ver === VER_LINEAGE) {
          parts.push(encodeLineageFrame(uuidToLineageId("0f1e2d3c-4b5a-4968-8796-a5b4c3d2e1f0")));
        } else {
          const json = JSON.parse(payload.toString("utf8")) as { record?: unknown; type?: string };
          const record = (ver === 3 ? json.record : json) as { type: string } & Record<string, unknown>;
          parts.push(encodeRecordFrame(record, { seq: bytes.readBigUInt64LE(pos + 5), fence: bytes.readBigUInt64LE(pos + 13) }));
        }
        pos += 53 + len;
      }
      expect(Buffer.concat(parts).equals(bytes)).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(5);
  });

  it("pinned addresses", () => {
    for (const a of manifest.addresses) expect(walAddress(a)).toBe(a.addr);
    expect(walAddress({ project_root: "/tmp/p", harness: "runner", session: "s1" })).toBe("31a7840439280f40");
  });
});

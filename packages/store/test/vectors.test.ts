import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { decodeCursor, encodeCursor, isStoreError, parseLanded, parseLandedBytes, parseLandedName } from "../src/index.js";

const v = (name: string) => readFileSync(new URL(`./vectors/${name}`, import.meta.url));
const LANDED = "transcript-20260831T091204.481523000Z-000001.sd";

describe("golden vectors", () => {
  it("landed file: name, header, rows and digests", () => {
    const buf = v(LANDED);
    expect(createHash("sha256").update(buf).digest("hex")).toBe("c4bc9dad98e13d0c03389dccaadb1fa4bf7c8071970633302f1b8e7e7b3743e3");
    expect(parseLandedName(LANDED)).toEqual({ kind: "transcript", stamp: "20260831T091204.481523000Z", seq: 1 });
    const f = parseLanded(buf, LANDED);
    expect(f.header).toMatchObject({ format: "lake.sd", schema: 1, seq: 1, kind: "transcript", cursor: "append", first_offset: 0, end_offset: 129, first_line: 1, last_line: 2, records: 2 });
    expect(f.rows.map((r) => JSON.parse(r).kind)).toEqual(["user", "unknown"]);
    expect(f.sha256).toBe("c4bc9dad98e13d0c03389dccaadb1fa4bf7c8071970633302f1b8e7e7b3743e3");
  });
  it("landed file: a flipped body byte, a truncation and a wrong count are Corrupt", () => {
    const buf = v(LANDED);
    const nl = buf.indexOf(10);
    for (const at of [nl + 5, buf.length - 2]) {
      const b = Buffer.from(buf);
      b[at] = b[at]! ^ 1;
      expect(() => parseLanded(b, "x.sd")).toThrow(/x\.sd: body digest/);
      // The digest the file landed with does not vouch for other bytes: every check still runs.
      expect(() => parseLanded(b, "x.sd", { sha256: "c4bc9dad98e13d0c03389dccaadb1fa4bf7c8071970633302f1b8e7e7b3743e3" })).toThrow(/x\.sd: body digest/);
    }
    // Bytes that hash to the digest they landed with decode as without it.
    expect(parseLanded(buf, LANDED, { sha256: "c4bc9dad98e13d0c03389dccaadb1fa4bf7c8071970633302f1b8e7e7b3743e3" })).toEqual(parseLanded(buf, LANDED));
    try {
      parseLanded(buf.subarray(0, buf.length - 1), "y.sd");
      expect.unreachable();
    } catch (e) {
      expect(isStoreError(e) && e.code).toBe("Corrupt");
    }
    expect(() => parseLanded(Buffer.from("{}\n"), "z.sd")).toThrow(/z\.sd: not a landed file/);
  });
  it("landed file as bytes: the rows parseLanded gives, as views of the file, and the same refusals", () => {
    const buf = v(LANDED);
    const text = parseLanded(buf, LANDED);
    const bytes = parseLandedBytes(buf, LANDED);
    expect(bytes.rows.map((r) => r.toString("utf8"))).toEqual(text.rows);
    expect([bytes.header, bytes.sha256, bytes.bytes]).toEqual([text.header, text.sha256, text.bytes]);
    expect(bytes.body.equals(buf.subarray(buf.indexOf(10) + 1))).toBe(true);
    for (const r of bytes.rows) expect(r.buffer).toBe(buf.buffer);
    const flipped = Buffer.from(buf);
    flipped[buf.length - 2] = flipped[buf.length - 2]! ^ 1;
    expect(() => parseLandedBytes(flipped, "x.sd")).toThrow(/x\.sd: body digest/);
    expect(() => parseLandedBytes(buf.subarray(0, buf.length - 1), "y.sd")).toThrow(/y\.sd: /);
    // A header that counts another number of records.
    const nl = buf.indexOf(10);
    const header = JSON.parse(buf.subarray(0, nl).toString("utf8")) as Record<string, unknown>;
    const miscounted = Buffer.concat([Buffer.from(JSON.stringify({ ...header, records: 3 }) + "\n"), buf.subarray(nl + 1)]);
    expect(() => parseLandedBytes(miscounted, "w.sd")).toThrow(/w\.sd: 2 record lines, header says 3/);
    expect(() => parseLanded(miscounted, "w.sd")).toThrow(/w\.sd: 2 record lines, header says 3/);
  });
  it("cursors decode and encode back to the same bytes", () => {
    for (const name of ["append.cursor", "meta.cursor"]) {
      const text = v(name).toString("utf8");
      const c = decodeCursor(text, name);
      expect(encodeCursor(c)).toBe(text);
    }
    const a = decodeCursor(v("append.cursor").toString("utf8"), "append.cursor");
    expect(a).toMatchObject({ kind: "append", offset: 129, ord: 2, last_seq: 1, state: "active", dev: 16777232, ino: 287890584 });
    expect(() => decodeCursor("schema 1\nkind append\nsource s\noffset -1\nstate active\n", "bad.cursor")).toThrow(/bad\.cursor: offset/);
    expect(() => decodeCursor("schema 1\nkind append\nsource s\noffset 1\nstate weird\n", "bad.cursor")).toThrow(/bad\.cursor: state/);
  });
});

// Append sources with a caller's framing (a binary spool or WAL): the same cursor rules, cut at unit
// boundaries instead of newlines.
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { openSession, readLanded, type Framing, type SourceLine } from "../src/index.js";
import { NOT_JSON, parseLine } from "../src/internal/window.js";
import { capture, convert, src } from "./helpers.js";

afterAll(cleanupTempDirs);

/** Units: u32 LE length, then a JSON payload. A payload "REFUSE" refuses the source; "\xff" is not JSON. */
const framing: Framing = {
  complete(buf) {
    let pos = 0;
    while (pos + 4 <= buf.length) {
      const total = 4 + buf.readUInt32LE(pos);
      if (pos + total > buf.length) break;
      pos += total;
    }
    return pos;
  },
  unitLength(head) {
    return head.length >= 4 ? 4 + head.readUInt32LE(0) : undefined;
  },
  split(buf, offset, ord) {
    const lines: SourceLine[] = [];
    const invalid: boolean[] = [];
    let pos = 0;
    let n = ord;
    while (pos < buf.length) {
      const len = buf.readUInt32LE(pos);
      const bytes = buf.subarray(pos + 4, pos + 4 + len);
      const text = bytes.toString("utf8");
      if (text === '"REFUSE"') return { lines: [], invalid: [], refuse: `unit at byte ${offset + pos} says refuse` };
      const parsed = parseLine(text);
      const bad = parsed === NOT_JSON;
      lines.push({ bytes, text, value: bad ? undefined : parsed, offset: offset + pos, line: ++n });
      invalid.push(bad);
      pos += 4 + len;
    }
    return { lines, invalid };
  },
};

function unit(v: unknown): Buffer {
  const p = typeof v === "string" && v.startsWith("\xff") ? Buffer.from([0xff, 0xfe]) : Buffer.from(JSON.stringify(v));
  const h = Buffer.alloc(4);
  h.writeUInt32LE(p.length);
  return Buffer.concat([h, p]);
}

describe("framed append sources", () => {
  it("lands complete units, leaves a torn tail for later, and continues from the cursor", async () => {
    const dir = tempDir("framing");
    const file = join(dir, "spool.bin");
    const full = unit({ type: "user", uuid: "u3", text: "third" });
    writeFileSync(file, Buffer.concat([unit({ type: "user", uuid: "u1", text: "one" }), unit({ type: "assistant", uuid: "u2", text: "two" }), full.subarray(0, 7)]));
    const root = join(dir, "root");
    const s = await openSession(root, "s1");
    let out = await s.beginPass().collectAppend(src(file, { kind: "spool", framing }), convert);
    expect(out.status).toBe("landed");
    expect(out.landed.map((f) => f.records)).toEqual([2]);
    const first = readLanded(root, "s1", out.landed[0]!.seq);
    expect(first.header.end_offset).toBe(2 * 4 + Buffer.byteLength(JSON.stringify({ type: "user", uuid: "u1", text: "one" })) + Buffer.byteLength(JSON.stringify({ type: "assistant", uuid: "u2", text: "two" })));
    // Only the torn unit is new: nothing complete, the source waits.
    out = await s.beginPass().collectAppend(src(file, { kind: "spool", framing }), convert);
    expect(out.status).toBe("waiting");
    appendFileSync(file, Buffer.concat([full.subarray(7), unit("\xff")]));
    out = await s.beginPass().collectAppend(src(file, { kind: "spool", framing }), convert);
    expect(out.status).toBe("landed");
    const second = readLanded(root, "s1", out.landed[0]!.seq);
    expect(second.rows.map((r) => JSON.parse(r).kind)).toEqual(["user", "unknown"]);
    expect(second.header.first_line).toBe(3);
    s.close();
  });

  it("reads a unit longer than the budget whole", async () => {
    const dir = tempDir("framing");
    const file = join(dir, "spool.bin");
    writeFileSync(file, Buffer.concat([unit({ type: "user", uuid: "big", text: "x".repeat(5000) }), unit({ type: "user", uuid: "small" })]));
    const s = await openSession(join(dir, "root"), "s1", { maxDeltaBytes: 1024 });
    const out = await s.beginPass().collectAppend(src(file, { kind: "spool", framing }), convert);
    expect(out.landed.map((f) => f.records)).toEqual([1, 1]);
    s.close();
  });

  it("turns a refused window into a conflict that lands nothing and is kept", async () => {
    const dir = tempDir("framing");
    const file = join(dir, "spool.bin");
    writeFileSync(file, Buffer.concat([unit({ type: "user", uuid: "a" }), unit("REFUSE")]));
    const log = capture();
    const s = await openSession(join(dir, "root"), "s1", { logger: log.logger });
    const out = await s.beginPass().collectAppend(src(file, { kind: "spool", framing }), convert);
    expect(out.status).toBe("conflict");
    expect(out.landed).toEqual([]);
    expect(log.lines.join("\n")).toMatch(/spool\.bin: unit at byte \d+ says refuse/);
    expect((await s.beginPass().collectAppend(src(file, { kind: "spool", framing }), convert)).status).toBe("in_conflict");
    s.close();
  });
});

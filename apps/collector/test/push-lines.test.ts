// push reads landed lines as bytes and takes what it needs of most records by key (runtime, ts),
// parsing only the records that may carry usage or are quarantined. Checked against parsing every
// line, on real transcripts of every runtime and on records made to trip the key reading (escapes
// in the values, a key's name inside a text, a lone surrogate, a duplicate, a quarantined record):
// the same lines, fields and usage records, and segments of the same bytes. A value with an escape
// (u2's ts) sends its line to the parser too.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SegmentWriter, usageRecordsOfRows, type FleetRow, type RecordLine } from "@lake/segments";
import { readIndex, readLanded } from "@lake/store/read";
import { landRoot, recordLines } from "@lake/store/testing";
import type { CanonicalRecord } from "@lake/events";
import type { Convert } from "@lake/store";
import { QUARANTINE_TYPE } from "@lake/redact/quarantine";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { localRoot } from "../src/internal/local-root.js";
import { runCli, vendorTree } from "./helpers.js";

afterAll(cleanupTempDirs);

/** Records a collector would not write but a landed file may hold, each a JSON line of the test converter. */
const ODD = [
  { kind: "user", record_id: "u1", ts: "2026-02-10T21:00:00.000Z", text: 'says "usage":{"input_tokens":5} and "ts":"1999" in its text' },
  { kind: "assistant", record_id: "a1", ts: "2026-02-10T21:00:01.000Z", text: "lone \ud800 high", usage: { input_tokens: 3, output_tokens: 4 }, usage_key: "k1", model: "m" },
  { kind: "assistant", record_id: "a2", ts: 'odd "quoted" \\ time', usage: { output_tokens: 1 }, usage_key: "k2" },
  { kind: "assistant", record_id: "a3", ts: "2026-02-10T21:00:00+02:00", usage_mode: "latest", usage_key: "k1" },
  { kind: "meta", record_id: "q1", ts: "2026-02-10T21:00:02.000Z", vendor_type: QUARANTINE_TYPE, attrs: JSON.stringify({ status: "quarantined", rules_fired: ["r"], hash: "h" }) },
  { kind: "user", record_id: "u2", ts: "back\\slash", text: "no usage" },
  { kind: "assistant", record_id: "a4", replayed: true, usage: { input_tokens: 9 }, usage_key: "k4" },
  { kind: "user", record_id: "u1", ts: "2026-02-10T21:00:03.000Z", text: "a re-landed copy of u1" },
  { kind: "tool_result", ts: "not a time", text: "tab\t nul \u0000 esc \u001b[0m \\ud800 literal", tool_call_id: "c1" },
];

/** Every landed line of a session the index does not mark a duplicate, parsed: what push read before. */
function parsedLines(root: string, sessionId: string): { text: string; rec: FleetRow; seq: number; row: number }[] {
  const idx = readIndex(root, sessionId);
  const dup = new Set(idx.entries.filter((e) => e.duplicate).map((e) => `${e.seq}/${e.row}`));
  const out: { text: string; rec: FleetRow; seq: number; row: number }[] = [];
  for (const f of idx.files) {
    readLanded(root, sessionId, f.rel).rows.forEach((text, row) => {
      if (!dup.has(`${f.seq}/${row}`)) out.push({ text, rec: { ...(JSON.parse(text) as FleetRow), agent: "host-a", landed_seq: f.seq, landed_row: row }, seq: f.seq, row });
    });
  }
  return out;
}

async function sha256Of(w: SegmentWriter, path: string, lines: RecordLine[]): Promise<string> {
  await w.writeLines(path, lines, "bronze");
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

describe("push's landed lines", () => {
  it("give the fields, usage records and segment bytes that parsing every line gives", async () => {
    const dir = tempDir("push-lines");
    const root = join(dir, "root");
    const tree = vendorTree(join(dir, "vendor"));
    expect((await runCli(["collect", "--root", root, ...tree.flags], { HOME: join(dir, "home") })).code).toBe(0);
    const odd = join(dir, "odd.jsonl");
    writeFileSync(odd, ODD.map((r) => JSON.stringify(r)).join("\n") + "\n");
    await landRoot(root, [{ session: "odd-session", path: odd, runtime: "claude-code" }]);
    // The same records written with runtime last (push looks for it first right after a line's
    // `{`, else searches the line): both ways must read the same.
    const runtimeLast: Convert = async (lines, ctx) =>
      ((await recordLines(lines, ctx)) as CanonicalRecord[]).map((r) => {
        const { runtime, ...rest } = r;
        return { ...rest, runtime } as CanonicalRecord;
      });
    await landRoot(root, [{ session: "odd-order", path: odd, runtime: "claude-code", convert: runtimeLast }]);
    // Runtimes of one byte length (push keeps one string per runtime's bytes: 9 bytes, and 10 with
    // one not ASCII), and one with an escape (its line is parsed): each line must read as its own.
    const names = ["runtime-a", "runtime-b", "rüntime-a", "runtime-ab", 'run\\"time'];
    const mixedRuntimes: Convert = async (lines, ctx) => ((await recordLines(lines, ctx)) as CanonicalRecord[]).map((r, i) => ({ ...r, runtime: names[i % names.length]! }) as CanonicalRecord);
    const plain = join(dir, "plain.jsonl");
    writeFileSync(plain, Array.from({ length: 10 }, (_, i) => JSON.stringify({ kind: "user", record_id: `m${i}`, ts: `2026-02-10T21:00:0${i}.000Z`, text: "plain" })).join("\n") + "\n");
    await landRoot(root, [{ session: "odd-runtimes", path: plain, runtime: "claude-code", convert: mixedRuntimes }]);
    const orderRows = readLanded(root, "odd-order", readIndex(root, "odd-order").files[0]!.rel).rows;
    expect(orderRows.length).toBe(ODD.length);
    for (const r of orderRows) expect(r.startsWith('{"runtime":')).toBe(false);

    const local = localRoot(root);
    const sessions = local.sessions();
    expect(sessions).toContain("odd-session");
    expect(sessions).toContain("odd-order");
    expect(sessions).toContain("odd-runtimes");
    expect(sessions.length).toBeGreaterThanOrEqual(5);
    const w = await SegmentWriter.open({ fsync: false, connections: 2 });
    try {
      let parsed = 0;
      let keyed = 0;
      for (const id of sessions) {
        const { lines } = await local.readRows(id, await local.landedFiles(id), "host-a");
        const ref = parsedLines(root, id);
        expect(lines.length).toBe(ref.length);
        lines.forEach((l, i) => {
          const r = ref[i]!;
          expect(Buffer.from(l.json).toString("utf8")).toBe(r.text);
          expect([l.landed_seq, l.landed_row, l.runtime, l.ts]).toEqual([r.seq, r.row, r.rec.runtime, r.rec.ts]);
          const ms = r.rec.ts === undefined ? NaN : Date.parse(r.rec.ts);
          expect(l.tsMs).toBe(Number.isNaN(ms) ? null : ms);
          // What push keeps of a record: its usage record (usageRecordsOfRows of it alone) and, quarantined, the record.
          expect(l.usage).toEqual(usageRecordsOfRows([r.rec], r.rec.runtime)[0]);
          expect(l.quarantined).toEqual(r.rec.vendor_type === QUARANTINE_TYPE ? r.rec : undefined);
          if (l.usage || l.quarantined) parsed++;
          else keyed++;
        });
        for (const runtime of new Set(ref.map((r) => r.rec.runtime))) {
          const mine = lines.filter((l) => l.runtime === runtime);
          const theirs = ref.filter((r) => r.rec.runtime === runtime);
          expect(mine.flatMap((l) => (l.usage ? [l.usage] : []))).toEqual(usageRecordsOfRows(theirs.map((r) => r.rec), runtime));
          // The segment from the bytes is the segment from the text (as push wrote it before).
          const fromText: RecordLine[] = theirs.map((r) => {
            const ms = r.rec.ts === undefined ? NaN : Date.parse(r.rec.ts);
            return { json: r.text, tsMs: Number.isNaN(ms) ? null : ms, landed_seq: r.seq, landed_row: r.row };
          });
          const [a, b] = await Promise.all([sha256Of(w, join(dir, `${id}-${runtime}-bytes.parquet`), mine), sha256Of(w, join(dir, `${id}-${runtime}-text.parquet`), fromText)]);
          expect(a).toBe(b);
        }
      }
      // Most records of the real transcripts are read by key.
      expect(keyed).toBeGreaterThan(parsed);
    } finally {
      w.close();
    }
    // The odd session: the re-landed u1 is left out; u1's text that reads like a usage key is not one;
    // the quarantined record is kept, and every record with usage counted (a4 is replayed: it counts none).
    const odds = (await local.readRows("odd-session", await local.landedFiles("odd-session"), "host-a")).lines;
    expect(odds.map((l) => l.usage?.record_id ?? l.quarantined?.record_id ?? null)).toEqual([null, "a1", "a2", "a3", "q1", null, null, null]);
    expect(odds.map((l) => l.ts)).toEqual(ODD.filter((r) => r.text !== "a re-landed copy of u1").map((r) => r.ts));
    const mixed = (await local.readRows("odd-runtimes", await local.landedFiles("odd-runtimes"), "host-a")).lines;
    expect(mixed.map((l) => l.runtime)).toEqual([...names, ...names]);
  });
});

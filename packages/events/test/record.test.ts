import { describe, expect, it } from "vitest";
import { arrowSchema } from "../src/arrow.js";
import { CanonicalRecordSchema } from "../src/internal/record.js";
import { createHash } from "node:crypto";
import { CONTENT_FIELDS, HASHED_USAGE_KEYS } from "../src/internal/record-core.js";
import { COLUMNS, canonicalize, canonicalizeInPlace, checkStoredRecord, contentHash, duckdbCreateTable, isEventsError, parseRecord, recordDay, recordToRow, rowToRecord, safeParseRecord, type RawRecord } from "../src/index.js";

const raw: RawRecord = {
  runtime: "claude-code",
  session_id: "258c7280-ae70-4798-800f-63464d01a85d",
  stream: "main",
  record_id: "1b7d717f-d6a2-46a6-8575-fa4f937450ea",
  ts: "2026-02-10T21:11:59.186Z",
  kind: "assistant",
  role: "assistant",
  model: "claude-opus-4-6",
  text: "hello",
  usage: { input_tokens: 3, cached_input_tokens: 11515, cache_write_tokens: 13835, output_tokens: 13 },
  usage_key: "req_011CY15QS2LGwAeBxdfa6e1V",
  message_id: "msg_01MKH1ccEGrZGNPvu8pYiiQa",
  source_path: "-home-marco-projects-spotter/258c7280.jsonl",
  source_offset: 4096,
  source_line: 5,
  adapter: "claude-code",
  adapter_version: "1",
};

describe("canonical record", () => {
  it("hashes content, not provenance", () => {
    const a = canonicalize(raw, ["b", "a", "a"]);
    expect(a.redaction_rules).toEqual(["a", "b"]);
    expect(a.content_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(canonicalize({ ...raw, source_path: "elsewhere", source_offset: 1 }).content_hash).toBe(a.content_hash);
    expect(canonicalize({ ...raw, text: "hellO" }).content_hash).not.toBe(a.content_hash);
    expect(canonicalize({ ...raw, usage: { ...raw.usage, output_tokens: 14 } }).content_hash).not.toBe(a.content_hash);
  });

  it("canonicalizes in place what canonicalize copies: the same fields in the same order, the same object back", () => {
    for (const rules of [[], ["b", "a", "a"]]) {
      const mine = { ...raw };
      const expected = JSON.stringify(canonicalize(raw, rules));
      const out = canonicalizeInPlace(mine, rules);
      expect(out).toBe(mine);
      expect(JSON.stringify(out)).toBe(expected);
    }
    // canonicalize leaves its argument as it was.
    const kept = { ...raw };
    canonicalize(kept, ["a"]);
    expect(kept).toEqual(raw);
    // A field named __proto__ (as JSON.parse makes one) stays a field of the copy.
    const odd = JSON.parse(JSON.stringify({ ...raw }).replace('"runtime":', '"__proto__":"x","runtime":')) as RawRecord;
    expect(JSON.stringify(canonicalize(odd))).toContain('"__proto__":"x"');
  });

  it("hashes what its definition says: CONTENT_FIELDS in order, then the first five usage keys, absent as null", () => {
    const generic = (r: Record<string, unknown>): string => {
      const u = r.usage as Record<string, unknown> | undefined;
      const values: unknown[] = CONTENT_FIELDS.map((f) => r[f] ?? null);
      for (const k of HASHED_USAGE_KEYS) values.push(u?.[k] ?? null);
      if (u?.cache_write_1h_tokens !== undefined) values.push(["cache_write_1h_tokens", u.cache_write_1h_tokens]);
      if (r.cost_usd !== undefined) values.push(["cost_usd", r.cost_usd]);
      return createHash("sha256").update(JSON.stringify(values)).digest("hex");
    };
    // Every content field set to a value of its own: a field read into the wrong place changes the hash.
    const full: Record<string, unknown> = { ...raw, usage: { input_tokens: 1, cached_input_tokens: 2, cache_write_tokens: 3, output_tokens: 4, reasoning_tokens: 5 } };
    for (const [i, f] of CONTENT_FIELDS.entries()) if (full[f] === undefined || f === "kind" || f === "stream") full[f] = f === "is_error" ? true : f === "exit_code" ? i : `${f}-${i}`;
    const cases: Record<string, unknown>[] = [full, { ...raw }, { ...full, usage: { output_tokens: 7, cache_write_1h_tokens: 9 }, cost_usd: 0.25 }, { ...full, usage: undefined, text: null }];
    for (const c of cases) expect(contentHash(c as unknown as RawRecord)).toBe(generic(c));
  });

  it("gives records without content the empty hash", () => {
    const { text: _t, usage: _u, ...bare } = raw;
    expect(contentHash({ ...bare, kind: "tool_call", tool_name: "Bash" })).toBe("");
    expect(contentHash({ ...bare, kind: "tool_call", tool_input: "{}" })).not.toBe("");
  });

  it("validates with a one-line reason", () => {
    const rec = canonicalize(raw);
    expect(parseRecord(JSON.parse(JSON.stringify(rec)))).toEqual(rec);
    try {
      parseRecord({ ...rec, kind: "nonsense" });
      expect.unreachable();
    } catch (e) {
      expect(isEventsError(e)).toBe(true);
      expect((e as Error).message).toMatch(/^invalid record: kind: /);
    }
    expect(parseRecord({ ...rec, future_field: 1 })).toEqual(rec);
  });

  it("round-trips through a row of columns", () => {
    const rec = canonicalize({ ...raw, is_error: false, exit_code: 0 });
    const row = recordToRow(rec);
    expect(row).toHaveLength(COLUMNS.length);
    const obj = Object.fromEntries(COLUMNS.map((c, i) => [c.name, row[i]]));
    expect(obj.cache_write_tokens).toBe(13835);
    expect(obj.reasoning_tokens).toBeNull();
    expect(obj.ts).toBeInstanceOf(Date);
    expect(rowToRecord(obj)).toEqual(rec);
  });

  it("describes the same columns to DuckDB and Arrow", () => {
    const ddl = duckdbCreateTable("events");
    for (const c of COLUMNS) expect(ddl).toContain(`"${c.name}"`);
    expect(ddl).toContain('"redaction_rules" VARCHAR[] NOT NULL');
    const schema = arrowSchema();
    expect(schema.fields.map((f) => f.name)).toEqual(COLUMNS.map((c) => c.name));
  });

  it("days are UTC", () => {
    expect(recordDay({ ts: "2026-05-11T23:30:00-02:00" })).toBe("2026-05-12");
    expect(recordDay({})).toBe("unknown");
    expect(recordDay({ ts: "garbage" })).toBe("unknown");
  });
});

describe("checkStoredRecord", () => {
  it("accepts and refuses exactly what the zod schema does, field by field", () => {
    const good = canonicalize({ ...raw, usage: { input_tokens: 1, output_tokens: 2 }, usage_mode: "delta", is_sidechain: false, exit_code: 0, cost_usd: 0.5 }, ["a"]);
    expect(checkStoredRecord(JSON.parse(JSON.stringify(good)))).toEqual(good);
    const values: unknown[] = [undefined, null, "", "x", "delta", "assistant", 0, -1, 1.5, 2 ** 60, Number.NaN, true, [], ["a"], [1], {}, { input_tokens: 3 }, { input_tokens: -1 }, { output_tokens: 1.5 }];
    let refused = 0;
    // Every field the schema has (and every one the record carries), so a field added to one side only is caught.
    const fields = new Set([...Object.keys(CanonicalRecordSchema.shape), ...Object.keys(good)]);
    expect(fields.size).toBeGreaterThan(30);
    for (const field of fields) {
      for (const v of values) {
        const rec = { ...good, [field]: v } as Record<string, unknown>;
        if (v === undefined) delete rec[field];
        const zod = safeParseRecord(rec).success;
        let ours = true;
        try {
          checkStoredRecord(rec);
        } catch (e) {
          expect(isEventsError(e) && e.code === "InvalidRecord").toBe(true);
          expect((e as Error).message).toContain(field);
          ours = false;
        }
        expect(ours, `${field} = ${JSON.stringify(v)}`).toBe(zod);
        if (!ours) refused++;
      }
    }
    expect(refused).toBeGreaterThan(100);
    expect(() => checkStoredRecord([])).toThrow(/expected object/);
  });
});

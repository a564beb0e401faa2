import { afterAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { cleanupTempDirs } from "@lake/tooling/tmp";
import { fixtureFiles } from "./helpers.js";
import { CanonicalRecordSchema } from "@lake/events";
import { LineRecords, SETTERS, attrsText, isoTs, usageOf } from "../src/internal/build.js";
import type { SourceRef } from "../src/internal/types.js";

afterAll(cleanupTempDirs);

const source = { runtime: "claude-code", path: "/x/s.jsonl", rel: "p/s.jsonl", session_id: "s", stream: "main", kind: "transcript", mode: "append" } as SourceRef;

describe("record building", () => {
  it("attrsText writes the defined members in order, and nothing when none is defined", () => {
    expect(attrsText({ a: undefined, b: 1, c: undefined, d: { e: undefined, f: "g" } })).toBe('{"b":1,"d":{"f":"g"}}');
    expect(attrsText({ a: undefined })).toBeUndefined();
    expect(attrsText({})).toBeUndefined();
  });

  it("usageOf keeps the reported keys only", () => {
    expect(usageOf({ input_tokens: 1, output_tokens: undefined, cached_input_tokens: 0 })).toEqual({ input_tokens: 1, cached_input_tokens: 0 });
    expect(usageOf({ input_tokens: undefined })).toBeUndefined();
  });

  it("LineRecords.add: provenance first, the given fields in their order without undefined ones, then the adapter", () => {
    const b = new LineRecords(source, { bytes: "{}", offset: 10, line: 2 }, { name: "claude-code", version: "1" }, "id");
    b.add({ kind: "user", ts: undefined, text: "t", role: "user" });
    const r = b.add({ kind: "meta", attrs: "{}" });
    expect(Object.keys(b.out[0]!)).toEqual(["runtime", "session_id", "stream", "record_id", "kind", "text", "role", "source_path", "source_offset", "source_line", "adapter", "adapter_version"]);
    expect(r.record_id).toBe("id#1");
    expect("ts" in b.out[0]!).toBe(false);
  });

  it("LineRecords.add: a given stream overrides the source's in its place; provenance overrides a given source_path", () => {
    const b = new LineRecords(source, undefined, { name: "claude-code", version: "1" }, undefined);
    const r = b.add({ kind: "meta", source_path: "elsewhere", stream: "child", source_offset: 5 });
    expect(Object.entries(r)).toEqual([["runtime", "claude-code"], ["session_id", "s"], ["stream", "child"], ["kind", "meta"], ["source_path", "p/s.jsonl"], ["source_offset", 5], ["adapter", "claude-code"], ["adapter_version", "1"]]);
  });
});

describe("isoTs", () => {
  const viaDate = (v: string): string | undefined => {
    const d = new Date(v);
    return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
  };

  it("gives what Date gives for any string of the millisecond form, valid or not", () => {
    const digits = (n: number) => fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: n, maxLength: n });
    const near = fc.tuple(digits(4), digits(2), digits(2), digits(2), digits(2), digits(2), digits(3)).map(([y, mo, d, h, mi, s, ms]) => `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`);
    fc.assert(fc.property(near, (s) => isoTs(s) === viaDate(s)), { numRuns: 20_000 });
    // Real instants (and the day after each one's last day of month) of years 0000–9999.
    const instants = fc.date({ min: new Date("0000-01-01T00:00:00.000Z"), max: new Date("9999-12-31T23:59:59.999Z"), noInvalidDate: true }).map((d) => d.toISOString());
    fc.assert(fc.property(instants, (s) => isoTs(s) === s && isoTs(s.slice(0, 8) + "31" + s.slice(10)) === viaDate(s.slice(0, 8) + "31" + s.slice(10))), { numRuns: 20_000 });
    for (const s of ["2026-02-30T00:00:00.000Z", "2024-02-29T23:59:59.999Z", "2100-02-29T00:00:00.000Z", "2000-02-29T00:00:00.000Z", "2026-04-31T10:00:00.000Z", "2026-01-01T24:00:00.000Z", "2026-01-01T23:60:00.000Z", "0000-01-01T00:00:00.000Z", "2026-1-01T00:00:00.000Z", "2026-01-01T00:00:00.000z"]) {
      expect(isoTs(s)).toBe(viaDate(s));
    }
  });

  it("still reads other forms through Date", () => {
    expect(isoTs("2026-01-01T00:00:00Z")).toBe("2026-01-01T00:00:00.000Z");
    expect(isoTs("2026-01-01T01:00:00.000+01:00")).toBe("2026-01-01T00:00:00.000Z");
    expect(isoTs(1767225600)).toBe("2026-01-01T00:00:00.000Z");
    expect(isoTs("not a time")).toBeUndefined();
  });
});

describe("records as V8 holds them", () => {
  it("has a named store for every field of the record schema, in its order, and for nothing else", () => {
    // A field missing here would still be set (by a keyed store), but would make records dictionaries again.
    const fields = Object.keys(CanonicalRecordSchema.shape).filter((k) => k !== "content_hash" && k !== "redaction_rules");
    expect([...SETTERS.keys()]).toEqual(fields);
    const r: Record<string, unknown> = {};
    for (const [k, set] of SETTERS) set(r, k.length);
    expect(Object.entries(r)).toEqual(fields.map((k) => [k, k.length]));
  });

  it("every record of every real transcript, and its canonical copy, is a fast object, not a dictionary (the built packages, in a child)", () => {
    // V8 makes an object a dictionary once keyed stores add more than a dozen properties past those
    // it holds in the object itself; reading and JSON.stringify-ing each record then costs 15-20 % more.
    const entry = fileURLToPath(new URL("../dist/index.js", import.meta.url));
    const files = fixtureFiles();
    const code = `const m = await import(${JSON.stringify(entry)}); const ev = await import("@lake/events/record"); const fast = new Function("o", "return %HasFastProperties(o)"); let n = 0, slow = 0, slowCanonical = 0, keys = 0;
      for (const f of ${JSON.stringify(files.map((f) => f.path))}) for await (const r of m.parseFile(f)) { n++; keys = Math.max(keys, Object.keys(r).length); if (!fast(r)) slow++; if (!fast(ev.canonicalize(r))) slowCanonical++; }
      console.log(JSON.stringify({ n, slow, slowCanonical, keys }));`;
    const r = spawnSync(process.execPath, ["--allow-natives-syntax", "--input-type=module", "-e", code], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { n: number; slow: number; slowCanonical: number; keys: number };
    expect(out.n).toBeGreaterThan(1000);
    // Records with more fields than keyed stores may add: the case this guards.
    expect(out.keys).toBeGreaterThan(16);
    expect(out.slow).toBe(0);
    // And so is @lake/events' canonical copy of each.
    expect(out.slowCanonical).toBe(0);
  });
});

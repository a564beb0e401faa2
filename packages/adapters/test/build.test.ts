import { describe, expect, it } from "vitest";
import { LineRecords, attrsText, usageOf } from "../src/internal/build.js";
import type { SourceRef } from "../src/internal/types.js";

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
});

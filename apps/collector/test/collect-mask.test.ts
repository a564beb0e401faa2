import { describe, expect, it } from "vitest";
import { canonicalize, type RawRecord } from "@lake/events/record";
import { QUARANTINE_TYPE, createRedactor, defaultRules, memoryKey } from "@lake/redact";
import { maskRecord } from "../src/internal/collect-mask.js";

const redactor = createRedactor({ key: memoryKey("22".repeat(32)) });
const raw = (fields: Partial<RawRecord>): RawRecord => ({
  runtime: "claude-code", session_id: "s1", stream: "main", record_id: "r1", ts: "2026-01-01T00:00:00.000Z", kind: "user", role: "user",
  ...fields, source_path: "p/s1.jsonl", source_offset: 0, source_line: 1, adapter: "claude-code", adapter_version: "1.1.0",
});
const secret = defaultRules.find((r) => r.id === "github-token")!.examples[0]!;
const pem = defaultRules.find((r) => r.id === "private-key")!.examples[0]!;

describe("maskRecord", () => {
  it("lands a record with no secret as canonicalize would: same fields, same order", () => {
    const r = raw({ text: "hello world", attrs: '{"version":"2.1.38"}', usage: { input_tokens: 3 } });
    const expected = JSON.stringify(canonicalize({ ...r }, []));
    expect(JSON.stringify(maskRecord(redactor, r))).toBe(expected);
  });

  it("masks a secret in place and names its rule; the fields keep their order", () => {
    const r = raw({ text: `see ${secret}`, cwd: "/home/dev" });
    const keys = Object.keys(r);
    const out = maskRecord(redactor, r);
    expect(out.text).toMatch(/^see \[REDACTED:github-token:[0-9a-f]{8}\]/);
    expect(out.redaction_rules).toEqual(["github-token"]);
    expect(Object.keys(out)).toEqual([...keys, "content_hash", "redaction_rules"]);
    expect(JSON.stringify(out)).not.toContain(secret);
  });

  it("withholds a record a quarantine rule fires on", () => {
    const out = maskRecord(redactor, raw({ text: pem }));
    expect(out.vendor_type).toBe(QUARANTINE_TYPE);
    expect(out.text).toBeUndefined();
    expect(out.redaction_rules).toEqual(["private-key"]);
  });
});

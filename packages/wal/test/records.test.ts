import { describe, expect, it } from "vitest";
import {
  decodeWal,
  encodeLineageFrame,
  encodeRecordFrame,
  isWalError,
  KNOWN_FEATURES,
  parseRecordValue,
  prepareRecord,
  RECORD_SCHEMAS,
  RECORD_TYPES,
  recordRequirements,
  sumUsage,
  walAddress,
} from "../src/index.js";
import { runStarted } from "./helpers.js";

describe("records", () => {
  it("knows every record type of section 2.4", () => {
    expect([...RECORD_TYPES].sort()).toEqual(
      [
        "approval_requested", "approval_resolved", "budget_fired", "model_attempt_finished", "model_step_finished",
        "queued", "resume_started", "retracted", "run_auth_refrozen", "run_config_refrozen", "run_finished",
        "run_paused", "run_started", "steered", "step_started", "tool_batch_finished", "tool_batch_started",
        "tool_dispatch_intent", "tool_no_dispatch", "tool_result", "turn_finished",
      ].sort(),
    );
  });

  it("defaulted members read back as their default; absent stays absent", () => {
    const r = parseRecordValue({ type: "run_finished", reason: "completed", usage: {} });
    expect(r.kind).toBe("record");
    if (r.kind !== "record" || r.record.type !== "run_finished") return;
    expect(r.record.retries_used).toBe(0);
    expect("ts_ms" in r.record).toBe(false);
    expect(r.record.usage).toEqual({});
    const s = parseRecordValue({ ...runStarted });
    expect(s.kind === "record" && s.record.type === "run_started" && s.record.origin).toEqual({ kind: "fresh" });
    const resume = parseRecordValue({ type: "resume_started", episode: "r", resumed_from_seq: 4, replayed: {}, redone: [], indeterminate: [] });
    expect(resume.kind === "record" && resume.record.type === "resume_started" && resume.record.replayed).toEqual({ messages: 0, model_steps: 0, tool_results: 0 });
  });

  it("a missing required member does not decode", () => {
    for (const bad of [
      { type: "run_finished", reason: "completed" },
      { type: "model_attempt_finished", step_id: 1, attempt: 0 },
      { type: "tool_dispatch_intent", batch_id: "b", tool_call_id: "t" },
      { type: "step_started", step_id: -1 },
      { type: "step_started", step_id: 1.5 },
      { ...runStarted, config: { ...runStarted.config, renderer_version: undefined } },
    ]) {
      expect(parseRecordValue(bad).kind).toBe("invalid");
    }
  });

  it("open-string enums decode unknown values; unknown members are kept", () => {
    const r = parseRecordValue({
      type: "model_attempt_finished", step_id: 1, attempt: 0, request_body_len: 1, request_body_sha256: "aa",
      response_body_len: 2, response_body_sha256: "bb", outcome: "quantum_timeout", ts_ms: 5, future_member: [1],
    });
    expect(r.kind).toBe("record");
    expect(r.kind === "record" && (r.record as Record<string, unknown>)["future_member"]).toEqual([1]);
    const t = parseRecordValue({ type: "tool_result", batch_id: "b", result: {}, outcome: "teleported", reason: "scope_whatever" });
    expect(t.kind).toBe("record");
    const p = parseRecordValue({ type: "run_paused", run_id: "r", reason: "new_reason", error: { class: "cosmic_ray", message: "m" } });
    expect(p.kind).toBe("record");
    const a = parseRecordValue({ type: "run_auth_refrozen", auth_selection: { credential_id: "k:p", vault_request: { min_ttl_ms: null, op: "get_future" } } });
    expect(a.kind).toBe("record");
  });

  it("unknown types are skipped, not errors", () => {
    expect(parseRecordValue({ type: "hologram_started", x: 1 }).kind).toBe("unknown");
    const wal = Buffer.concat([encodeLineageFrame(new Uint8Array(16)), encodeRecordFrame({ type: "hologram_started" }, { seq: 1 })]);
    const r = decodeWal(wal);
    expect(r.records).toEqual([]);
    expect(r.skipped.map((s) => s.type)).toEqual(["hologram_started"]);
  });

  it("manifest fetch with both catalog_digest and absent does not decode", () => {
    const manifest = {
      plan: "{}", plan_identity: "a".repeat(64), composition_digest: "b".repeat(64), tools: [], system_text: "",
      system_digest: "x", join_version: 1, role_versions: {},
      fetches: [{ provider: "p", catalog_digest: "c", absent: "timeout" }],
    };
    expect(parseRecordValue({ ...runStarted, manifest }).kind).toBe("invalid");
    expect(parseRecordValue({ ...runStarted, manifest: { ...manifest, fetches: [{ provider: "p", absent: "timeout" }] } }).kind).toBe("record");
  });
});

describe("gated records", () => {
  it("the known-feature table", () => {
    expect([...KNOWN_FEATURES].sort()).toEqual(["agent-run-scopes/v1", "dispatch-module/v1", "flow-scopes/v1", "plan-manifest/v1", "scope/v1", "steer-queue/v1"]);
  });

  it("the encoder derives each record's requirements", () => {
    const scope = { owner: { kind: "reserved", module_id: "m" }, ref: "r", scope_epoch: 1 };
    expect(recordRequirements({ ...runStarted })).toEqual([]);
    expect(recordRequirements({ ...runStarted, scope })).toEqual(["scope/v1"]);
    expect(recordRequirements({ ...runStarted, scope: { ...scope, agent_id: "a" } })).toEqual(["agent-run-scopes/v1", "scope/v1"]);
    expect(recordRequirements({ ...runStarted, manifest: {} })).toEqual(["plan-manifest/v1"]);
    expect(recordRequirements({ type: "tool_dispatch_intent", module_id: "m" })).toEqual(["dispatch-module/v1"]);
    expect(recordRequirements({ type: "tool_dispatch_intent" })).toEqual([]);
    expect(recordRequirements({ type: "steered" })).toEqual(["steer-queue/v1"]);
    expect(prepareRecord({ type: "step_started", step_id: 1 }, ["flow-scopes/v1"]).ver).toBe(3);
    expect(prepareRecord({ type: "step_started", step_id: 1 }).ver).toBe(1);
  });

  it("the encoder refuses unknown or malformed feature names and invalid records", () => {
    for (const f of [["hook-output/v1"], ["Scope/v1"], ["scope"]]) {
      try {
        prepareRecord({ type: "step_started", step_id: 1 }, f);
        expect.unreachable();
      } catch (e) {
        expect(isWalError(e) && e.code).toBe("InvalidArgument");
      }
    }
    expect(() => prepareRecord({ type: "step_started" })).toThrow(/step_started record does not validate/);
  });
});

describe("usage", () => {
  it("absent is not zero when summing", () => {
    expect(sumUsage([])).toEqual({});
    expect(sumUsage([{}, {}])).toEqual({});
    expect(sumUsage([{ input_tokens: 0 }, {}])).toEqual({ input_tokens: 0 });
    expect(sumUsage([{ input_tokens: 3, output_tokens: 1 }, { output_tokens: 2, reasoning_tokens: 1 }, { cache_write_tokens: 4 }])).toEqual({
      input_tokens: 3,
      output_tokens: 3,
      reasoning_tokens: 1,
      cache_write_tokens: 4,
    });
  });
});

describe("addresses", () => {
  it("pinned value and independent check", () => {
    expect(walAddress({ project_root: "/tmp/p", harness: "runner", session: "s1" })).toBe("31a7840439280f40");
    // An independent 32-bit-halves implementation of FNV-1a 64.
    const fnv = (s: string) => {
      let hi = 0xcbf29ce4, lo = 0x84222325;
      for (const b of Buffer.from(s, "utf8")) {
        lo = (lo ^ b) >>> 0;
        // multiply (hi,lo) by 0x100000001b3 = 2^40 + 0x1b3
        const loMul = lo * 0x1b3;
        const newLo = loMul >>> 0;
        const carry = Math.floor(loMul / 0x100000000);
        const newHi = (hi * 0x1b3 + carry + ((lo << 8) >>> 0)) >>> 0;
        hi = newHi;
        lo = newLo;
      }
      return hi.toString(16).padStart(8, "0") + lo.toString(16).padStart(8, "0");
    };
    for (const t of [
      { project_root: "/home/ü/项目", harness: "claude", session: "abc" },
      { project_root: "", harness: "", session: "" },
      { project_root: "/x", harness: "h", session: "🙂" },
    ]) {
      expect(walAddress(t)).toBe(fnv(`${t.project_root}\u001f${t.harness}\u001f${t.session}`));
    }
  });

  it("a field containing U+001F is rejected", () => {
    for (const t of [
      { project_root: "/a\u001fb", harness: "h", session: "s" },
      { project_root: "/a", harness: "h\u001f", session: "s" },
      { project_root: "/a", harness: "h", session: "\u001f" },
    ]) {
      try {
        walAddress(t);
        expect.unreachable();
      } catch (e) {
        expect(isWalError(e) && e.code).toBe("InvalidArgument");
      }
    }
  });
});

describe("the zod-free list of record types", () => {
  it("names exactly the types RECORD_SCHEMAS validates", async () => {
    const { KNOWN_RECORD_TYPE_NAMES } = await import("../src/internal/record-types.js");
    expect([...KNOWN_RECORD_TYPE_NAMES].sort()).toEqual(Object.keys(RECORD_SCHEMAS).sort());
  });
});

// Local metric derivation: a receipt per landed file (golden vectors), points that add up to the
// session's counters (a response streamed over two files counts once), and a crash at every step
// of a run that a second run completes to the same bytes.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  decodeMetricsRequest, decodeMetricsState, decodeReceipt, deriveMetrics, derivedCounters, encodeMetricsState, encodeReceipt, isStoreError,
  listSpool, localSpoolName, metricPoints, readReceipts,
} from "../src/metrics.js";
import { buildLanded } from "../src/internal/landed.js";

const SID = "221ac729";
const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "lake-derive-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const vector = (name: string) => readFileSync(new URL(`./vectors/${name}`, import.meta.url));

const base = { runtime: "claude-code", session_id: SID, stream: "main", redaction_rules: [], source_path: "p/221ac729.jsonl", adapter: "claude-code-local", adapter_version: "1.0.0" };
const rec = (line: number, r: Record<string, unknown>) => JSON.stringify({ ...base, source_offset: line * 100, source_line: line, content_hash: `h${line}`, ...r });

/** Two landed files: response m1 streamed over both (output 10, then 25), a tool call and a failure, then response m2. */
function landTwo(root: string, seqs: [number, number] = [1, 2]): void {
  const dir = join(root, SID, "streams", "main");
  mkdirSync(dir, { recursive: true });
  const files: [string, string[]][] = [
    ["20260831T091204.481523000Z", [
      rec(1, { record_id: "u1", kind: "user", text: "hi", ts: "2026-08-31T09:12:00.000Z" }),
      rec(2, { record_id: "a1", kind: "assistant", model: "claude-opus-4-6", usage_key: "m1", usage_mode: "delta", usage: { input_tokens: 3, cached_input_tokens: 100, output_tokens: 10 }, ts: "2026-08-31T09:12:01.000Z" }),
      rec(3, { record_id: "t1", kind: "tool_call", tool_name: "Bash", tool_call_id: "c1", ts: "2026-08-31T09:12:02.000Z" }),
      rec(4, { record_id: "r1", kind: "tool_result", tool_call_id: "c1", is_error: true, ts: "2026-08-31T09:12:03.000Z" }),
    ]],
    ["20260831T091500.000000000Z", [
      rec(5, { record_id: "a1b", kind: "assistant", model: "claude-opus-4-6", usage_key: "m1", usage_mode: "delta", usage: { input_tokens: 3, cached_input_tokens: 100, output_tokens: 25 }, ts: "2026-08-31T09:12:05.000Z" }),
      rec(6, { record_id: "a2", kind: "assistant", model: "claude-opus-4-6", usage_key: "m2", usage_mode: "delta", usage: { input_tokens: 1, cache_write_tokens: 50, output_tokens: 7 }, ts: "2026-08-31T09:14:00.000Z" }),
    ]],
  ];
  files.forEach(([stamp, lines], i) => {
    const seq = seqs[i]!;
    const { chunks } = buildLanded({
      session: SID, area: "streams", stream: "main", kind: "transcript", cursor: "append", source: "p/221ac729.jsonl", seq, collected_at: stamp,
      first_offset: 0, end_offset: 100, first_line: 1, last_line: lines.length, adapter: "claude-code-local", adapter_version: "1.0.0",
    }, lines);
    writeFileSync(join(dir, `transcript-${stamp}-${String(seq).padStart(6, "0")}.sd`), Buffer.concat(chunks), { mode: 0o444 });
  });
}

/** `metric{attrs} value` of every point of a spool file. */
function points(path: string): string[] {
  return metricPoints(decodeMetricsRequest(readFileSync(path), path))
    .map((p) => `${p.metric}{${Object.entries(p.attributes).map(([k, v]) => `${k}=${String(v)}`).join(",")}} ${String(p.value)}`)
    .sort();
}

describe("metric derivation", () => {
  it("each landed file's points are what it adds; the receipts and spool files match the golden vectors", async () => {
    const root = temp();
    landTwo(root);
    const s = await deriveMetrics(root);
    expect(s).toEqual({ derived: 2, sessions: 1, problems: [] });
    const spool = join(root, "_metrics");
    expect(points(join(spool, localSpoolName(SID, 1)))).toEqual([
      "lake.session.count{} 1",
      "lake.tool.calls{gen_ai.tool.name=Bash} 1",
      "lake.tool.failures{} 1",
      "lake.usage.responses{gen_ai.response.model=claude-opus-4-6} 1",
      "lake.usage.tokens{gen_ai.response.model=claude-opus-4-6,gen_ai.token.type=cached_input} 100",
      "lake.usage.tokens{gen_ai.response.model=claude-opus-4-6,gen_ai.token.type=input} 3",
      "lake.usage.tokens{gen_ai.response.model=claude-opus-4-6,gen_ai.token.type=output} 10",
    ]);
    // m1 grew by 15 output tokens (counted once, as its largest copy); m2 is new
    expect(points(join(spool, localSpoolName(SID, 2)))).toEqual([
      "lake.usage.responses{gen_ai.response.model=claude-opus-4-6} 1",
      "lake.usage.tokens{gen_ai.response.model=claude-opus-4-6,gen_ai.token.type=cache_write} 50",
      "lake.usage.tokens{gen_ai.response.model=claude-opus-4-6,gen_ai.token.type=input} 1",
      "lake.usage.tokens{gen_ai.response.model=claude-opus-4-6,gen_ai.token.type=output} 22",
    ]);
    const req = decodeMetricsRequest(readFileSync(join(spool, localSpoolName(SID, 2))), "2");
    const res = Object.fromEntries(req.resourceMetrics[0]!.resource!.attributes.map((a) => [a.key, String(a.value?.value.value)]));
    expect(res).toEqual({ "service.name": "lake", "session.id": SID, "lake.runtime": "claude-code", "lake.landed.seq": "2" });

    // golden vectors: the receipt of file 2 and its request, byte for byte
    const receiptText = readFileSync(join(root, SID, "metrics", "000002.json"), "utf8");
    expect(receiptText).toBe(vector("receipt-000002.json").toString("utf8"));
    expect(readFileSync(join(spool, localSpoolName(SID, 2))).equals(vector(`metrics-${SID}-000002-local.pb`))).toBe(true);
    expect(createHash("sha256").update(vector(`metrics-${SID}-000002-local.pb`)).digest("hex")).toBe(GOLDEN_LOCAL_SHA256);
    const r = decodeReceipt(receiptText, "000002.json");
    expect(r.prevSeq).toBe(1);
    expect(r.counted).toEqual(["usage:m1", "usage:m2"]);
    expect(Buffer.from(r.request).equals(vector(`metrics-${SID}-000002-local.pb`))).toBe(true);
    expect(encodeReceipt(r)).toBe(receiptText);
    expect(statSync(join(root, SID, "metrics", "000002.json")).mode & 0o777).toBe(0o444);
    expect(readFileSync(join(spool, "metrics.state"), "utf8")).toBe(vector("metrics.state").toString("utf8"));
    expect(decodeMetricsState(vector("metrics.state").toString("utf8"), "metrics.state").sessions).toEqual(new Map([[SID, 2]]));

    // the counters the exposition serves are the session's totals after its last file
    const [c] = derivedCounters(root);
    expect(c!.totals.filter((t) => t.metric === "lake.usage.tokens").map((t) => `${t.attributes["gen_ai.token.type"]!} ${t.value}`).sort()).toEqual([
      "cache_write 50", "cached_input 100", "input 4", "output 32",
    ]);
    // a second run derives nothing
    expect((await deriveMetrics(root)).derived).toBe(0);
  });

  it("a damaged receipt, and a receipt for other bytes than the landed file, are Corrupt naming the file, the session reported as a problem", async () => {
    const root = temp();
    landTwo(root);
    await deriveMetrics(root);
    const file = join(root, SID, "metrics", "000001.json");
    const text = readFileSync(file, "utf8");
    for (const [bad, why] of [
      [text.slice(0, 40), /not a derivation receipt/],
      [text.replace(/"sha256":"[0-9a-f]{64}"/, `"sha256":"${"0".repeat(64)}"`), /receipt is for SHA-256 0{64}/],
      [text.replace('"schema":1', '"schema":9'), /unknown schema 9/],
    ] as const) {
      rmSync(file, { force: true });
      writeFileSync(file, bad);
      rmSync(join(root, "_metrics", "metrics.state"), { force: true });
      rmSync(join(root, "_metrics", localSpoolName(SID, 1)), { force: true });
      const s = await deriveMetrics(root);
      expect(s.problems).toHaveLength(1);
      expect(s.problems[0]!.reason).toMatch(why);
      expect(s.problems[0]!.reason).toContain(file);
      if (!String(why).includes("SHA-256")) {
        let code: unknown;
        try {
          readReceipts(root, SID);
        } catch (e) {
          code = isStoreError(e) && e.code;
        }
        expect(code).toBe("Corrupt");
      }
    }
    expect(() => decodeMetricsState("schema 1\nx y\n", "m.state")).toThrow(/^m\.state: y is not a non-negative integer|x is not a non-negative integer/);
    expect(encodeMetricsState({ sessions: new Map([["b", 2], ["a", 1]]) })).toBe("schema        1\na             1\nb             2\n");
  });

  it("a crash at every step of a run: the next run completes it, each file derived once, the same bytes as an uninterrupted run", async () => {
    const clean = temp();
    landTwo(clean);
    const steps: string[] = [];
    await deriveMetrics(clean, { onStep: (s) => steps.push(s) });
    expect(steps.length).toBeGreaterThan(8);
    const want = new Map(listSpool(clean).map((e) => [e.name, readFileSync(e.path).toString("hex")]));
    for (let k = 1; k <= steps.length; k++) {
      const root = temp();
      landTwo(root);
      let n = 0;
      // the step throws (a crash): the run stops there, or reports the session as a problem
      const first = await deriveMetrics(root, { onStep: () => { if (++n === k) throw new Error(`crash at ${k}`); } }).catch((e: Error) => e);
      expect(first instanceof Error ? first.message : first.problems[0]?.reason).toMatch(new RegExp(`crash at ${k}$`));
      const s = await deriveMetrics(root);
      expect(s.problems).toEqual([]);
      const got = new Map(listSpool(root).map((e) => [e.name, readFileSync(e.path).toString("hex")]));
      expect(got, `crash at step ${k} (${steps[k - 1]!})`).toEqual(want);
      expect(readdirSync(join(root, SID, "metrics")).filter((x) => x.endsWith(".json")).sort()).toEqual(["000001.json", "000002.json"]);
      expect(readFileSync(join(root, "_metrics", "metrics.state"), "utf8")).toBe(readFileSync(join(clean, "_metrics", "metrics.state"), "utf8"));
    }
  });
});

const GOLDEN_LOCAL_SHA256 = "030a465c575566162089b099d9b605c2ad79a56ee38473d65b68f381a34ea2f7";

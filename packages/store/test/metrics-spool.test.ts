// The metrics spool (`_metrics/`): names, spool.state, the OTLP codec's golden vector, and numbering
// that never reissues a number after a crash between the file and the state.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  decodeMetricsRequest, decodeMetricsRequestJson, decodeMetricsResponse, decodeSpoolState, exportIdOf, withExportId, encodeMetricsRequest, encodeSpoolState, isStoreError, listSpool,
  localSpoolName, metricsRequestToJson, otlpSpoolName, parseSpoolName, spoolReceived,
} from "../src/metrics.js";

const v = (name: string) => readFileSync(new URL(`./vectors/${name}`, import.meta.url));
const OTLP = "metrics-20260831T091204.481523000Z-000001-otlp.pb";
const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "lake-spool-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("metrics spool", () => {
  it("golden vector: a spooled OTLP request decodes, and encodes back to the same bytes", () => {
    const buf = v(OTLP);
    expect(createHash("sha256").update(buf).digest("hex")).toBe("7a6f8c06c59eca94bd43f046958d59a6cc7a986cf7303f9b15d911d5546d3b4c");
    const req = decodeMetricsRequest(buf, OTLP);
    const m = req.resourceMetrics[0]!.scopeMetrics[0]!.metrics[0]!;
    expect(m.name).toBe("claude_code.token.usage");
    expect(m.data.case).toBe("sum");
    if (m.data.case !== "sum") return;
    expect(m.data.value.dataPoints[0]!.value).toEqual({ case: "asDouble", value: 100 });
    expect(m.data.value.dataPoints[0]!.timeUnixNano).toBe(1788166325000000000n);
    expect(Buffer.from(encodeMetricsRequest(req)).equals(buf)).toBe(true);
    // OTLP/JSON round trip, through the form the receiver accepts
    const json = JSON.stringify(metricsRequestToJson(req));
    expect(json).toContain('"timeUnixNano":"1788166325000000000"');
    expect(Buffer.from(encodeMetricsRequest(decodeMetricsRequestJson(json, "j"))).equals(buf)).toBe(true);
  });

  it("a truncated or flipped request, and JSON that is not a request, are Corrupt naming the source", () => {
    const buf = v(OTLP);
    for (const bad of [buf.subarray(0, buf.length - 3), Buffer.from([0xff, 0xff, 0xff])]) {
      try {
        decodeMetricsRequest(bad, "x.pb");
        expect.unreachable();
      } catch (e) {
        expect(isStoreError(e) && e.code).toBe("Corrupt");
        expect((e as Error).message).toMatch(/^x\.pb: not an OTLP metrics request/);
      }
    }
    expect(() => decodeMetricsRequestJson("{", "y.json")).toThrow(/^y\.json: not JSON/);
    expect(() => decodeMetricsRequestJson('{"resourceMetrics":7}', "z.json")).toThrow(/^z\.json: not an OTLP metrics request/);
  });

  it("lake.export.id is set on every resource and read back; a receiver's answer decodes (empty, partial success, JSON), garbage is Corrupt", () => {
    const req = decodeMetricsRequest(v(OTLP), OTLP);
    expect(exportIdOf(req)).toBeUndefined();
    const once = decodeMetricsRequest(encodeMetricsRequest(withExportId(req, "host-a/metrics-x-000001-local.pb")), "x");
    expect(exportIdOf(once)).toBe("host-a/metrics-x-000001-local.pb");
    const twice = withExportId(once, "host-b/y");
    expect(twice.resourceMetrics[0]!.resource!.attributes.filter((a) => a.key === "lake.export.id")).toHaveLength(1);
    expect(exportIdOf(twice)).toBe("host-b/y");
    expect(decodeMetricsResponse(new Uint8Array(), "protobuf", "r")).toEqual({ rejectedDataPoints: 0n, errorMessage: "" });
    // ExportMetricsServiceResponse{partial_success{rejected_data_points: 3, error_message: "no"}}
    expect(decodeMetricsResponse(new Uint8Array([0x0a, 0x06, 0x08, 0x03, 0x12, 0x02, 0x6e, 0x6f]), "protobuf", "r")).toEqual({ rejectedDataPoints: 3n, errorMessage: "no" });
    expect(decodeMetricsResponse(Buffer.from('{"partialSuccess":{"rejectedDataPoints":"2","errorMessage":"x"}}'), "json", "r")).toEqual({ rejectedDataPoints: 2n, errorMessage: "x" });
    expect(() => decodeMetricsResponse(Buffer.from("<html>"), "json", "http://h/v1/metrics")).toThrow(/^http:\/\/h\/v1\/metrics: not an OTLP metrics response/);
  });

  it("names and spool.state", () => {
    expect(otlpSpoolName("20260831T091204.481523000Z", 1)).toBe(OTLP);
    expect(parseSpoolName(OTLP)).toEqual({ kind: "otlp", receivedAt: "20260831T091204.481523000Z", seq: 1 });
    const local = localSpoolName("221ac729-1b2c-4d5e-8f90-0123456789ab", 35);
    expect(local).toBe("metrics-221ac729-1b2c-4d5e-8f90-0123456789ab-000035-local.pb");
    expect(parseSpoolName(local)).toEqual({ kind: "local", sessionId: "221ac729-1b2c-4d5e-8f90-0123456789ab", seq: 35 });
    for (const n of ["spool.state", "metrics.state", ".lock", ".tmp-metrics-x", "metrics-20260831T091204Z-000001-otlp.pb", "metrics-s-1-local.pb"]) expect(parseSpoolName(n)).toBeUndefined();
    const text = v("spool.state").toString("utf8");
    expect(decodeSpoolState(text, "spool.state")).toEqual({ nextSeq: 2 });
    expect(encodeSpoolState({ nextSeq: 2 })).toBe(text);
    expect(() => decodeSpoolState("schema 2\nnext_seq 1\n", "s")).toThrow(/^s: unknown schema 2/);
    expect(() => decodeSpoolState("schema 1\nnext_seq 0\n", "s")).toThrow(/^s: next_seq/);
    expect(() => decodeSpoolState("schema 1\n", "s")).toThrow(/^s: missing next_seq/);
  });

  it("spoolReceived lands read-only files in order, and a crash before spool.state never reissues a number", async () => {
    const root = temp();
    const body = v(OTLP);
    expect((await spoolReceived(root, body, { receivedAtNs: 1788167524481523000n })).name).toBe(OTLP);
    // crash between landing file 2 and saving the state: the state still says 2
    await expect(spoolReceived(root, body, { onStep: (s) => { if (s === "spool-state:write-temp") throw new Error("killed at " + s); } })).rejects.toThrow(/killed/);
    expect(decodeSpoolState(readFileSync(join(root, "_metrics", "spool.state"), "utf8"), "s")).toEqual({ nextSeq: 2 });
    const third = await spoolReceived(root, body);
    expect(third.seq).toBe(3);
    const spool = listSpool(root);
    expect(spool.map((e) => e.parsed.seq)).toEqual([1, 2, 3]);
    for (const e of spool) {
      expect(statSync(e.path).mode & 0o777).toBe(0o444);
      expect(readFileSync(e.path).equals(body)).toBe(true);
    }
    expect(readdirSync(join(root, "_metrics")).filter((n) => n.startsWith(".tmp-"))).toEqual([]);
    expect(listSpool(temp())).toEqual([]);
  });
});

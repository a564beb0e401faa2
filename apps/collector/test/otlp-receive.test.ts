// `lake-collector watch --otlp-listen`: the OpenTelemetry JS SDK's own OTLP exporters (protobuf and
// JSON over HTTP) send to the real collector process; each request is in the root's metrics spool
// when the 200 arrives, survives a SIGKILL right after it, numbering goes on after a restart, and
// lake-reader's `metrics` table returns the points sent.
import { EXIT } from "@lake/cli";
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, MetricReader, type PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { OTLPMetricExporter as ProtoExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { OTLPMetricExporter as JsonExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { decodeMetricsRequest, listSpool, metricsRequestToJson } from "@lake/store/metrics";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { BIN } from "./helpers.js";

afterAll(cleanupTempDirs);

const READER = fileURLToPath(new URL("../../reader/bin/lake-reader.js", import.meta.url));

/** A pull reader: the test decides when the SDK collects, then hands the batch to the exporter. */
class PullReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** Record a few Claude Code style points with the real SDK and export them with `exporter`. */
async function send(exporter: PushMetricExporter, tokens: number, session: string): Promise<ExportResult> {
  const reader = new PullReader();
  const provider = new MeterProvider({ resource: resourceFromAttributes({ "service.name": "claude-code" }), readers: [reader] });
  const meter = provider.getMeter("com.anthropic.claude_code");
  const usage = meter.createCounter("claude_code.token.usage", { unit: "tokens" });
  usage.add(tokens, { "session.id": session, type: "input", model: "claude-sonnet-4-5" });
  usage.add(tokens * 2, { "session.id": session, type: "output", model: "claude-sonnet-4-5" });
  meter.createCounter("claude_code.session.count").add(1, { "session.id": session });
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  const result = await new Promise<ExportResult>((r) => exporter.export(resourceMetrics, r));
  await exporter.shutdown();
  await provider.shutdown();
  return result;
}

interface Watcher {
  readonly proc: ChildProcess;
  readonly url: Promise<string>;
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: string;
}

function startWatch(root: string): Watcher {
  const proc = spawn(process.execPath, [BIN, "watch", "--root", root, "--sources-only", "--interval", "3600", "--otlp-listen", "127.0.0.1:0"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const w: Watcher = {
    proc,
    stderr: "",
    exit: new Promise((res) => proc.on("exit", (code, signal) => res({ code, signal }))),
    url: new Promise((res, rej) => {
      let out = "";
      proc.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/\S+\/v1\/metrics)/.exec(out);
        if (m) res(m[1]!);
      });
      proc.on("exit", () => rej(new Error(`watch exited before listening: ${w.stderr}`)));
    }),
  };
  proc.stderr!.on("data", (d: Buffer) => (w.stderr += d.toString()));
  return w;
}

/** Every data point of a spooled request as `metric type value`. */
function points(path: string): string[] {
  const req = decodeMetricsRequest(readFileSync(path), path);
  const out: string[] = [];
  for (const rm of req.resourceMetrics)
    for (const sm of rm.scopeMetrics)
      for (const m of sm.metrics) {
        if (m.data.case !== "sum") continue;
        for (const p of m.data.value.dataPoints) {
          const type = p.attributes.find((a) => a.key === "type")?.value?.value.value;
          out.push(`${m.name} ${String(type ?? "-")} ${p.value.case === "asInt" ? String(p.value.value) : String(p.value.value)}`);
        }
      }
  return out.sort();
}

describe("watch --otlp-listen", { timeout: 120_000 }, () => {
  it("spools what the SDK's protobuf and JSON exporters send, durably before the 200", async () => {
    const root = tempDir("lake-otlp-");
    let w = startWatch(root);
    let url = await w.url;

    // protobuf, then SIGKILL the moment the exporter has its 200
    expect((await send(new ProtoExporter({ url }), 100, "s-1")).code).toBe(ExportResultCode.SUCCESS);
    w.proc.kill("SIGKILL");
    expect((await w.exit).signal).toBe("SIGKILL");
    let spool = listSpool(root);
    expect(spool.map((e) => e.parsed)).toEqual([{ kind: "otlp", receivedAt: expect.stringMatching(/^\d{8}T\d{6}\.\d{9}Z$/) as unknown, seq: 1 }]);
    expect(spool[0]!.name).toMatch(/^metrics-\d{8}T\d{6}\.\d{9}Z-000001-otlp\.pb$/);
    expect(statSync(spool[0]!.path).mode & 0o777).toBe(0o444);
    expect(points(spool[0]!.path)).toEqual(["claude_code.session.count - 1", "claude_code.token.usage input 100", "claude_code.token.usage output 200"]);
    const first = metricsRequestToJson(decodeMetricsRequest(readFileSync(spool[0]!.path), "spool")) as { resourceMetrics: { resource: { attributes: { key: string }[] } }[] };
    expect(first.resourceMetrics[0]!.resource.attributes.map((a) => a.key)).toContain("service.name");

    // restarted: JSON from the -http exporter gets the next number, the first file is untouched
    w = startWatch(root);
    url = await w.url;
    expect((await send(new JsonExporter({ url }), 7, "s-2")).code).toBe(ExportResultCode.SUCCESS);
    w.proc.kill("SIGKILL");
    await w.exit;
    spool = listSpool(root);
    expect(spool.map((e) => e.parsed.seq)).toEqual([1, 2]);
    expect(points(spool[1]!.path)).toEqual(["claude_code.session.count - 1", "claude_code.token.usage input 7", "claude_code.token.usage output 14"]);
    expect(readFileSync(join(root, "_metrics", "spool.state"), "utf8")).toMatch(/^schema +1\nnext_seq +3\n$/);

    // queryable: lake-reader's metrics table over the same root (beside an empty fleet store)
    mkdirSync(join(root, "fleet"));
    const sql = "SELECT spool_seq, session_id, metric, attributes->>'type' AS type, value FROM metrics WHERE metric = 'claude_code.token.usage' ORDER BY spool_seq, type";
    const out = execFileSync(process.execPath, [READER, "sql", "--root", root, "--store", `file://${join(root, "fleet")}`, "--json", sql], { encoding: "utf8" });
    expect(JSON.parse(out)).toEqual([
      { spool_seq: 1, session_id: "s-1", metric: "claude_code.token.usage", type: "input", value: 100 },
      { spool_seq: 1, session_id: "s-1", metric: "claude_code.token.usage", type: "output", value: 200 },
      { spool_seq: 2, session_id: "s-2", metric: "claude_code.token.usage", type: "input", value: 7 },
      { spool_seq: 2, session_id: "s-2", metric: "claude_code.token.usage", type: "output", value: 14 },
    ]);
    // a damaged spool file is named and left out; the rest is answered (exit 3, partial)
    const damaged = join(root, "_metrics", "metrics-20260101T000000.000000000Z-000009-otlp.pb");
    writeFileSync(damaged, Buffer.from([0xff, 0xff, 0xff]));
    const partial = spawnSync(process.execPath, [READER, "sql", "--root", root, "--store", `file://${join(root, "fleet")}`, "--json", sql], { encoding: "utf8" });
    expect(partial.status).toBe(EXIT.partial);
    expect(partial.stderr).toContain(`${damaged}: not an OTLP metrics request`);
    expect(JSON.parse(partial.stdout)).toHaveLength(4);
  });

  it("answers 400 to a body that is not an OTLP request, 404 elsewhere, and spools nothing", async () => {
    const root = tempDir("lake-otlp-bad-");
    const w = startWatch(root);
    const url = await w.url;
    const bad = await fetch(url, { method: "POST", headers: { "content-type": "application/x-protobuf" }, body: new Uint8Array([0xff, 0xff, 0xff]) });
    expect(bad.status).toBe(400);
    const badJson = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" });
    expect(badJson.status).toBe(400);
    expect(((await badJson.json()) as { message: string }).message).toMatch(/not JSON/);
    expect((await fetch(url.replace("/v1/metrics", "/v1/traces"), { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(404);
    expect((await fetch(url, { method: "POST", headers: { "content-type": "text/plain" }, body: "x" })).status).toBe(415);
    w.proc.kill("SIGTERM");
    expect((await w.exit).code).toBe(0);
    expect(listSpool(root)).toEqual([]);
    expect(existsSync(join(root, "_metrics", "spool.state"))).toBe(false);
  });
});

// `push --otlp-endpoint`: derive what is not derived yet, then send every spool file (received
// requests and derived ones) this receiver has not answered, recording its answer in push.state.
import { readFileSync } from "node:fs";
import { CollectorError } from "./errors.js";
import { readPushState, writePushState } from "./push.js";
import { crashTesting, step } from "./crash.js";

/** What one export did. */
export interface OtlpExportSummary {
  endpoint: string;
  /** Landed files derived now. */
  derived: number;
  /** Spool files sent now, accepted, and refused (in whole or part). */
  sent: number;
  accepted_points: number;
  rejected: number;
  /** Spool files with no points (recorded, not sent). */
  empty: number;
  /** Sessions whose metrics could not be derived, one line each. */
  problems: string[];
  interrupted: boolean;
}

/** Options of {@link exportMetrics}. */
export interface OtlpExportOptions {
  readonly endpoint: string;
  readonly headers: Readonly<Record<string, string>>;
  /** This machine's agent id: the export id is `<agent>/<spool file name>`. */
  readonly agent: string;
  readonly shouldStop?: () => boolean;
  /** Per-request timeout (ms, default 30 s). */
  readonly timeoutMs?: number;
}

/** `--otlp-endpoint URL`: a base URL gets OTLP/HTTP's `/v1/metrics`; a URL with a path is used as it is. */
export function otlpMetricsUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new CollectorError("Usage", `--otlp-endpoint: expected an http:// or https:// URL, got ${JSON.stringify(raw)}`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new CollectorError("Usage", `--otlp-endpoint: expected an http:// or https:// URL, got ${JSON.stringify(raw)}`);
  if (u.pathname === "/" || u.pathname === "") u.pathname = "/v1/metrics";
  return u.href;
}

/** `--otlp-header KEY=VALUE` (repeatable). */
export function parseHeader(raw: string): [string, string] {
  const i = raw.indexOf("=");
  if (i <= 0) throw new Error("expected KEY=VALUE");
  const k = raw.slice(0, i).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k)) throw new Error(`${JSON.stringify(k)} is not a header name`);
  return [k, raw.slice(i + 1).trim()];
}

const countPoints = (req: { resourceMetrics: { scopeMetrics: { metrics: { data: { case: string | undefined; value?: unknown } }[] }[] }[] }): number => {
  let n = 0;
  for (const rm of req.resourceMetrics)
    for (const sm of rm.scopeMetrics)
      for (const m of sm.metrics) {
        const v = m.data.value as { dataPoints?: unknown[] } | undefined;
        n += v?.dataPoints?.length ?? 0;
      }
  return n;
};

/**
 * Derive, then send every spool file `endpoint` has not answered, in spool order, one request per
 * file with `lake.export.id` on its resources; push.state records each answer before the next
 * file. A 5xx, 408, 429 or a network error stops the export (`Store`: run push again); a crash
 * between a 200 and the save re-sends that one file, which a lake receiver spools once (the id).
 */
export async function exportMetrics(root: string, o: OtlpExportOptions): Promise<OtlpExportSummary> {
  const { deriveMetrics, listSpool, decodeMetricsRequest, decodeMetricsResponse, encodeMetricsRequest, withExportId } = await import("@lake/store/metrics");
  const d = await deriveMetrics(root, crashTesting ? { onStep: step } : {});
  const summary: OtlpExportSummary = { endpoint: o.endpoint, derived: d.derived, sent: 0, accepted_points: 0, rejected: 0, empty: 0, problems: d.problems.map((p) => `${p.reason}; session ${p.session} not derived (the others were)`), interrupted: false };
  const state = readPushState(root);
  const recv = ((state.otlp_receivers ??= {})[o.endpoint] ??= { accepted: {}, rejected: {} });
  for (const e of listSpool(root)) {
    if (recv.accepted[e.name] !== undefined || recv.rejected[e.name] !== undefined) continue;
    if (o.shouldStop?.()) {
      summary.interrupted = true;
      break;
    }
    const req = decodeMetricsRequest(readFileSync(e.path), e.path);
    const points = countPoints(req);
    if (points === 0) {
      recv.accepted[e.name] = 0;
      summary.empty++;
      writePushState(root, state);
      step("otlp:state-saved");
      continue;
    }
    const body = encodeMetricsRequest(withExportId(req, `${o.agent}/${e.name}`));
    step("otlp:send");
    let res: Response;
    try {
      res = await fetch(o.endpoint, {
        method: "POST",
        headers: { ...o.headers, "content-type": "application/x-protobuf" },
        body,
        signal: AbortSignal.timeout(o.timeoutMs ?? 30_000),
      });
    } catch (err) {
      throw new CollectorError("Store", `${o.endpoint}: ${e.name} not sent (${(err as Error).message}); run push again`);
    }
    const answer = new Uint8Array(await res.arrayBuffer());
    step("otlp:answered");
    summary.sent++;
    if (res.status === 200) {
      const kind = (res.headers.get("content-type") ?? "").includes("json") ? "json" : "protobuf";
      const r = decodeMetricsResponse(answer, kind, `${o.endpoint} (answer to ${e.name})`);
      const rejected = Number(r.rejectedDataPoints);
      if (rejected > 0) {
        recv.rejected[e.name] = { status: 200, points: rejected, message: r.errorMessage };
        summary.rejected++;
      }
      recv.accepted[e.name] = points - rejected;
      summary.accepted_points += points - rejected;
    } else if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) {
      const message = Buffer.from(answer).toString("utf8").trim().slice(0, 500);
      recv.rejected[e.name] = { status: res.status, points, message };
      summary.rejected++;
    } else {
      throw new CollectorError("Store", `${o.endpoint}: ${e.name} answered ${res.status}; run push again`);
    }
    writePushState(root, state);
    step("otlp:state-saved");
  }
  return summary;
}

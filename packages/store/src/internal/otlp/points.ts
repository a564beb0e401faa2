import type { AnyValue, KeyValue } from "./gen/opentelemetry/proto/common/v1/common_pb.js";
import type { ExportMetricsServiceRequest } from "./codec.js";

/** One data point of a request, flattened (what the reader's `metrics` table holds per row). */
export interface MetricPoint {
  readonly metric: string;
  readonly unit: string;
  /** `sum`, `gauge`, `histogram`, `exponential_histogram` or `summary`. */
  readonly type: string;
  /** `cumulative`, `delta`, or undefined (gauges, summaries). */
  readonly temporality: "cumulative" | "delta" | undefined;
  readonly monotonic: boolean | undefined;
  readonly scope: string;
  readonly resource: Readonly<Record<string, unknown>>;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly startTimeUnixNano: bigint;
  readonly timeUnixNano: bigint;
  /** The value of a sum or gauge point; the sum of a histogram or summary. */
  readonly value: number | undefined;
  /** The count of a histogram or summary point. */
  readonly count: bigint | undefined;
}

/** An attribute value as plain JSON-able data (int64 as a number when safe, else a string). */
export function anyValueToJs(v: AnyValue | undefined): unknown {
  const x = v?.value;
  if (x === undefined || x.case === undefined) return null;
  switch (x.case) {
    case "intValue":
      return x.value >= BigInt(Number.MIN_SAFE_INTEGER) && x.value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(x.value) : String(x.value);
    case "bytesValue":
      return Buffer.from(x.value).toString("base64");
    case "arrayValue":
      return x.value.values.map(anyValueToJs);
    case "kvlistValue":
      return attributesToJs(x.value.values);
    default:
      return x.value;
  }
}

/** Key/value attributes as an object. */
export function attributesToJs(kvs: readonly KeyValue[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of kvs) out[kv.key] = anyValueToJs(kv.value);
  return out;
}

const TEMPORALITY = { 1: "delta", 2: "cumulative" } as const;

/** Every data point of a request, in request order. */
export function metricPoints(req: ExportMetricsServiceRequest): MetricPoint[] {
  const out: MetricPoint[] = [];
  for (const rm of req.resourceMetrics) {
    const resource = attributesToJs(rm.resource?.attributes ?? []);
    for (const sm of rm.scopeMetrics) {
      const scope = sm.scope?.name ?? "";
      for (const m of sm.metrics) {
        const base = { metric: m.name, unit: m.unit, scope, resource };
        const d = m.data;
        if (d.case === "sum" || d.case === "gauge") {
          const temporality = d.case === "sum" ? TEMPORALITY[d.value.aggregationTemporality as 1 | 2] : undefined;
          const monotonic = d.case === "sum" ? d.value.isMonotonic : undefined;
          for (const p of d.value.dataPoints)
            out.push({
              ...base, type: d.case, temporality, monotonic, attributes: attributesToJs(p.attributes),
              startTimeUnixNano: p.startTimeUnixNano, timeUnixNano: p.timeUnixNano,
              value: p.value.case === "asInt" ? Number(p.value.value) : p.value.case === "asDouble" ? p.value.value : undefined, count: undefined,
            });
        } else if (d.case === "histogram" || d.case === "exponentialHistogram" || d.case === "summary") {
          const type = d.case === "exponentialHistogram" ? "exponential_histogram" : d.case;
          const temporality = d.case === "summary" ? undefined : TEMPORALITY[d.value.aggregationTemporality as 1 | 2];
          for (const p of d.value.dataPoints)
            out.push({
              ...base, type, temporality, monotonic: undefined, attributes: attributesToJs(p.attributes),
              startTimeUnixNano: p.startTimeUnixNano, timeUnixNano: p.timeUnixNano, value: p.sum, count: p.count,
            });
        }
      }
    }
  }
  return out;
}

import { create, fromBinary, fromJson, toBinary, toJson, type JsonValue } from "@bufbuild/protobuf";
import {
  ExportMetricsServiceRequestSchema,
  ExportMetricsServiceResponseSchema,
  type ExportMetricsServiceRequest,
} from "./gen/opentelemetry/proto/collector/metrics/v1/metrics_service_pb.js";
import { KeyValueSchema } from "./gen/opentelemetry/proto/common/v1/common_pb.js";
import { ResourceSchema } from "./gen/opentelemetry/proto/resource/v1/resource_pb.js";
import { StoreError } from "../errors.js";

export type { ExportMetricsServiceRequest };
export { ExportMetricsServiceRequestSchema };

/**
 * Decode an OTLP/protobuf `ExportMetricsServiceRequest` (the body of a `/v1/metrics` request, the
 * content of a spool file). `file` names the source in the error (`Corrupt`).
 */
export function decodeMetricsRequest(bytes: Uint8Array, file: string): ExportMetricsServiceRequest {
  try {
    return fromBinary(ExportMetricsServiceRequestSchema, bytes);
  } catch (e) {
    throw new StoreError("Corrupt", `${file}: not an OTLP metrics request: ${(e as Error).message}`, { data: { file }, cause: e });
  }
}

/** Encode a request as OTLP/protobuf bytes. */
export function encodeMetricsRequest(req: ExportMetricsServiceRequest): Uint8Array {
  return toBinary(ExportMetricsServiceRequestSchema, req);
}

/**
 * Decode an OTLP/JSON request. OTLP/JSON is the protobuf JSON mapping with two differences the
 * specification names: trace and span ids are hex, not base64, and enum fields are integers
 * (which the mapping accepts anyway). Ids are rewritten to base64 before the mapping reads them.
 */
export function decodeMetricsRequestJson(text: string, file: string): ExportMetricsServiceRequest {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new StoreError("Corrupt", `${file}: not JSON: ${(e as Error).message}`, { data: { file }, cause: e });
  }
  try {
    return fromJson(ExportMetricsServiceRequestSchema, hexIdsToBase64(json) as JsonValue, { ignoreUnknownFields: true });
  } catch (e) {
    throw new StoreError("Corrupt", `${file}: not an OTLP metrics request: ${(e as Error).message}`, { data: { file }, cause: e });
  }
}

/** The OTLP/JSON form of a request (ids as hex, as OTLP/JSON writes them). */
export function metricsRequestToJson(req: ExportMetricsServiceRequest): unknown {
  return base64IdsToHex(toJson(ExportMetricsServiceRequestSchema, req, { alwaysEmitImplicit: false }));
}

/** What an OTLP/HTTP receiver's 200 said it did not accept (`partial_success`; zero and "" when all was taken). */
export interface MetricsResponse {
  readonly rejectedDataPoints: bigint;
  readonly errorMessage: string;
}

/**
 * Decode the body of a receiver's 200: an `ExportMetricsServiceResponse` in protobuf or OTLP/JSON
 * (an empty body is a full success). `Corrupt` naming `source` when it is neither.
 */
export function decodeMetricsResponse(body: Uint8Array, kind: "protobuf" | "json", source: string): MetricsResponse {
  try {
    if (body.length === 0) return { rejectedDataPoints: 0n, errorMessage: "" };
    const res = kind === "protobuf"
      ? fromBinary(ExportMetricsServiceResponseSchema, body)
      : fromJson(ExportMetricsServiceResponseSchema, JSON.parse(Buffer.from(body).toString("utf8")) as JsonValue, { ignoreUnknownFields: true });
    return { rejectedDataPoints: res.partialSuccess?.rejectedDataPoints ?? 0n, errorMessage: res.partialSuccess?.errorMessage ?? "" };
  } catch (e) {
    throw new StoreError("Corrupt", `${source}: not an OTLP metrics response: ${(e as Error).message}`, { data: { file: source }, cause: e });
  }
}

/** The body of a successful OTLP/HTTP response, in the request's encoding. */
export function metricsResponseBody(kind: "protobuf" | "json"): Uint8Array {
  const res = create(ExportMetricsServiceResponseSchema, {});
  return kind === "protobuf" ? toBinary(ExportMetricsServiceResponseSchema, res) : Buffer.from("{}");
}

const ID_KEYS = new Set(["traceId", "spanId", "trace_id", "span_id"]);

function mapIds(v: unknown, f: (s: string) => string): unknown {
  if (Array.isArray(v)) return v.map((x) => mapIds(x, f));
  if (typeof v === "object" && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = ID_KEYS.has(k) && typeof x === "string" ? f(x) : mapIds(x, f);
    return out;
  }
  return v;
}

function hexIdsToBase64(v: unknown): unknown {
  return mapIds(v, (s) => (/^[0-9a-fA-F]*$/.test(s) && s.length % 2 === 0 ? Buffer.from(s, "hex").toString("base64") : s));
}

function base64IdsToHex(v: unknown): unknown {
  return mapIds(v, (s) => Buffer.from(s, "base64").toString("hex"));
}

/**
 * The resource attribute lake's exporter puts on every resource of a request it sends:
 * `<agent>/<spool file name>`. A lake receiver spools a request with an id it has spooled before
 * only once, so a request re-sent after an interrupted save of push.state is counted once.
 */
export const EXPORT_ID_ATTRIBUTE = "lake.export.id";

/** The request with `lake.export.id` = `id` on every resource (an existing one replaced). */
export function withExportId(req: ExportMetricsServiceRequest, id: string): ExportMetricsServiceRequest {
  for (const rm of req.resourceMetrics) {
    rm.resource ??= create(ResourceSchema, {});
    rm.resource.attributes = rm.resource.attributes.filter((a) => a.key !== EXPORT_ID_ATTRIBUTE);
    rm.resource.attributes.push(create(KeyValueSchema, { key: EXPORT_ID_ATTRIBUTE, value: { value: { case: "stringValue", value: id } } }));
  }
  return req;
}

/** The request's `lake.export.id` (of its first resource that has one), or undefined. */
export function exportIdOf(req: ExportMetricsServiceRequest): string | undefined {
  for (const rm of req.resourceMetrics)
    for (const a of rm.resource?.attributes ?? []) if (a.key === EXPORT_ID_ATTRIBUTE && a.value?.value.case === "stringValue") return a.value.value.value;
  return undefined;
}

/**
 * @lake/store/metrics — the storage root's metrics spool (`_metrics/`) and the one OTLP metrics
 * codec lake uses (the OpenTelemetry protocol's own definitions, compiled by protobuf-es).
 * A subpath of its own so the protobuf runtime loads only where metrics are used.
 */
export {
  METRICS_DIR, SPOOL_STATE_SCHEMA, otlpSpoolName, localSpoolName, parseSpoolName, encodeSpoolState, decodeSpoolState, listSpool, spoolReceived,
} from "./internal/metrics/spool.js";
export type { SpoolName, SpoolState, SpoolEntry, SpoolOptions } from "./internal/metrics/spool.js";
export {
  decodeMetricsRequest, decodeMetricsRequestJson, decodeMetricsResponse, encodeMetricsRequest, metricsRequestToJson, metricsResponseBody, ExportMetricsServiceRequestSchema,
  EXPORT_ID_ATTRIBUTE, withExportId, exportIdOf,
} from "./internal/otlp/codec.js";
export type { ExportMetricsServiceRequest, MetricsResponse } from "./internal/otlp/codec.js";
export { metricPoints, attributesToJs, anyValueToJs } from "./internal/otlp/points.js";
export type { MetricPoint } from "./internal/otlp/points.js";
export { StoreError, isStoreError } from "./internal/errors.js";
export type { StoreErrorCode, StoreErrorData } from "./internal/errors.js";
export { DERIVED_METRICS, deriveMetrics, derivedCounters, readMetricsState, readReceipts, receiptDir, receiptName, sessionDerived } from "./internal/metrics/derive.js";
export type { DeriveOptions, DeriveSummary, SessionCounters } from "./internal/metrics/derive.js";
export { RECEIPT_SCHEMA, METRICS_STATE_SCHEMA, encodeReceipt, decodeReceipt, encodeMetricsState, decodeMetricsState } from "./internal/metrics/receipt.js";
export type { DerivationReceipt, SeriesTotal, MetricsState } from "./internal/metrics/receipt.js";

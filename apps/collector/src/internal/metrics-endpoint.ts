// `watch --metrics-port`: the derived counters (the last receipt of every session, @lake/store/metrics)
// in the Prometheus text exposition format, for scraping.
import { createServer, type Server } from "node:http";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DERIVED_METRICS, decodeReceipt, readMetricsState, receiptDir, receiptName, type SeriesTotal } from "@lake/store/metrics";
import { CollectorError } from "./errors.js";

/** A running exposition endpoint. */
export interface MetricsEndpoint {
  /** `host:port` it listens on. */
  readonly address: string;
  close(): Promise<void>;
}

const HELP: Record<string, string> = {
  [DERIVED_METRICS.tokens.name]: "Tokens counted from landed transcripts (broca's meaning: input is fresh input without cache reads; reasoning is part of output), by token type and model",
  [DERIVED_METRICS.cost.name]: "Cost in USD the runtime itself recorded, by model",
  [DERIVED_METRICS.responses.name]: "Billed responses counted, by model",
  [DERIVED_METRICS.sessions.name]: "Sessions with landed files",
  [DERIVED_METRICS.toolCalls.name]: "Tool calls, by tool name",
  [DERIVED_METRICS.toolFailures.name]: "Tool results that reported an error",
};

/** An OpenTelemetry metric name and unit as a Prometheus counter name (`lake.usage.cost`, USD → `lake_usage_cost_usd_total`). */
export function promCounterName(metric: string, unit: string): string {
  const base = metric.replace(/[^a-zA-Z0-9_:]/g, "_");
  const u = unit.startsWith("{") || unit === "" ? "" : `_${unit.toLowerCase().replace(/[^a-z0-9_]/g, "_")}`;
  return `${base}${u}_total`;
}

/** An attribute key as a Prometheus label name (`gen_ai.token.type` → `gen_ai_token_type`). */
export function promLabel(key: string): string {
  const l = key.replace(/[^a-zA-Z0-9_]/g, "_");
  return /^[0-9]/.test(l) ? `_${l}` : l;
}

const escapeValue = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
const escapeHelp = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");

/** One session's counters as the exposition uses them. */
export interface ExposedSession {
  readonly session: string;
  readonly runtime: string;
  readonly totals: readonly SeriesTotal[];
}

/** The Prometheus text exposition (format 0.0.4) of every session's counters, `session_id` and `runtime` on each sample. */
export function exposition(sessions: readonly ExposedSession[]): string {
  const byName = new Map<string, { help: string; lines: string[] }>();
  for (const def of Object.values(DERIVED_METRICS)) byName.set(def.name, { help: HELP[def.name] ?? def.name, lines: [] });
  const units = new Map<string, string>(Object.values(DERIVED_METRICS).map((d) => [d.name, d.unit]));
  for (const s of sessions) {
    for (const t of s.totals) {
      const m = byName.get(t.metric);
      if (!m) continue;
      const labels = [["session_id", s.session], ["runtime", s.runtime], ...Object.entries(t.attributes).map(([k, v]) => [promLabel(k), v])];
      m.lines.push(`{${labels.map(([k, v]) => `${k!}="${escapeValue(v!)}"`).join(",")}} ${String(t.value)}`);
    }
  }
  let out = "";
  for (const [metric, m] of byName) {
    const name = promCounterName(metric, units.get(metric) ?? "");
    out += `# HELP ${name} ${escapeHelp(m.help)}\n# TYPE ${name} counter\n`;
    for (const l of m.lines) out += `${name}${l}\n`;
  }
  return out;
}

/**
 * Serve `GET /metrics` on `host:port`. Each scrape reads `_metrics/metrics.state` and, for a session
 * whose derived sequence moved since the last scrape, that file's receipt (the rest is cached).
 * A receipt that does not read leaves its session out and is logged once.
 */
export function startMetricsEndpoint(root: string, host: string, port: number, log: (line: string) => void): Promise<MetricsEndpoint> {
  const cache = new Map<string, { seq: number; s: ExposedSession }>();
  const logged = new Set<string>();
  const collect = (): ExposedSession[] => {
    const state = readMetricsState(root);
    for (const id of cache.keys()) if (!state.has(id)) cache.delete(id);
    for (const [id, seq] of state) {
      if (cache.get(id)?.seq === seq) continue;
      const file = join(receiptDir(root, id), receiptName(seq));
      try {
        const r = decodeReceipt(readFileSync(file, "utf8"), file);
        cache.set(id, { seq, s: { session: id, runtime: r.runtime, totals: r.totals } });
      } catch (e) {
        cache.delete(id);
        const msg = (e as Error).message;
        if (!logged.has(msg)) log(`metrics: ${msg}; session ${id} left out`);
        logged.add(msg);
      }
    }
    return [...cache.values()].map((c) => c.s).sort((a, b) => (a.session < b.session ? -1 : a.session > b.session ? 1 : 0));
  };
  const server: Server = createServer((req, res) => {
    if (req.url?.split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
      res.end("this endpoint serves /metrics\n");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { "content-type": "text/plain; charset=utf-8" });
      res.end("only GET\n");
      return;
    }
    let body: string;
    try {
      body = exposition(collect());
    } catch (e) {
      log(`metrics: ${(e as Error).message}`);
      res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
      res.end(`${(e as Error).message}\n`);
      return;
    }
    res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
    res.end(req.method === "HEAD" ? undefined : body);
  });
  return new Promise((resolve, reject) => {
    server.once("error", (e) => reject(new CollectorError("Io", `--metrics-port ${port}: ${(e as Error).message}`)));
    server.listen(port, host, () => {
      const a = server.address();
      const address = typeof a === "object" && a !== null ? `${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}` : `${host}:${port}`;
      resolve({
        address,
        close: () => new Promise<void>((r) => {
          server.close(() => r());
          server.closeAllConnections();
        }),
      });
    });
  });
}

/** What `watch --metrics-port` runs beside the passes. */
export interface WatchMetrics {
  readonly address: string;
  /** Derive the metrics of what the pass landed (`sessions`: the sessions it read; undefined: all). */
  afterPass(sessions: Iterable<string> | undefined): Promise<void>;
  close(): Promise<void>;
}

/** Parse `--metrics-port`: `PORT` (on 127.0.0.1) or `HOST:PORT`. */
export function parseMetricsPort(value: string): { host: string; port: number } {
  if (/^\d{1,5}$/.test(value) && Number(value) <= 65535) return { host: "127.0.0.1", port: Number(value) };
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new CollectorError("Usage", `--metrics-port: expected PORT or HOST:PORT, got ${JSON.stringify(value)}`);
  return { host: (m[1] ?? m[2])!, port };
}

/** Start the endpoint and the derivation after each pass. */
export async function startWatchMetrics(root: string, value: string, log: (line: string) => void): Promise<WatchMetrics> {
  const { host, port } = parseMetricsPort(value);
  const endpoint = await startMetricsEndpoint(root, host, port, log);
  const { deriveMetrics } = await import("@lake/store/metrics");
  return {
    address: endpoint.address,
    async afterPass(sessions) {
      try {
        const s = await deriveMetrics(root, sessions ? { sessions: [...sessions] } : {});
        for (const p of s.problems) log(`metrics: ${p.reason}; session ${p.session} not derived (the others were)`);
      } catch (e) {
        log(`metrics: ${(e as Error).message}`);
      }
    },
    close: () => endpoint.close(),
  };
}

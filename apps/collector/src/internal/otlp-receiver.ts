import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { gunzipSync } from "node:zlib";
import { readFileSync } from "node:fs";
import {
  decodeMetricsRequest, decodeMetricsRequestJson, encodeMetricsRequest, exportIdOf, isStoreError, listSpool, metricsResponseBody, spoolReceived,
} from "@lake/store/metrics";
import { CollectorError } from "./errors.js";

/** Largest request body the receiver takes (OTLP/HTTP answers 413 above it). */
export const MAX_OTLP_BODY = 32 * 1024 * 1024;

/** A running OTLP/HTTP metrics receiver. */
export interface OtlpReceiver {
  /** `host:port` it listens on (the port the system picked when 0 was asked for). */
  readonly address: string;
  close(): Promise<void>;
}

/** Parse `HOST:PORT` (`[::1]:4318` for IPv6). */
export function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new CollectorError("Usage", `--otlp-listen: expected HOST:PORT, got ${JSON.stringify(value)}`);
  return { host: (m[1] ?? m[2])!, port };
}

function readBody(req: IncomingMessage): Promise<Buffer | "too-large"> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= MAX_OTLP_BODY) chunks.push(c);
    });
    req.on("end", () => resolve(size > MAX_OTLP_BODY ? "too-large" : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function reply(res: ServerResponse, status: number, kind: "protobuf" | "json", message?: string): void {
  if (status === 200) {
    res.writeHead(200, { "content-type": kind === "protobuf" ? "application/x-protobuf" : "application/json" });
    res.end(metricsResponseBody(kind));
    return;
  }
  // google.rpc.Status in its JSON form; a protobuf client reads the status code and the text.
  res.writeHead(status, { "content-type": kind === "json" ? "application/json" : "text/plain; charset=utf-8" });
  res.end(kind === "json" ? JSON.stringify({ code: status === 400 ? 3 : 13, message }) : `${message}\n`);
}

/**
 * Start the OTLP/HTTP metrics receiver: `POST /v1/metrics` with `application/x-protobuf` or
 * `application/json` (optionally `Content-Encoding: gzip`). Each request is decoded (a bad one is
 * answered 400 and kept out), re-encoded as OTLP/protobuf and put in the root's metrics spool,
 * fsynced, before the 200.
 */
export function startOtlpReceiver(root: string, listen: string, log: (line: string) => void): Promise<OtlpReceiver> {
  const { host, port } = parseListen(listen);
  let queue: Promise<unknown> = Promise.resolve();
  // The `lake.export.id`s already spooled (read from the spool at the first request that has one):
  // a request lake's exporter sends again after a crash is answered 200 and not spooled twice.
  let exportIds: Set<string> | undefined;
  const spooledIds = (): Set<string> => {
    if (exportIds) return exportIds;
    exportIds = new Set();
    for (const e of listSpool(root)) {
      if (e.parsed.kind !== "otlp") continue;
      try {
        const id = exportIdOf(decodeMetricsRequest(readFileSync(e.path), e.path));
        if (id !== undefined) exportIds.add(id);
      } catch (err) {
        log(`otlp: ${(err as Error).message}`);
      }
    }
    return exportIds;
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
      const kind = type === "application/json" ? "json" : "protobuf";
      if (req.url?.split("?")[0] !== "/v1/metrics") return reply(res, 404, kind, `no such path ${req.url ?? ""}: this receiver takes /v1/metrics`);
      if (req.method !== "POST") return reply(res, 405, kind, "only POST");
      if (type !== "application/json" && type !== "application/x-protobuf") return reply(res, 415, kind, `unsupported content type ${JSON.stringify(type)}`);
      const body = await readBody(req);
      if (body === "too-large") return reply(res, 413, kind, `request larger than ${MAX_OTLP_BODY} bytes`);
      let bytes: Uint8Array;
      let id: string | undefined;
      try {
        const raw = req.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body;
        const source = `${req.socket.remoteAddress ?? "?"} /v1/metrics`;
        const decoded = kind === "json" ? decodeMetricsRequestJson(raw.toString("utf8"), source) : decodeMetricsRequest(raw, source);
        bytes = kind === "json" ? encodeMetricsRequest(decoded) : raw;
        id = exportIdOf(decoded);
      } catch (e) {
        log(`otlp: rejected a request: ${(e as Error).message}`);
        return reply(res, 400, kind, (e as Error).message);
      }
      // One spool write at a time: numbers are issued in arrival order.
      const spooled = queue.then(async () => {
        if (id !== undefined && spooledIds().has(id)) return false;
        await spoolReceived(root, bytes);
        if (id !== undefined) spooledIds().add(id);
        return true;
      });
      queue = spooled.catch(() => undefined);
      try {
        if (!(await spooled)) log(`otlp: ${id!}: spooled before; answered without spooling again`);
      } catch (e) {
        log(`otlp: could not spool a request: ${isStoreError(e) ? e.message : String(e)}`);
        return reply(res, 503, kind, "could not store the request; retry");
      }
      reply(res, 200, kind);
    })().catch((e: unknown) => {
      log(`otlp: ${(e as Error).message}`);
      if (!res.headersSent) reply(res, 500, "protobuf", (e as Error).message);
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", (e) => reject(new CollectorError("Io", `--otlp-listen ${listen}: ${(e as Error).message}`)));
    server.listen(port, host, () => {
      const a = server.address();
      const address = typeof a === "object" && a !== null ? `${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}` : listen;
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

// `lake-reader serve`'s HTTP server (node:http): the JSON API under /api/, the bundled web UI for
// every other path. Read-only (GET and HEAD only). Loopback by default; a non-loopback bind needs a
// token; the Host header must name the server (a DNS-rebinding page gets 403).
import { timingSafeEqual, createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { isIP } from "node:net";
import { extname, join, normalize, sep } from "node:path";
import type { Locations } from "../context.js";
import { ReaderError, isReaderError } from "../errors.js";
import { toJson } from "../format.js";
import { answer } from "./api.js";

/** Options of {@link startServer}. */
export interface ServeOptions {
  readonly loc: Locations;
  readonly env: NodeJS.ProcessEnv;
  /** Address to bind (default 127.0.0.1). */
  readonly host: string;
  /** Port (0: any free port). */
  readonly port: number;
  /** Required on every request when set: `Authorization: Bearer T`, the `lake_token` cookie, or `?token=T` once. */
  readonly token?: string | undefined;
  /** The IANA zone the API counts days in unless a request names one (`?timezone=`), and the UI shows times in. */
  readonly timezone: string;
  /** The built web UI (index.html and assets/). */
  readonly webDir: string;
}

/** A running server. */
export interface RunningServer {
  /** Base URL, e.g. http://127.0.0.1:8421/ */
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  close(): Promise<void>;
}

/** True for a loopback address or name (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h === "::1") return true;
  return isIP(h) === 4 && h.startsWith("127.");
}

/** Refuse a bind that would expose the store without a token (a Usage error: exit 2). */
export function checkBind(host: string, token: string | undefined): void {
  if (!isLoopback(host) && (token === undefined || token === "")) {
    throw new ReaderError("Usage", `serve: --host ${host} is not a loopback address: anyone who can reach it could read the fleet; give --token T (or bind 127.0.0.1)`);
  }
}

const WILDCARD = new Set(["0.0.0.0", "::", "[::]"]);

/** The Host header values a request to this server may carry. */
function allowedHosts(host: string, port: number): Set<string> | undefined {
  // A wildcard bind answers to any name the machine has: the token protects it (checkBind).
  if (WILDCARD.has(host)) return undefined;
  const names = new Set([host.includes(":") && !host.startsWith("[") ? `[${host}]` : host]);
  if (isLoopback(host)) for (const n of ["localhost", "127.0.0.1", "[::1]"]) names.add(n);
  const out = new Set<string>();
  for (const n of names) {
    out.add(`${n.toLowerCase()}:${port}`);
    if (port === 80) out.add(n.toLowerCase());
  }
  return out;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".woff2": "font/woff2",
};

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

function statusOf(e: unknown): number {
  if (!isReaderError(e)) return 500;
  switch (e.code) {
    case "Usage":
      return 400;
    case "NotFound":
      return 404;
    case "Query":
      return 400;
    default:
      return 500;
  }
}

function sameToken(a: string, b: string): boolean {
  const x = createHash("sha256").update(a).digest();
  const y = createHash("sha256").update(b).digest();
  return timingSafeEqual(x, y);
}

function cookieToken(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === "lake_token") return decodeURIComponent(v.join("="));
  }
  return undefined;
}

const escapeAttr = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/** Start the server; resolves once it listens. */
export async function startServer(o: ServeOptions): Promise<RunningServer> {
  checkBind(o.host, o.token);
  const index = join(o.webDir, "index.html");
  if (!existsSync(index)) throw new ReaderError("NotFound", `${index}: the web UI is not built (pnpm build builds it)`, { data: { file: index } });
  // The page learns the server's zone from a meta element (the CSP allows no inline script).
  const indexHtml = Buffer.from(readFileSync(index, "utf8").replace("<head>", `<head>\n    <meta name="lake-timezone" content="${escapeAttr(o.timezone)}" />`));
  const files = new Map<string, Buffer>();
  let hosts: Set<string> | undefined;

  const send = (res: ServerResponse, status: number, type: string, body: string | Buffer, head: boolean, extra: Record<string, string> = {}) => {
    res.writeHead(status, { ...SECURITY_HEADERS, "content-type": type, "content-length": String(Buffer.byteLength(body)), ...extra });
    res.end(head ? undefined : body);
  };
  const sendError = (res: ServerResponse, status: number, code: string, message: string, head: boolean) =>
    send(res, status, "application/json; charset=utf-8", toJson({ error: { code, message } }, 0), head, { "cache-control": "no-store" });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const head = req.method === "HEAD";
    if (req.method !== "GET" && !head) return sendError(res, 405, "MethodNotAllowed", `${req.method ?? "?"}: this server is read-only (GET, HEAD)`, false);
    const host = (req.headers.host ?? "").toLowerCase();
    if (hosts && !hosts.has(host)) return sendError(res, 403, "Forbidden", `Host ${JSON.stringify(req.headers.host ?? "")} is not this server`, head);
    const url = new URL(req.url ?? "/", "http://x");
    if (o.token !== undefined) {
      const given = url.searchParams.get("token");
      if (given !== null && sameToken(given, o.token) && !url.pathname.startsWith("/api/")) {
        // The token of a shared link becomes a cookie, and leaves the address bar.
        url.searchParams.delete("token");
        res.writeHead(303, { ...SECURITY_HEADERS, location: url.pathname + url.search, "set-cookie": `lake_token=${encodeURIComponent(o.token)}; HttpOnly; SameSite=Strict; Path=/`, "content-length": "0" });
        return res.end();
      }
      const auth = req.headers.authorization;
      const bearer = auth?.startsWith("Bearer ") ? auth.slice(7) : undefined;
      const t = bearer ?? cookieToken(req) ?? given ?? undefined;
      if (t === undefined || !sameToken(t, o.token)) return sendError(res, 401, "Unauthorized", "this server needs its token: open it with ?token=T or send Authorization: Bearer T", head);
    }
    if (url.pathname.startsWith("/api/")) {
      const path = url.pathname.slice(5).split("/").filter((s) => s !== "").map((s) => decodeURIComponent(s));
      try {
        const value = await answer(o.loc, o.env, { path, query: url.searchParams, timezone: o.timezone });
        return send(res, 200, "application/json; charset=utf-8", toJson(value, 0), head, { "cache-control": "no-store" });
      } catch (e) {
        const status = statusOf(e);
        const code = isReaderError(e) ? e.code : "Internal";
        const message = e instanceof Error ? e.message.split("\n")[0]! : String(e);
        if (status === 500) process.stderr.write(`lake-reader serve: ${url.pathname}: ${message}\n`);
        return sendError(res, status, code, message, head);
      }
    }
    if (url.pathname.startsWith("/assets/")) {
      const rel = normalize(decodeURIComponent(url.pathname.slice(1)));
      const file = join(o.webDir, rel);
      if (!file.startsWith(join(o.webDir, "assets") + sep)) return sendError(res, 404, "NotFound", `${url.pathname}: not found`, head);
      let body = files.get(file);
      if (!body) {
        if (!existsSync(file)) return sendError(res, 404, "NotFound", `${url.pathname}: not found`, head);
        body = readFileSync(file);
        files.set(file, body);
      }
      return send(res, 200, TYPES[extname(file)] ?? "application/octet-stream", body, head, { "cache-control": "public, max-age=31536000, immutable" });
    }
    if (url.pathname === "/favicon.ico") return send(res, 204, "image/x-icon", "", head);
    // Every other path is a page of the UI: the app routes it.
    return send(res, 200, "text/html; charset=utf-8", indexHtml, head, { "cache-control": "no-cache" });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendError(res, 500, "Internal", e instanceof Error ? e.message : String(e), false);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) =>
      reject(new ReaderError(e.code === "EADDRINUSE" || e.code === "EACCES" ? "Usage" : "Io", `serve: cannot listen on ${o.host}:${o.port}: ${e.code ?? e.message}`, { cause: e })),
    );
    server.listen(o.port, o.host, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : o.port;
  hosts = allowedHosts(o.host, port);
  const shown = o.host.includes(":") && !o.host.startsWith("[") ? `[${o.host}]` : o.host;
  return {
    url: `http://${shown}:${port}/`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// `lake-reader serve`: the web UI and its JSON API over the fleet the common options name.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { count, flag, text, type RunContext } from "@lake/cli";
import { COMMON, locations, type Io, type Locations } from "../context.js";
import { readerCommand } from "../commands/parse.js";
import { resolveTimeZone } from "../time.js";

const OPTIONS = {
  ...COMMON,
  port: count("N", "port to listen on (default 8421; 0 = any free port)", { max: 65535, default: 8421 }),
  host: text("ADDR", "address to bind (default 127.0.0.1); a non-loopback address needs --token"),
  token: text("T", "require T on every request (Authorization: Bearer T, or open the URL with\n?token=T once; it becomes a cookie). Default $LAKE_READER_TOKEN"),
  timezone: text("TZ", "the zone the pages count days and show times in, unless a page picks another\n(default: the system's zone, $TZ, as the usage commands)"),
  open: flag("open the UI in the default browser"),
} as const;

/** Where the bundled UI is: dist/web beside dist/internal/serve. */
export const WEB_DIR = fileURLToPath(new URL("../../web/", import.meta.url));

async function serve({ values, io }: RunContext<typeof OPTIONS, Io>): Promise<number> {
  const port = values.port;
  const host = values.host ?? "127.0.0.1";
  const token = values.token ?? (io.env.LAKE_READER_TOKEN || undefined);
  const timezone = resolveTimeZone(values.timezone, io.env);
  const t0 = performance.now();
  const [{ startServer }, { FleetState }, { KeptAnswers }] = await Promise.all([import("./server.js"), import("./state.js"), import("./memo.js")]);
  const fleet = new FleetState();
  const loc = { ...locations(values, io.env), fleet, memo: new KeptAnswers() };
  const running = await startServer({ loc, env: io.env, host, port, token, timezone, webDir: WEB_DIR });
  const open = token === undefined ? running.url : `${running.url}?token=${encodeURIComponent(token)}`;
  io.out(`lake-reader serve: listening on ${running.url} (times in ${timezone})\n`);
  if (values.open) openBrowser(open, io);
  // Build what the pages ask for first while nobody waits for it (a failure shows on the page instead).
  void warmUp(loc, io.env, timezone).then(
    (sessions) => io.out(`lake-reader serve: ready in ${Math.round(performance.now() - t0)} ms (${sessions} sessions)\n`),
    () => undefined,
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      // Stop answering at once; an open read model closes once its query (if any) is done.
      void running.close().then(resolve);
      void fleet.close();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  return 0;
}

/**
 * The answers of the Overview (the first page), then the read model and the Sessions page, then the
 * search index, each kept for the fleet state; resolves to the number of sessions.
 */
async function warmUp(loc: Locations, env: NodeJS.ProcessEnv, timezone: string): Promise<number> {
  const [{ answer }] = await Promise.all([import("./api.js"), import("../show.js"), import("@lake/chain"), import("@lake/store")]);
  const get = (path: string, query = "") => answer(loc, env, { path: path.split("/"), query: new URLSearchParams(query), timezone });
  await Promise.all([get("usage/daily"), get("usage/session"), get("usage/blocks")]);
  const sessions = (await get("sessions")) as unknown[];
  const [{ ensureIndex }, { fleetFiles }] = await Promise.all([import("../commands/search.js"), import("../context.js")]);
  await ensureIndex(await fleetFiles(loc), loc.cache, loc);
  return sessions.length;
}

function openBrowser(url: string, io: Io): void {
  const [cmd, args] = process.platform === "darwin" ? ["open", [url]] : process.platform === "win32" ? ["cmd", ["/c", "start", "", url]] : ["xdg-open", [url]];
  try {
    const child = spawn(cmd, args as string[], { stdio: "ignore", detached: true });
    child.on("error", () => io.err(`lake-reader serve: could not open a browser (${cmd}); open ${url}\n`));
    child.unref();
  } catch {
    io.err(`lake-reader serve: could not open a browser (${cmd}); open ${url}\n`);
  }
}

/** `lake-reader serve`. */
export const serveCommand = readerCommand({
  description: `A read-only web UI over the fleet store: usage charts, sessions, transcripts, search, the fleet's
roster, leases and intents. Every page has its own URL; the JSON API under /api/ answers what the
CLI's --json prints (README, "serve"). Runs until interrupted (Ctrl-C), then exits 0. A non-loopback
--host without --token, or a port in use, is a usage error.`,
  options: OPTIONS,
  run: serve,
});

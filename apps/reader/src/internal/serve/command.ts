// `lake-reader serve`: the web UI and its JSON API over the fleet the common options name.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { count, flag, text, type RunContext } from "@lake/cli";
import { COMMON, locations, withReadModel, type Io } from "../context.js";
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
  const [{ startServer }, { OpenModels }, { KeptAnswers }] = await Promise.all([import("./server.js"), import("./models.js"), import("./memo.js")]);
  const models = new OpenModels();
  const loc = { ...locations(values, io.env), models, memo: new KeptAnswers() };
  const running = await startServer({ loc, env: io.env, host, port, token, timezone, webDir: WEB_DIR });
  const open = token === undefined ? running.url : `${running.url}?token=${encodeURIComponent(token)}`;
  io.out(`lake-reader serve: listening on ${running.url} (times in ${timezone})\n`);
  if (values.open) openBrowser(open, io);
  // Open the read model now, while nobody waits for it (a failure shows on the first page instead).
  void withReadModel(loc, async () => undefined).catch(() => undefined);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      // Stop answering at once; an open read model closes once its query (if any) is done.
      void running.close().then(resolve);
      void models.close();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  return 0;
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

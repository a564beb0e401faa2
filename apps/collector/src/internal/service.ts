// `lake-collector service install`: keep `lake-collector watch` running as a systemd user service
// (Linux) or a launchd agent (macOS). The unit names node, the bin and the storage root by
// absolute path, since a service manager starts it with none of the user's shell setup.
import { homedir } from "node:os";
import { join } from "node:path";
import { collectorArgv, shellQuote } from "./user-file.js";

/** The service managers `service install` writes for. */
export type ServicePlatform = "linux" | "darwin";

/** The systemd unit name and the launchd label. */
export const SERVICE_NAME = "lake-collector";
export const LAUNCHD_LABEL = "dev.lake.collector";

/** What `service install` writes: the file, its text, and the commands that start it. */
export interface ServiceUnit {
  readonly platform: ServicePlatform;
  readonly file: string;
  readonly text: string;
  readonly argv: readonly string[];
  readonly start: readonly string[];
}

/** The options of {@link serviceUnit}. */
export interface ServiceOptions {
  readonly platform: ServicePlatform;
  /** The absolute storage root watch collects into. */
  readonly root: string;
  /** Extra watch arguments (`--source`, `--sources-only`, `--interval`). */
  readonly watchArgs?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  readonly home?: string;
  /** node and the bin (default: this node and this package's bin, by real path). */
  readonly argv?: readonly [string, string];
}

/** The unit (systemd) or agent plist (launchd) that runs `watch` for this user. */
export function serviceUnit(o: ServiceOptions): ServiceUnit {
  const env = o.env ?? process.env;
  const home = o.home ?? homedir();
  const argv = [...(o.argv ?? collectorArgv()), "watch", "--root", o.root, ...(o.watchArgs ?? [])];
  if (o.platform === "linux") {
    const dir = join(env.XDG_CONFIG_HOME || join(home, ".config"), "systemd", "user");
    const text = [
      "[Unit]",
      "Description=lake collector: collect AI agent transcripts as they are written (lake-collector watch)",
      "",
      "[Service]",
      "Type=simple",
      `ExecStart=${argv.map(systemdQuote).join(" ")}`,
      // SIGTERM stops watch at the pass's next safe point, releasing its lock (exit 0).
      "KillSignal=SIGTERM",
      "TimeoutStopSec=120",
      "Restart=on-failure",
      "RestartSec=30",
      "",
      "[Install]",
      "WantedBy=default.target",
      "",
    ].join("\n");
    return {
      platform: "linux",
      file: join(dir, `${SERVICE_NAME}.service`),
      text,
      argv,
      start: ["systemctl --user daemon-reload", `systemctl --user enable --now ${SERVICE_NAME}.service`],
    };
  }
  const logs = join(home, "Library", "Logs");
  const file = join(home, "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
  const text = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    "<dict>",
    `  <key>Label</key>`,
    `  <string>${LAUNCHD_LABEL}</string>`,
    "  <key>ProgramArguments</key>",
    "  <array>",
    ...argv.map((a) => `    <string>${xmlEscape(a)}</string>`),
    "  </array>",
    "  <key>RunAtLoad</key>",
    "  <true/>",
    "  <key>KeepAlive</key>",
    "  <dict>",
    "    <key>SuccessfulExit</key>",
    "    <false/>",
    "  </dict>",
    "  <key>ProcessType</key>",
    "  <string>Background</string>",
    "  <key>StandardOutPath</key>",
    `  <string>${xmlEscape(join(logs, `${SERVICE_NAME}.log`))}</string>`,
    "  <key>StandardErrorPath</key>",
    `  <string>${xmlEscape(join(logs, `${SERVICE_NAME}.log`))}</string>`,
    "</dict>",
    "</plist>",
    "",
  ].join("\n");
  return { platform: "darwin", file, text, argv, start: [`launchctl bootstrap gui/$(id -u) ${shellQuote(file)}`] };
}

/** One ExecStart word: plain when it can be, else double-quoted; `%` and `$` escaped for systemd. */
function systemdQuote(s: string): string {
  const escaped = s.replaceAll("%", "%%").replaceAll("$", "$$$$");
  return /^[A-Za-z0-9_/.,:@+=%$-]+$/.test(escaped) ? escaped : `"${escaped.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

function xmlEscape(s: string): string {
  return s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");
}

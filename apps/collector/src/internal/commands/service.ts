import { readFile } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { serviceUnit, type ServicePlatform } from "../service.js";
import { replaceUserFile } from "../user-file.js";
import { defineCommand, choice, flag, seconds, type RunContext } from "@lake/cli";
import { ROOT, JSON_FLAG, resolveRoot } from "../options.js";
import { SOURCE, SOURCES_ONLY, parseSources } from "../sources.js";

const DESCRIPTION = `Writes a systemd user unit (Linux: $XDG_CONFIG_HOME/systemd/user/lake-collector.service, else
~/.config/systemd/user/…) or a launchd agent (macOS: ~/Library/LaunchAgents/dev.lake.collector.plist)
that runs watch with node, this lake-collector and the root by absolute path, restarting it when it
fails; then prints the commands that start it (systemctl --user enable --now … / launchctl
bootstrap …). Running it again with the same options changes nothing. --print shows the unit
without writing it; --platform picks the other system's file (default: this one).`;

const OPTIONS = { root: ROOT, source: SOURCE, "sources-only": SOURCES_ONLY, interval: seconds("watch's --interval (default its own, 60 s)", { min: 0.001 }), platform: choice("OS", ["linux", "darwin"], "write the other system's file (default: this one)"), print: flag("show the unit, write nothing"), json: JSON_FLAG } as const;

async function run({ values, io }: RunContext<typeof OPTIONS>): Promise<number> {
  const platform = values.platform ?? (process.platform === "darwin" ? "darwin" : "linux");
  const watchArgs: string[] = [];
  const sources = parseSources(values.source);
  for (const [runtime, paths] of sources) for (const p of paths) watchArgs.push("--source", `${runtime}=${resolve(p)}`);
  if (values["sources-only"]) watchArgs.push("--sources-only");
  if (values.interval !== undefined) {
    watchArgs.push("--interval", String(values.interval));
  }
  const root = resolveRoot(values.root);
  const unit = serviceUnit({ platform: platform as ServicePlatform, root: isAbsolute(root) ? root : resolve(root), watchArgs });
  let before: string | null = null;
  try {
    before = await readFile(unit.file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const changed = before !== unit.text;
  const written = changed && !values.print;
  if (written) await replaceUserFile(unit.file, unit.text, 0o644);
  if (values.json) {
    io.out(JSON.stringify({ platform: unit.platform, file: unit.file, argv: unit.argv, written, unchanged: !changed, start: unit.start, text: unit.text }) + "\n");
  } else if (values.print) {
    io.out(unit.text);
  } else {
    io.out(`${unit.file}: ${written ? "written" : "already up to date; nothing changed"}\nstart it with:\n${unit.start.map((c) => `  ${c}\n`).join("")}`);
  }
  return 0;
}

/** `lake-collector service install`. */
export const command = defineCommand({
  summary: 'keep "lake-collector watch" running for this user',
  description: DESCRIPTION,
  options: OPTIONS,
  run,
});

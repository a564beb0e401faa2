import { readFile } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { CollectorError } from "../errors.js";
import { parse, parseSources, resolveRoot } from "../options.js";
import { serviceUnit, type ServicePlatform } from "../service.js";
import { replaceUserFile } from "../user-file.js";

export const help = `lake-collector service install — keep "lake-collector watch" running for this user

Usage: lake-collector service install [--root DIR] [--source RUNTIME=PATH]... [--sources-only]
                                      [--interval SECONDS] [--platform linux|darwin] [--print] [--json]

Writes a systemd user unit (Linux: $XDG_CONFIG_HOME/systemd/user/lake-collector.service, else
~/.config/systemd/user/…) or a launchd agent (macOS: ~/Library/LaunchAgents/dev.lake.collector.plist)
that runs watch with node, this lake-collector and the root by absolute path, restarting it when it
fails; then prints the commands that start it (systemctl --user enable --now … / launchctl
bootstrap …). Running it again with the same options changes nothing. --print shows the unit
without writing it; --platform picks the other system's file (default: this one).
`;

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      root: { type: "string" },
      source: { type: "string", multiple: true },
      "sources-only": { type: "boolean" },
      interval: { type: "string" },
      platform: { type: "string" },
      print: { type: "boolean" },
      json: { type: "boolean" },
    },
    true,
  );
  if (positionals[0] !== "install" || positionals.length !== 1) throw new CollectorError("Usage", `service: expected "service install"`);
  const platform = (values.platform as string | undefined) ?? (process.platform === "darwin" ? "darwin" : "linux");
  if (platform !== "linux" && platform !== "darwin") throw new CollectorError("Usage", `service: --platform must be linux or darwin, not ${JSON.stringify(platform)}`);
  const watchArgs: string[] = [];
  const sources = parseSources(values.source);
  for (const [runtime, paths] of sources) for (const p of paths) watchArgs.push("--source", `${runtime}=${resolve(p)}`);
  if (values["sources-only"]) watchArgs.push("--sources-only");
  if (values.interval !== undefined) {
    const s = Number(values.interval);
    if (!Number.isFinite(s) || s <= 0) throw new CollectorError("Usage", `service: --interval must be a positive number of seconds, not ${JSON.stringify(values.interval)}`);
    watchArgs.push("--interval", String(s));
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
    process.stdout.write(JSON.stringify({ platform: unit.platform, file: unit.file, argv: unit.argv, written, unchanged: !changed, start: unit.start, text: unit.text }) + "\n");
  } else if (values.print) {
    process.stdout.write(unit.text);
  } else {
    process.stdout.write(`${unit.file}: ${written ? "written" : "already up to date; nothing changed"}\nstart it with:\n${unit.start.map((c) => `  ${c}\n`).join("")}`);
  }
  return 0;
}

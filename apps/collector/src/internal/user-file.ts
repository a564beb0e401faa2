// Files the collector writes into the user's own configuration (Claude Code's settings, a systemd
// user unit, a launchd agent): created with their directory, replaced atomically (temp file,
// fsync, rename, directory fsync: @lake/durable), so a reader never sees half a file.
import { realpathSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { writeAtomic } from "@lake/durable";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

/** Write `text` to `file` atomically, creating its directory; `mode` applies to a new file. */
export async function replaceUserFile(file: string, text: string, mode = 0o600): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  writeAtomic(file, text, { temp: `${file}.lake-${process.pid}.tmp`, mode });
}

/**
 * This collector as a command other programs run (a Claude Code hook, a service manager): this
 * node and this package's bin, each by its absolute real path. Their shells or environments may
 * have neither `lake-collector` nor `node` on PATH (a version manager's node, a global prefix).
 */
export function collectorArgv(): [node: string, bin: string] {
  return [realpathSync(process.execPath), realpathSync(fileURLToPath(new URL("../../bin/lake-collector.js", import.meta.url)))];
}

/** One word for a POSIX shell: plain when it can be, else single-quoted. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_/.,:@%+=-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

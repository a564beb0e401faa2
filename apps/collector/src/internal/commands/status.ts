import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { status } from "@lake/store";
import { parse, resolveRoot } from "../options.js";

export const help = `lake-collector status — what the root holds

Usage: lake-collector status [--root DIR] [--json]

Sessions, streams, landed files, cursors by state (active, conflict, source_gone), pending sources,
conflicts, locked sessions, and the last pass (from collector.state).
`;

export async function run(args: string[]): Promise<number> {
  const { values } = parse(args, { root: { type: "string" }, json: { type: "boolean" } });
  const root = resolveRoot(values.root);
  const s = status(root);
  const lastFile = join(root, "collector.state");
  const last = existsSync(lastFile) ? (JSON.parse(readFileSync(lastFile, "utf8")) as Record<string, unknown>) : null;
  const out = { root, ...s, last_pass: last };
  if (values.json) process.stdout.write(JSON.stringify(out) + "\n");
  else
    process.stdout.write(
      `${root}\n  sessions ${s.sessions}, streams ${s.streams}, landed files ${s.landedFiles}\n  cursors: ${s.cursors.active} active, ${s.cursors.conflict} conflict, ${s.cursors.source_gone} source_gone\n  pending ${s.pending}, conflicts ${s.conflicts}, locked ${s.locked}\n  last pass: ${last ? `${String(last.finished_at)} (${String(last.landed_files)} files landed)` : "none"}\n`,
    );
  return 0;
}

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { status } from "@lake/store";
import { parse, parseSources, resolveRoot } from "../options.js";
import { runtimeRoots, sourceResolver } from "../collect.js";

export const help = `lake-collector status — what the root holds

Usage: lake-collector status [--root DIR] [--source RUNTIME=PATH]... [--sources-only] [--json]

Sessions, streams, landed files, cursors by state (active, conflict, source_gone), pending sources
(active cursors whose source has grown past them; sources are found as collect finds them, so pass
the same --source flags), each named with why (bytes not collected yet, or only a last line
without its newline), conflicts, locked sessions, and the last pass (from collector.state).
`;

/** Why a source is pending, in words. */
const PENDING_WHY = {
  "new-lines": (n: number) => `${n} bytes not collected yet (run collect)`,
  "partial-line": (n: number) => `a last line of ${n} bytes without its newline (a write in progress or a torn line: collected once a line follows)`,
} as const;

export async function run(args: string[]): Promise<number> {
  const { values } = parse(args, { root: { type: "string" }, source: { type: "string", multiple: true }, "sources-only": { type: "boolean" }, json: { type: "boolean" } });
  const root = resolveRoot(values.root);
  const roots = runtimeRoots(root, { roots: parseSources(values.source), only: Boolean(values["sources-only"]) });
  const s = status(root, { resolve: sourceResolver(roots) });
  const lastFile = join(root, "collector.state");
  const last = existsSync(lastFile) ? (JSON.parse(readFileSync(lastFile, "utf8")) as Record<string, unknown>) : null;
  const out = { root, ...s, last_pass: last };
  if (values.json) process.stdout.write(JSON.stringify(out) + "\n");
  else
    process.stdout.write(
      `${root}\n  sessions ${s.sessions}, streams ${s.streams}, landed files ${s.landedFiles}\n  cursors: ${s.cursors.active} active, ${s.cursors.conflict} conflict, ${s.cursors.source_gone} source_gone\n  pending ${s.pending}, conflicts ${s.conflicts}, locked ${s.locked}\n${s.pendingSources.map((p) => `    pending ${p.path}: ${PENDING_WHY[p.reason](p.bytes)}\n`).join("")}  last pass: ${last ? `${String(last.finished_at)} (${String(last.landed_files)} files landed)` : "none"}\n`,
    );
  return 0;
}

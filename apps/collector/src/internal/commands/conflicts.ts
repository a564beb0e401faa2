import { listConflicts } from "@lake/store";
import { parse, parseSources, resolveRoot } from "../options.js";
import { runtimeRoots, sourceResolver } from "../collect.js";

export const help = `lake-collector conflicts — list every source in conflict

Usage: lake-collector conflicts [--root DIR] [--source RUNTIME=PATH]... [--sources-only] [--json]

A source is in conflict when its bytes before the cursor changed (the file shrank, or the 1 MiB
before the cursor's offset was rewritten). It stays so until "lake-collector resolve SOURCE"; every
collect skips it. One line per conflict: the file, the reason, and since when. Pass the --source
flags collect uses so the files are found. --json: {root, conflicts: [{session, cursor, source,
path?, kind, reason, since, offset?}]}.
`;

export async function run(args: string[]): Promise<number> {
  const { values } = parse(args, { root: { type: "string" }, source: { type: "string", multiple: true }, "sources-only": { type: "boolean" }, json: { type: "boolean" } });
  const root = resolveRoot(values.root);
  const roots = runtimeRoots(root, { roots: parseSources(values.source), only: Boolean(values["sources-only"]) });
  const conflicts = listConflicts(root, { resolve: sourceResolver(roots) });
  if (values.json) process.stdout.write(JSON.stringify({ root, conflicts }) + "\n");
  else {
    for (const c of conflicts) process.stdout.write(`${c.path ?? c.source}: ${c.reason || "conflict"} (since ${c.since}; session ${c.session}, ${c.cursor})\n`);
    process.stdout.write(`${root}: ${conflicts.length} source${conflicts.length === 1 ? "" : "s"} in conflict${conflicts.length ? ` (lake-collector resolve SOURCE --mode reread-from-start|continue-from-offset)` : ""}\n`);
  }
  return 0;
}

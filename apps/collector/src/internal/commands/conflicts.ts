import { listConflicts } from "@lake/store";
import { runtimeRoots, sourceResolver } from "../collect.js";
import { defineCommand, jsonLine, type RunContext } from "@lake/cli";
import { ROOT, JSON_FLAG, resolveRoot } from "../options.js";
import { SOURCE, SOURCES_ONLY, parseSources } from "../sources.js";

const DESCRIPTION = `A source is in conflict when its bytes before the cursor changed (the file shrank, or the 1 MiB
before the cursor's offset was rewritten). It stays so until "lake-collector resolve SOURCE"; every
collect skips it. One line per conflict: the file, the reason, and since when. Pass the --source
flags collect uses so the files are found. --json: {root, conflicts: [{session, cursor, source,
path?, kind, reason, since, offset?}]}.`;

const OPTIONS = { root: ROOT, source: SOURCE, "sources-only": SOURCES_ONLY, json: JSON_FLAG } as const;

async function run({ values, io }: RunContext<typeof OPTIONS>): Promise<number> {
  const root = resolveRoot(values.root);
  const roots = runtimeRoots(root, { roots: parseSources(values.source), only: Boolean(values["sources-only"]) });
  const conflicts = listConflicts(root, { resolve: sourceResolver(roots) });
  if (values.json) io.out(jsonLine({ root, conflicts }));
  else {
    for (const c of conflicts) io.out(`${c.path ?? c.source}: ${c.reason || "conflict"} (since ${c.since}; session ${c.session}, ${c.cursor})\n`);
    io.out(`${root}: ${conflicts.length} source${conflicts.length === 1 ? "" : "s"} in conflict${conflicts.length ? ` (lake-collector resolve SOURCE --mode reread-from-start|continue-from-offset)` : ""}\n`);
  }
  return 0;
}

/** `lake-collector conflicts`. */
export const command = defineCommand({
  summary: "list every source in conflict",
  description: DESCRIPTION,
  options: OPTIONS,
  run,
});

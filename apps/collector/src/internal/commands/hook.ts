import { appendHookEvent, readStdin } from "../hook.js";
import { defineCommand, type RunContext } from "@lake/cli";
import { ROOT, resolveRoot } from "../options.js";

const DESCRIPTION = `The event lands in <root>/_hooks/spool/<session_id>.wal (a @lake/wal file, fsynced) and is
collected by the next collect. A hook killed mid-write leaves a torn tail; no earlier event is lost.
Prints nothing; exit 0 when the event is durable, 6 when stdin is not a JSON object.`;

const OPTIONS = { root: ROOT } as const;

async function run({ values }: RunContext<typeof OPTIONS>): Promise<number> {
  await appendHookEvent(resolveRoot(values.root), await readStdin());
  return 0;
}

/** `lake-collector hook`. */
export const command = defineCommand({
  summary: "append one Claude Code hook event (JSON on stdin) to the hook spool",
  description: DESCRIPTION,
  options: OPTIONS,
  run,
});

import { appendHookEvent, readStdin } from "../hook.js";
import { parse, resolveRoot } from "../options.js";

export const help = `lake-collector hook — append one Claude Code hook event (JSON on stdin) to the hook spool

Usage: lake-collector hook [--root DIR]

The event lands in <root>/_hooks/spool/<session_id>.wal (a @lake/wal file, fsynced) and is
collected by the next collect. A hook killed mid-write leaves a torn tail; no earlier event is lost.
Prints nothing; exit 0 when the event is durable, 6 when stdin is not a JSON object.
`;

export async function run(args: string[]): Promise<number> {
  const { values } = parse(args, { root: { type: "string" } });
  await appendHookEvent(resolveRoot(values.root), await readStdin());
  return 0;
}

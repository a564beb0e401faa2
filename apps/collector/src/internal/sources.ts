// --source RUNTIME=PATH: its own module because it loads @lake/events (zod), which `hook` must not.
import { flag, values } from "@lake/cli";
import { RUNTIMES } from "@lake/events/record";

/** `--source RUNTIME=PATH` (repeatable): the runtime must be one lake knows. */
export const SOURCE = values("RUNTIME=PATH", `read this runtime's sources from PATH instead of its default root (repeatable;\nRUNTIME: ${RUNTIMES.join(", ")})`, (raw) => {
  const i = raw.indexOf("=");
  if (i <= 0 || i === raw.length - 1) throw new Error("expected RUNTIME=PATH");
  const rt = raw.slice(0, i);
  if (!(RUNTIMES as readonly string[]).includes(rt)) throw new Error(`runtime ${JSON.stringify(rt)}: expected one of ${RUNTIMES.join(", ")}`);
  return raw;
});

/** --sources-only. */
export const SOURCES_ONLY = flag("read only the --source roots");

/** The runtime roots of repeated `--source RUNTIME=PATH` values (checked by {@link SOURCE}). */
export function parseSources(flags: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const f of flags) {
    const i = f.indexOf("=");
    const rt = f.slice(0, i);
    const list = out.get(rt) ?? [];
    list.push(f.slice(i + 1));
    out.set(rt, list);
  }
  return out;
}

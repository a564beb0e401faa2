import { isStoreError, listConflicts, openSession, type ResolveMode } from "@lake/store";
import { CollectorError } from "../errors.js";
import { parse, parseSources, resolveRoot } from "../options.js";
import { runtimeRoots, sourceResolver } from "../collect.js";

export const help = `lake-collector resolve — decide what happens to a source in conflict

Usage: lake-collector resolve SOURCE --mode MODE [--root DIR] [--source RUNTIME=PATH]... [--sources-only]
                              [--wait SECONDS] [--json]

SOURCE is the file (as "lake-collector conflicts" prints it), the cursor's source
(RUNTIME:PATH), or SESSION/CURSOR. The only way a conflict moves. MODE:

  reread-from-start     start a new version of the stream from byte 0: every file already landed
                        stays, the source is read again on the next collect, and each record whose
                        id already landed is marked a re-land (never counted twice)
  continue-from-offset  keep reading after the cursor's offset, taking the bytes before it as they
                        are now (the rewrite was harmless); refused when the file is shorter than
                        the offset

Nothing is read or landed here: the next collect does that. Exit 0 · 2 no such conflict, a bad
mode, or a mode that does not apply · 4 the session is locked by a collector (after --wait).
`;

const MODES: readonly ResolveMode[] = ["reread-from-start", "continue-from-offset"];

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parse(
    args,
    { root: { type: "string" }, mode: { type: "string" }, source: { type: "string", multiple: true }, "sources-only": { type: "boolean" }, wait: { type: "string" }, json: { type: "boolean" } },
    true,
  );
  const want = positionals[0];
  if (!want || positionals.length !== 1) throw new CollectorError("Usage", "resolve: expected one SOURCE (see lake-collector conflicts)");
  const mode = values.mode as ResolveMode | undefined;
  if (!mode || !MODES.includes(mode)) throw new CollectorError("Usage", `resolve ${want}: --mode must be one of ${MODES.join(", ")}${mode ? ` (got "${mode}")` : ""}`);
  const root = resolveRoot(values.root);
  const roots = runtimeRoots(root, { roots: parseSources(values.source), only: Boolean(values["sources-only"]) });
  const all = listConflicts(root, { resolve: sourceResolver(roots) });
  const hits = all.filter((c) => c.path === want || c.source === want || `${c.session}/${c.cursor}` === want);
  if (hits.length === 0) throw new CollectorError("Usage", `${want}: no source in conflict by that name in ${root} (${all.length} in conflict: lake-collector conflicts lists them)`);
  if (hits.length > 1) throw new CollectorError("Usage", `${want}: names ${hits.length} conflicts (${hits.map((h) => `${h.session}/${h.cursor}`).join(", ")}): give SESSION/CURSOR`);
  const c = hits[0]!;
  if (mode === "continue-from-offset" && c.path === undefined) throw new CollectorError("Usage", `${want}: continue-from-offset needs the source file: pass the --source flags collect uses`);
  const s = await openSession(root, c.session, { waitMs: values.wait ? Number(values.wait) * 1000 : 10_000 });
  let saved;
  try {
    saved = s.resolveConflict(c.cursor, mode, c.path);
  } catch (e) {
    if (isStoreError(e) && e.code === "InvalidArgument") throw new CollectorError("Usage", e.message, { cause: e });
    throw e;
  } finally {
    s.close();
  }
  const name = c.path ?? c.source;
  if (values.json) process.stdout.write(JSON.stringify({ source: c.source, path: c.path ?? null, session: c.session, cursor: c.cursor, mode, state: saved.state, offset: saved.kind === "append" ? saved.offset : null }) + "\n");
  else
    process.stdout.write(
      mode === "reread-from-start"
        ? `${name}: resolved: the next collect reads it again from byte 0 (landed files kept; records already landed are marked re-lands)\n`
        : `${name}: resolved: the next collect goes on after offset ${saved.kind === "append" ? saved.offset : 0}\n`,
    );
  return 0;
}

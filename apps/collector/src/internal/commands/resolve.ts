import { isStoreError, listConflicts, openSession, type ResolveMode } from "@lake/store";
import { CollectorError } from "../errors.js";
import { runtimeRoots, sourceResolver } from "../collect.js";
import { defineCommand, jsonLine, choice, seconds, type RunContext } from "@lake/cli";
import { ROOT, JSON_FLAG, resolveRoot } from "../options.js";
import { SOURCE, SOURCES_ONLY, parseSources } from "../sources.js";

const DESCRIPTION = `SOURCE is the file (as "lake-collector conflicts" prints it), the cursor's source
(RUNTIME:PATH), or SESSION/CURSOR. The only way a conflict moves. MODE:

  reread-from-start     start a new version of the stream from byte 0: every file already landed
                        stays, the source is read again on the next collect, and each record whose
                        id already landed is marked a re-land (never counted twice)
  continue-from-offset  keep reading after the cursor's offset, taking the bytes before it as they
                        are now (the rewrite was harmless); refused when the file is shorter than
                        the offset

Nothing is read or landed here: the next collect does that. Exit 0 · 2 no such conflict, a bad
mode, or a mode that does not apply · 4 the session is locked by a collector (after --wait).`;

const MODES: readonly ResolveMode[] = ["reread-from-start", "continue-from-offset"];

const OPTIONS = { root: ROOT, mode: choice("MODE", MODES, "what to do with the conflict", { required: true }), source: SOURCE, "sources-only": SOURCES_ONLY, wait: seconds("wait this long for a locked session (default 10 s)", { default: 10 }), json: JSON_FLAG } as const;

async function run({ values, positionals, io }: RunContext<typeof OPTIONS>): Promise<number> {
  const want = positionals[0]!;
  const mode = values.mode;
  const root = resolveRoot(values.root);
  const roots = runtimeRoots(root, { roots: parseSources(values.source), only: Boolean(values["sources-only"]) });
  const all = listConflicts(root, { resolve: sourceResolver(roots) });
  const hits = all.filter((c) => c.path === want || c.source === want || `${c.session}/${c.cursor}` === want);
  if (hits.length === 0) throw new CollectorError("Usage", `${want}: no source in conflict by that name in ${root} (${all.length} in conflict: lake-collector conflicts lists them)`);
  if (hits.length > 1) throw new CollectorError("Usage", `${want}: names ${hits.length} conflicts (${hits.map((h) => `${h.session}/${h.cursor}`).join(", ")}): give SESSION/CURSOR`);
  const c = hits[0]!;
  if (mode === "continue-from-offset" && c.path === undefined) throw new CollectorError("Usage", `${want}: continue-from-offset needs the source file: pass the --source flags collect uses`);
  const s = await openSession(root, c.session, { waitMs: values.wait * 1000 });
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
  if (values.json) io.out(jsonLine({ source: c.source, path: c.path ?? null, session: c.session, cursor: c.cursor, mode, state: saved.state, offset: saved.kind === "append" ? saved.offset : null }));
  else
    io.out(
      mode === "reread-from-start"
        ? `${name}: resolved: the next collect reads it again from byte 0 (landed files kept; records already landed are marked re-lands)\n`
        : `${name}: resolved: the next collect goes on after offset ${saved.kind === "append" ? saved.offset : 0}\n`,
    );
  return 0;
}

/** `lake-collector resolve`. */
export const command = defineCommand({
  summary: "decide what happens to a source in conflict",
  description: DESCRIPTION,
  options: OPTIONS,
  positionals: { names: "SOURCE", min: 1, max: 1 },
  run,
});

import { resolve } from "node:path";
import { previewRemoval, readForgetRecord, undoForget } from "@lake/store";
import { CollectorError } from "../errors.js";
import { applyForget, pushLines, sessionSources, spoolFiles } from "../forget.js";
import { defineCommand, jsonLine, flag, type RunContext } from "@lake/cli";
import { ROOT, JSON_FLAG, resolveRoot } from "../options.js";
import { SOURCE, SOURCES_ONLY, parseSources } from "../sources.js";

const DESCRIPTION = `Without --apply, prints what would be deleted and where; nothing is changed. With --apply, in this
order: the forget record <root>/_forget/SESSION.json is written (state "removing"); the session's
source files, only with --source-too (the vendor store is otherwise left as it is); the session
directory, renamed in one step into <root>/_removed/ and deleted there; its round chain, the same
way; its hook spool file; its push.state lines; then the record says "removed" and stays: collect,
parse and push leave the session alone from then on, until "forget SESSION --undo". A removal
stopped half way is finished by the next collect, parse, push or forget, before anything else.
The fleet store is not touched: "lake-maint forget SESSION --apply" removes it there.

--source-too       also delete the session's files in the vendor stores (as its cursors and discovery
                   name them) and the empty directories named for the session
--source R=P       where the vendor stores are (as for collect), for --source-too
--undo             delete the forget record: the next collect lands the session again from its sources

Exit codes: 0 done · 2 usage · 4 a push or collector holds the root or the session (run again) ·
6 <root>/_removed is a symbolic link or not a directory (nothing removed).`;

const OPTIONS = { root: ROOT, source: SOURCE, "sources-only": SOURCES_ONLY, "source-too": flag("also delete the session's files in the vendor stores"), apply: flag("remove (without it: list what would go)"), undo: flag("delete the forget record"), json: JSON_FLAG } as const;

async function run({ values, positionals, io }: RunContext<typeof OPTIONS>): Promise<number> {
  const id = positionals[0]!;
  if (id.startsWith("_") || id.startsWith(".") || id.includes("/")) throw new CollectorError("Usage", `forget: ${JSON.stringify(id)} is not a session id`);
  const root = resolve(resolveRoot(values.root));
  const out = (json: unknown, text: string) => io.out(values.json ? jsonLine(json) : text);

  if (values.undo) {
    if (values.apply || values["source-too"]) throw new CollectorError("Usage", "forget: --undo takes no --apply or --source-too");
    const undone = undoForget(root, id);
    out({ session: id, undone }, undone ? `${id}: forget undone; the next collect lands it again from its sources\n` : `${id}: not forgotten; nothing to undo\n`);
    return 0;
  }

  const sources = { roots: parseSources(values.source), only: values["sources-only"] === true };
  const record = readForgetRecord(root, id);
  const plan = values["source-too"] && record?.state !== "removing" ? await sessionSources(root, id, sources) : { files: [] as string[], roots: [] as string[] };
  const preview = previewRemoval(root, id);
  const spool = spoolFiles(root, id);
  const receivers = await pushLines(root, id);

  if (!values.apply) {
    const lines = [`${id}: preview (nothing changed; --apply removes):`];
    if (record) lines.push(`  forget record ${root}/_forget/${id}.json says ${record.state}${record.state === "removing" ? " (--apply finishes that removal)" : ""}`);
    if (preview.sessionDir) lines.push(`  session directory ${preview.sessionDir.path}: ${preview.sessionDir.landed} landed files, ${preview.sessionDir.cursors} cursors (${preview.sessionDir.files} files, ${preview.sessionDir.bytes} bytes)`);
    if (preview.chainDir) lines.push(`  round chain ${preview.chainDir.path}: ${preview.chainDir.rounds} rounds (${preview.chainDir.files} files, ${preview.chainDir.bytes} bytes)`);
    for (const f of spool) lines.push(`  spool file ${f}`);
    for (const r of receivers) lines.push(`  push.state lines for ${r}`);
    if (values["source-too"]) for (const f of plan.files) lines.push(`  source file ${f}`);
    else lines.push(`  source files: left in place (read-only vendor store; --source-too deletes them)`);
    lines.push(`  then ${root}/_forget/${id}.json keeps the session out of collect, parse and push until forget --undo`);
    out(
      { session: id, apply: false, record: record?.state ?? null, session_dir: preview.sessionDir ?? null, chain_dir: preview.chainDir ?? null, spool, push_receivers: receivers, sources: plan.files },
      lines.join("\n") + "\n",
    );
    return 0;
  }

  const r = await applyForget(root, id, { sources: plan.files, sourceRoots: plan.roots });
  const lines = [`${id}: ${r.started ? "forgotten" : "removal finished"}:`];
  for (const f of r.sources) lines.push(`  deleted source file ${f}`);
  for (const d of r.sourceDirs) lines.push(`  deleted empty directory ${d}`);
  if (r.sessionDir) lines.push(`  deleted session directory ${r.sessionDir}`);
  if (r.chainDir) lines.push(`  deleted round chain ${r.chainDir}`);
  for (const f of r.spool) lines.push(`  deleted spool file ${f}`);
  if (r.metrics.length > 0) lines.push(`  deleted ${r.metrics.length} derived metrics file${r.metrics.length === 1 ? "" : "s"} from ${root}/_metrics`);
  for (const u of receivers) lines.push(`  dropped push.state lines for ${u}`);
  lines.push(`  recorded ${root}/_forget/${id}.json: collect, parse and push leave ${id} alone until forget --undo`);
  out(
    { session: id, apply: true, started: r.started, sources: r.sources, source_dirs: r.sourceDirs, session_dir: r.sessionDir ?? null, chain_dir: r.chainDir ?? null, spool: r.spool, metrics: r.metrics, push_receivers: receivers },
    lines.join("\n") + "\n",
  );
  return 0;
}

/** `lake-collector forget`. */
export const command = defineCommand({
  summary: "remove one session from this root, and keep it out",
  description: DESCRIPTION,
  options: OPTIONS,
  positionals: { names: "SESSION", min: 1, max: 1 },
  run,
});

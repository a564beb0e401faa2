import { lstatSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { defaultReaderCache } from "@lake/layout/store";
import { cleanDerived, listDerived } from "@lake/store";
import { defineCommand, jsonLine, flag, text, type RunContext } from "@lake/cli";
import { ROOT, JSON_FLAG, resolveRoot } from "../options.js";

const DESCRIPTION = `Derived state is what lake rebuilds from the landed files or the fleet store: each session's
index/ (rebuilt by the next collect), every round chain under _conversations/ (rebuilt by the next
collect or parse, round for round the same bytes), and the reader's cache (--cache, default
$LAKE_READER_CACHE, else $XDG_CACHE_HOME/lake/reader, else ~/.cache/lake/reader: the s3:// mirror and
the search index, filled again by the next read). Landed files, cursors, session.state, the hook
spool, push.state, redact.key and forget records are never touched. Without --apply, prints what
would be deleted and changes nothing. Each index and chain goes in one rename into _removed/ (an
index under its session's lock), then is deleted there.

Exit codes: 0 done · 2 usage · 4 a session stayed locked by a collector.`;

function size(p: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const q = join(d, e.name);
      if (e.isDirectory()) walk(q);
      else {
        files++;
        bytes += lstatSync(q).size;
      }
    }
  };
  walk(p);
  return { files, bytes };
}

const OPTIONS = { root: ROOT, cache: text("DIR", "the reader's cache (default $LAKE_READER_CACHE, else $XDG_CACHE_HOME/lake/reader)"), apply: flag("delete (without it: list what would go)"), json: JSON_FLAG } as const;

async function run({ values, io }: RunContext<typeof OPTIONS>): Promise<number> {
  const root = resolveRoot(values.root);
  const cache = values.cache ?? defaultReaderCache();
  const cacheItems: { what: "reader-cache"; path: string; files: number; bytes: number }[] = [];
  for (const sub of ["mirror", "search"]) {
    const p = join(cache, sub);
    try {
      if (lstatSync(p).isDirectory()) cacheItems.push({ what: "reader-cache", path: p, ...size(p) });
    } catch {
      /* absent */
    }
  }
  const items = values.apply ? await cleanDerived(root) : listDerived(root);
  if (values.apply) for (const c of cacheItems) rmSync(c.path, { recursive: true, force: true });
  const all = [...items.map((i) => ({ what: i.what, path: i.path, files: i.files, bytes: i.bytes })), ...cacheItems];
  const bytes = all.reduce((a, i) => a + i.bytes, 0);
  if (values.json) {
    io.out(jsonLine({ apply: values.apply === true, items: all, bytes }));
  } else {
    for (const i of all) io.out(`${values.apply ? "deleted" : "would delete"} ${i.what} ${i.path} (${i.files} files, ${i.bytes} bytes)\n`);
    io.out(`${root}: ${all.length} derived directories, ${bytes} bytes ${values.apply ? "deleted" : "to delete (preview; --apply deletes)"}\n`);
  }
  return 0;
}

/** `lake-collector clean`. */
export const command = defineCommand({
  summary: "delete derived state only (previewed unless --apply)",
  description: DESCRIPTION,
  options: OPTIONS,
  run,
});

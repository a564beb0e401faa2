// labels add|list: operator labels, append-only, in their own store (<root>/labels/labels.ndjson).
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { flag, text, type RunContext } from "@lake/cli";
import { COMMON, locations, usageError, type Io } from "../context.js";
import { ReaderError } from "../errors.js";
import { clip, renderTable, toJson } from "../format.js";
import { resolveSession } from "./read.js";
import { readerCommand } from "./parse.js";

/** One operator label. */
export interface Label {
  ts: string;
  session_id: string;
  runtime: string | null;
  aspect: string;
  value: string;
  note: string | null;
  source: string;
}

/** Append a label (one write of one line, O_APPEND, fsynced). */
export function appendLabel(file: string, label: Label): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    const fd = openSync(file, "a", 0o644);
    try {
      writeSync(fd, JSON.stringify(label) + "\n");
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    throw new ReaderError("Io", `${file}: cannot append: ${(e as Error).message}`, { data: { file }, cause: e });
  }
}

/** Read every label; a malformed line is a Corrupt error naming the file and the line. */
export function readLabels(file: string): Label[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new ReaderError("Io", `${file}: cannot read: ${(e as Error).message}`, { data: { file }, cause: e });
  }
  const out: Label[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    let v: Label;
    try {
      v = JSON.parse(line) as Label;
    } catch {
      if (i === lines.length - 1) return; // an unfinished last line (a crashed append): not yet a label
      throw new ReaderError("Corrupt", `${file}:${i + 1}: not a JSON label`, { data: { file } });
    }
    if (typeof v !== "object" || v === null || typeof v.session_id !== "string" || typeof v.aspect !== "string" || typeof v.value !== "string" || typeof v.ts !== "string") {
      throw new ReaderError("Corrupt", `${file}:${i + 1}: label lacks ts, session_id, aspect or value`, { data: { file } });
    }
    out.push(v);
  });
  return out;
}

const LABELS_OPTIONS = {
  ...COMMON,
  session: text("ID", "add: the session (a unique prefix is enough); list: only this session's labels"),
  aspect: text("A", "add: what the label is about; list: only this aspect"),
  value: text("V", "add: the label's value"),
  note: text("N", "add: a free-text note"),
  runtime: text("RT", "add: the session's runtime (default: the one the session was found with)"),
  source: text("S", "add: who labelled it (default operator:$USER)"),
  force: flag("add: label a session neither the local root nor the fleet has, its id as typed"),
  json: flag("print JSON: the label added, or the labels listed"),
} as const;

async function labels({ values, positionals, io }: RunContext<typeof LABELS_OPTIONS, Io>): Promise<number> {
  const sub = positionals[0];
  const loc = locations(values, io.env, io.damaged);
  if (sub === "add") {
    if (positionals.length > 1) throw usageError(`labels add: unexpected argument ${JSON.stringify(positionals[1])}`);
    for (const k of ["session", "aspect", "value"] as const) if (!values[k]) throw usageError(`labels add: --${k} is required`);
    // The session as show resolves it (a unique prefix is enough); one nobody has is refused unless --force.
    const found = await resolveSession(loc, values.session!);
    if (!found && !values.force) throw new ReaderError("NotFound", `no session ${JSON.stringify(values.session)} in the local root ${loc.root} or the fleet store ${loc.store} (--force labels it anyway)`, { data: { file: loc.root } });
    const label: Label = {
      ts: new Date().toISOString(),
      session_id: found?.id ?? values.session!,
      runtime: values.runtime ?? found?.runtime ?? null,
      aspect: values.aspect!,
      value: values.value!,
      note: values.note ?? null,
      source: values.source ?? `operator:${io.env.USER ?? "unknown"}`,
    };
    appendLabel(loc.labelsFile, label);
    if (values.json) io.out(toJson(label) + "\n");
    else io.out(`${loc.labelsFile}: labelled ${label.session_id} ${label.aspect}=${label.value}\n`);
    return 0;
  }
  if (sub === "list") {
    if (positionals.length > 1) throw usageError(`labels list: unexpected argument ${JSON.stringify(positionals[1])}`);
    const labels = readLabels(loc.labelsFile).filter((l) => (!values.session || l.session_id === values.session) && (!values.aspect || l.aspect === values.aspect));
    if (values.json) io.out(toJson(labels) + "\n");
    else
      io.out(
        renderTable(["Time (UTC)", "Session", "Aspect", "Value", "Note", "Source"], labels.map((l) => [l.ts.slice(0, 19).replace("T", " "), l.session_id, l.aspect, l.value, clip(l.note ?? "", 40), l.source])) +
          `\n${labels.length} label(s)\n`,
      );
    return 0;
  }
  throw usageError(`labels: expected add or list${sub === undefined ? "" : `, got ${JSON.stringify(sub)}`}`);
}

/** `lake-reader labels`. */
export const labelsCommand = readerCommand({
  usage: "add|list [options]",
  description: `Operator labels: an append-only annotation store at <root>/labels/labels.ndjson, one JSON object
per line {ts, session_id, runtime, aspect, value, note, source}. Labels are not transcript
evidence and are NOT MASKED: they are stored exactly as typed (an operator's own annotations), so
do not put secrets in them. They never touch the fleet store. The \`labels\` view reads them.
  lake-reader labels add --session ID --aspect A --value V [--note N] [--runtime RT] [--source S] [--force]
  lake-reader labels list [--session ID] [--aspect A] [--json]
add resolves --session as show does (the local root, else the fleet; a unique prefix is enough;
an ambiguous one is a usage error listing its matches) and stores the full id (and its runtime,
unless --runtime); a session neither has is refused (not found) unless --force, which stores the
id as typed. A malformed line in the labels file is named with its line number.`,
  options: LABELS_OPTIONS,
  positionals: { names: "add|list", min: 0, max: Number.MAX_SAFE_INTEGER },
  run: labels,
});

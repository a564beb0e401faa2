// labels add|list: operator labels, append-only, in their own store (<root>/labels/labels.ndjson).
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { COMMON_HELP, COMMON_OPTIONS, locations, usageError, type Io } from "../context.js";
import { ReaderError } from "../errors.js";
import { clip, renderTable, toJson } from "../format.js";
import { help, resolveSession } from "./read.js";
import { parse } from "./parse.js";

export const LABELS_HELP = `lake-reader labels add --session ID --aspect A --value V [--note N] [--runtime RT] [--source S] [--force]
lake-reader labels list [--session ID] [--aspect A] [--json]

Operator labels: an append-only annotation store at <root>/labels/labels.ndjson, one JSON object
per line {ts, session_id, runtime, aspect, value, note, source}. Labels are not transcript
evidence and are NOT MASKED: they are stored exactly as typed (an operator's own annotations), so
do not put secrets in them. They never touch the fleet store. The \`labels\` view reads them.
add resolves --session as show does (the local root, else the fleet; a unique prefix is enough)
and stores the full id (and its runtime, unless --runtime); a session neither has is refused
(exit 5) unless --force, which stores the id as typed.

Options:
${COMMON_HELP}

Exit codes: 0 ok, 2 bad arguments (an ambiguous prefix lists its matches), 3 a malformed line in the
labels file, 5 no such session (add without --force), 6 unreadable or unwritable.`;

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

/** `lake-reader labels`. */
export async function labelsCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parse(argv, {
    ...COMMON_OPTIONS,
    session: { type: "string" },
    aspect: { type: "string" },
    value: { type: "string" },
    note: { type: "string" },
    runtime: { type: "string" },
    source: { type: "string" },
    force: { type: "boolean" },
    json: { type: "boolean" },
  } as const);
  if (values.help) return help(io, LABELS_HELP);
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

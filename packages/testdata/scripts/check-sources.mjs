// Every data file of @lake/testdata has its row in the SOURCES.md of its top directory (local file,
// bytes, where it came from, its licence), and every row names a file that is here with that size.
// A row whose repo cell is `samples/` names a file the repository's samples/ holds instead (its
// upstream path cell is the path there): that file exists with that size and has its own row in
// samples/SOURCES.md, and this package holds no copy of it. No data file is here twice, nor here and
// in samples/ (the same bytes under two names: name the samples' file by a `samples/` row instead).
// Exit 1 with one line per file or row that does not match.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL("..", import.meta.url));
const samples = join(here, "..", "..", "samples");
const SKIP = new Set(["node_modules", "scripts", "src", "test"]);
const bad = [];
const walk = (d, rel = "") => {
  const out = [];
  for (const n of readdirSync(d).sort()) {
    const p = join(d, n);
    if (statSync(p).isDirectory()) out.push(...walk(p, `${rel}${n}/`));
    else out.push(`${rel}${n}`);
  }
  return out;
};
/** The rows of a SOURCES.md table: local file → its cells (bytes as a number). */
const rowsOf = (text) => {
  const rows = new Map();
  for (const line of text.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    if (cells.length < 4 || !/^\d+$/.test(cells[2] ?? "")) continue;
    rows.set(cells[1], { bytes: Number(cells[2]), repo: cells[3] ?? "", upstream: cells[4] ?? "" });
  }
  return rows;
};
const sha = (p) => createHash("sha256").update(readFileSync(p)).digest("hex");

const sampleRows = rowsOf(readFileSync(join(samples, "SOURCES.md"), "utf8"));
/** Content hash → where the bytes are (samples/ first, then this package's files). */
const seen = new Map();
for (const f of walk(samples).filter((f) => f !== "SOURCES.md")) seen.set(sha(join(samples, f)), `samples/${f}`);

for (const top of readdirSync(here).sort()) {
  if (SKIP.has(top) || top.startsWith(".") || !statSync(join(here, top)).isDirectory()) continue;
  const dir = join(here, top);
  let text;
  try {
    text = readFileSync(join(dir, "SOURCES.md"), "utf8");
  } catch {
    bad.push(`${top}/: no SOURCES.md`);
    continue;
  }
  const rows = rowsOf(text);
  const files = walk(dir).filter((f) => f !== "SOURCES.md");
  for (const f of files) {
    const size = statSync(join(dir, f)).size;
    const row = rows.get(f);
    if (row === undefined) bad.push(`${top}/${f}: no row in ${top}/SOURCES.md`);
    else if (row.repo === "samples/") bad.push(`${top}/${f}: a copy of samples/${row.upstream} (its row names the samples' file): remove it`);
    else if (row.bytes !== size) bad.push(`${top}/SOURCES.md: ${f} is ${size} bytes, the row says ${row.bytes}`);
    const h = sha(join(dir, f));
    const twin = seen.get(h);
    if (twin !== undefined) bad.push(`${top}/${f}: the same bytes as ${twin}: keep one (a samples/ file is named by a \`samples/\` row)`);
    else seen.set(h, `${top}/${f}`);
  }
  for (const [f, row] of rows) {
    if (row.repo === "samples/") {
      const p = join(samples, ...row.upstream.split("/"));
      const sampleRow = sampleRows.get(row.upstream);
      if (!existsSync(p)) bad.push(`${top}/SOURCES.md: ${f}: samples/${row.upstream}: no such file`);
      else if (statSync(p).size !== row.bytes) bad.push(`${top}/SOURCES.md: ${f}: samples/${row.upstream} is ${statSync(p).size} bytes, the row says ${row.bytes}`);
      if (sampleRow === undefined) bad.push(`${top}/SOURCES.md: ${f}: samples/SOURCES.md has no row for ${row.upstream}`);
      else if (sampleRow.bytes !== row.bytes) bad.push(`${top}/SOURCES.md: ${f}: samples/SOURCES.md says ${sampleRow.bytes} bytes for ${row.upstream}, this row ${row.bytes}`);
    } else if (!files.includes(f)) bad.push(`${top}/SOURCES.md: ${f}: no such file`);
  }
}
for (const b of bad) console.error(`check-sources: ${b}`);
if (bad.length > 0) process.exit(1);

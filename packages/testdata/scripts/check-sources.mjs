// Every data file of @lake/testdata has its row in the SOURCES.md of its top directory (local file,
// bytes, where it came from, its licence), and every row names a file that is here with that size.
// Exit 1 with one line per file or row that does not match.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL("..", import.meta.url));
const SKIP = new Set(["node_modules", "scripts", "src"]);
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
  const rows = new Map();
  for (const line of text.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    if (cells.length < 4 || !/^\d+$/.test(cells[2] ?? "")) continue;
    rows.set(cells[1], Number(cells[2]));
  }
  const files = walk(dir).filter((f) => f !== "SOURCES.md");
  for (const f of files) {
    const size = statSync(join(dir, f)).size;
    if (!rows.has(f)) bad.push(`${top}/${f}: no row in ${top}/SOURCES.md`);
    else if (rows.get(f) !== size) bad.push(`${top}/SOURCES.md: ${f} is ${size} bytes, the row says ${rows.get(f)}`);
  }
  for (const f of rows.keys()) if (!files.includes(f)) bad.push(`${top}/SOURCES.md: ${f}: no such file`);
}
for (const b of bad) console.error(`check-sources: ${b}`);
if (bad.length > 0) process.exit(1);

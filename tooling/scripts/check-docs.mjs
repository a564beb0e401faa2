#!/usr/bin/env node
// The repository carries its own reference: the specifications in docs/spec/ and the map in
// docs/ARCHITECTURE.md. Every mention of one of them in a tracked file (code comments, READMEs,
// vectors) must name it by its path from the repository root and that file must exist, so a reference
// never points at a document that is not here. Exit 1 with one line per bad mention (file:line).
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const files = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0").filter((f) => /\.(md|ts|mts|mjs|json|sh)$/.test(f));
// A spec or the map, with whatever path is written before it.
const MENTION = /(?<![\w.-])((?:[\w.-]+\/)*)(spec\/[\w-]+\.md|ARCHITECTURE\.md|CONTRIBUTING\.md)/g;

const bad = [];
for (const file of files) {
  if (!existsSync(join(root, file))) continue;
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  lines.forEach((line, i) => {
    for (const m of line.matchAll(MENTION)) {
      const [whole, prefix, doc] = m;
      const target = doc === "CONTRIBUTING.md" ? doc : `docs/${doc}`;
      // Inside docs/ the documents name each other relative to docs/ (`spec/…` beside docs/ARCHITECTURE.md).
      const ok = file.startsWith("docs/") ? prefix === "" || `${prefix}${doc}` === target : `${prefix}${doc}` === target;
      if (!ok) bad.push(`${file}:${i + 1}: "${whole}": name it as ${target}`);
      else if (!existsSync(join(root, target))) bad.push(`${file}:${i + 1}: ${target} does not exist`);
    }
  });
}
for (const b of bad) console.error(`check-docs: ${b}`);
if (bad.length > 0) process.exit(1);

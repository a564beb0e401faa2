#!/usr/bin/env node
// Every ```ts block of a package's README type-checks. Run from a package or app directory after
// the build (its lint does): `node ../../tooling/scripts/check-examples.mjs`. Each block is compiled
// as its own ES module beside the README, with the repository's strict compiler options, against the
// built packages the package itself resolves (its own name included, through its `exports`), so an
// example can only import what a user of the package could. A block that is deliberately not a whole
// program (a signature, an excerpt) is fenced as ```ts no-check (CONTRIBUTING.md). Exit 1 with one
// line per problem: README.md:<line>: <message>.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = process.cwd();
const readmePath = join(dir, "README.md");
if (!existsSync(readmePath)) process.exit(0);
const ts = createRequire(join(dir, "package.json"))("typescript");
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The ```ts blocks of a markdown text: first line number (1-based) of the code, the code, and whether it is marked no-check. */
function tsBlocks(text) {
  const blocks = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(ts|typescript)(?:\s+(.*))?$/.exec(lines[i]);
    if (!open) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end])) end++;
    const indent = open[1].length;
    blocks.push({ line: start + 1, code: lines.slice(start, end).map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length))).join("\n"), check: !(open[3] ?? "").split(/\s+/).includes("no-check") });
    i = end;
  }
  return blocks;
}

const blocks = tsBlocks(readFileSync(readmePath, "utf8")).filter((b) => b.check);
if (blocks.length === 0) process.exit(0);

const base = ts.getParsedCommandLineOfConfigFile(join(root, "tsconfig.base.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
const options = {
  ...base.options,
  noEmit: true,
  composite: false,
  incremental: false,
  declaration: false,
  declarationMap: false,
  sourceMap: false,
  // An example may name a value only to show it; it still has to type-check.
  noUnusedLocals: false,
  noUnusedParameters: false,
};
// Each block is a module file beside the README: README.md.<n>.mts.
const files = new Map(blocks.map((b, n) => [join(dir, `README.md.${n + 1}.mts`), b]));
const host = ts.createCompilerHost(options);
const { getSourceFile, fileExists, readFile } = host;
host.fileExists = (f) => files.has(f) || fileExists.call(host, f);
host.readFile = (f) => (files.has(f) ? files.get(f).code : readFile.call(host, f));
host.getSourceFile = (f, lang, ...rest) => (files.has(f) ? ts.createSourceFile(f, files.get(f).code, lang, true) : getSourceFile.call(host, f, lang, ...rest));
const program = ts.createProgram([...files.keys()], options, host);
const problems = [];
const perFile = new Map();
for (const d of ts.getPreEmitDiagnostics(program)) {
  // The first three problems of each block: a fragment that is not TypeScript at all gives dozens.
  const seen = perFile.get(d.file?.fileName) ?? 0;
  perFile.set(d.file?.fileName, seen + 1);
  if (seen === 3) problems.push(`${d.file && files.has(d.file.fileName) ? `README.md:${files.get(d.file.fileName).line}` : "README.md"}: more problems in this block (a fragment? fence it as \`\`\`ts no-check)`);
  if (seen >= 3) continue;
  const msg = ts.flattenDiagnosticMessageText(d.messageText, " ");
  const block = d.file ? files.get(d.file.fileName) : undefined;
  if (d.file && block) {
    const { line } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
    problems.push(`README.md:${block.line + line}: TS${d.code}: ${msg}`);
  } else problems.push(`${d.file ? d.file.fileName : "README.md"}: TS${d.code}: ${msg}`);
}
const name = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).name;
for (const p of problems) console.error(`${name}: check-examples: ${p}`);
if (problems.length > 0) process.exit(1);

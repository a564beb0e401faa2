// lake-collector's bundle (dist/bin) from tsc's output: rolldown, code split, CommonJS. The commands
// load lazily; split the way a bundler does by default (a chunk per set of dynamic imports that
// reach a module) a no-op collect loaded 25 files and a push 21, and each ES module file costs a
// resolve, a read and a link. Here the modules collect, push and hook reach by static imports (past
// the bin's own) are grouped by which of the three reach them: a no-op collect loads 13 files, a
// push 12, a hook 10 (14 before). A module that a part loaded later by a dynamic import (the session
// pass, push's sender…) also reaches stays with rolldown's own split unless every command that part
// is loaded under is in its group: loading a part never loads another command's group. CommonJS,
// because Node starts its ES module loader (some 4 ms) only for a process that loads an ES module:
// the bin (bin/package.json) and the chunks (dist/bin/package.json, written here) are CommonJS, a
// lazy part is a require, and the ES modules of the package (dist/, its exports) are untouched.
// `hook` is bundled apart (hook-cli.js, from src/hook-cli.ts): Claude Code runs it on every tool call,
// and as one file of only the code it runs (tree-shaken; no chunk shared with collect and push) a
// hook loads 80 KB of JavaScript where through cli.js it loaded ten files and 120 KB. The modules
// both builds hold are copies in two files; no process loads both (the bin picks one by command).
// bundle.meta.json names the modules each output holds (esbuild's metafile shape; the module-load
// tests read it).
import { rmSync, writeFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { rolldown } from "rolldown";

const OUT = "dist/bin";
const HOT = ["collect", "push", "hook"];
const abs = (p) => resolve(p);
const command = (c) => abs(`dist/internal/commands/${c}.js`);
const group = new Map();
/** Each module of the builds with its static importers (for the modules that render to no code). */
const importers = new Map();
/** Records each module's static importers as a build ends. */
const recordImporters = {
  name: "lake-collector-importers",
  buildEnd() {
    for (const id of this.getModuleIds()) {
      const info = this.getModuleInfo(id);
      if (info && !info.isExternal) importers.set(id, [...new Set([...(importers.get(id) ?? []), ...info.importers])]);
    }
  },
};

// Every module's imports are known once the build ends: the groups are computed then. Each module
// the hot commands' static imports reach (past the bin's own) goes to the group of the hot commands
// that reach it. Not one a module loaded later by a dynamic import also reaches, unless every hot
// command that import is made under is in that group: loading it must not load a group another
// command needs. What is left is rolldown's to split.
const grouping = {
  name: "lake-collector-groups",
  buildEnd() {
    const closure = (entry) => {
      const seen = new Set();
      const visit = (id) => {
        if (seen.has(id)) return;
        const info = this.getModuleInfo(id);
        if (!info || info.isExternal) return;
        seen.add(id);
        for (const d of info.importedIds) visit(d);
      };
      visit(entry);
      return seen;
    };
    const cli = closure(abs("dist/cli.js"));
    const hot = HOT.map((c) => [c, closure(command(c))]);
    // The modules each hot command loads later (dynamic imports, and theirs in turn), with the hot commands they load under.
    const later = new Map();
    for (const [c, ids] of hot) {
      const queue = [...ids];
      const seen = new Set();
      while (queue.length > 0) {
        const m = queue.pop();
        for (const d of this.getModuleInfo(m)?.dynamicallyImportedIds ?? []) {
          if (seen.has(d)) continue;
          seen.add(d);
          const under = later.get(d) ?? { ids: closure(d), under: new Set() };
          under.under.add(c);
          later.set(d, under);
          queue.push(...under.ids);
        }
      }
    }
    for (const [, ids] of hot) {
      for (const id of ids) {
        if (cli.has(id) || group.has(id)) continue;
        const by = hot.filter(([, other]) => other.has(id)).map(([c]) => c);
        const ok = [...later.values()].every((l) => !l.ids.has(id) || [...l.under].every((c) => by.includes(c)));
        if (ok) group.set(id, by.join("-"));
      }
    }
  },
};

const build = async (input, plugins, output) => {
  const bundle = await rolldown({
    input,
    platform: "node",
    external: [/^node:/, /^@duckdb\//, "better-sqlite3", /^@aws-sdk\//],
    logLevel: "warn",
    onLog(level, log, handler) {
      // A module both imported and dynamically imported stays where it is: expected here.
      if (log.code === "INEFFECTIVE_DYNAMIC_IMPORT") return;
      handler(level, log);
    },
    plugins: [recordImporters, ...plugins],
    preserveEntrySignatures: "allow-extension",
  });
  const written = await bundle.write({ dir: OUT, format: "cjs", entryFileNames: "[name].js", ...output });
  await bundle.close();
  return written.output;
};

rmSync(OUT, { recursive: true, force: true });
const output = [
  ...(await build({ cli: "dist/cli.js", "collect-worker": "dist/internal/collect-worker.js" }, [grouping], {
    chunkFileNames: "[name]-[hash].js",
    // A group holds the modules given, not all they import (an import is loaded from its own chunk).
    codeSplitting: { includeDependenciesRecursively: false, groups: [{ debugName: "commands", name: (id) => group.get(id) ?? null, test: (id) => group.has(id) }] },
  })),
  // What the hook loads only on a spool of records of known types (their schemas) is a chunk of its own.
  ...(await build({ "hook-cli": "dist/hook-cli.js" }, [], { chunkFileNames: "hook-cli-[name]-[hash].js" })),
];
// The chunks are CommonJS files named .js in a package of ES modules: this directory says so.
writeFileSync(`${OUT}/package.json`, JSON.stringify({ type: "commonjs" }) + "\n");
// bundle.meta.json: each output file with the modules it holds. A module that renders to no code (a
// package's index.js that only re-exports) is in no chunk: it is named with the files of the
// modules that import it, which is where its imports went.
const outputs = {};
const held = new Map();
for (const o of output) if (o.type === "chunk") for (const id of Object.keys(o.modules)) if (!id.startsWith("\0")) held.set(id, [...(held.get(id) ?? []), o.fileName]);
const filesOf = (id, seen = new Set()) => {
  if (held.has(id)) return held.get(id);
  if (seen.has(id)) return [];
  seen.add(id);
  return [...new Set((importers.get(id) ?? []).flatMap((i) => filesOf(i, seen)))];
};
for (const o of output) if (o.type === "chunk") outputs[`${OUT}/${o.fileName}`] = { bytes: o.code.length, inputs: {} };
for (const id of importers.keys()) for (const f of filesOf(id)) outputs[`${OUT}/${f}`].inputs[relative(".", id)] = {};
writeFileSync(`${OUT}/bundle.meta.json`, JSON.stringify({ outputs }, null, 1) + "\n");

// Which modules a child Node process loads, for the tests that check a command or a subpath loads
// no more than it says (no record schema, no DuckDB …). Start the child with MODULES_IMPORT as an
// `--import` (on its argv or in NODE_OPTIONS): a module resolve hook (node:module register) names
// every ES module it resolves, and a wrapper of the CommonJS loader (Module._load) names every
// require, createRequire's included (Node 20's resolve hooks do not see those), each on a line of
// stderr. loadedModules reads them back.

/** The start of each line the child writes for a module it loads. */
const MARK = "lake-module-loaded ";

const HOOKS = `export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write(${JSON.stringify(MARK)} + r.url + "\\n"); return r; }`;

const PRELOAD = `import Module, { register } from "node:module";
import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
register(${JSON.stringify("data:text/javascript," + encodeURIComponent(HOOKS))});
const load = Module._load;
Module._load = function (request, parent, isMain) {
  let id;
  try {
    const f = Module._resolveFilename(request, parent, isMain);
    id = isAbsolute(f) ? pathToFileURL(f).href : f.startsWith("node:") ? f : "node:" + f;
  } catch {
    return load.apply(this, arguments);
  }
  process.stderr.write(${JSON.stringify(MARK)} + id + "\\n");
  return load.apply(this, arguments);
};
`;

/**
 * The `--import` value that makes a process name every module it loads (ES modules and CommonJS
 * requires) on stderr: `node --import MODULES_IMPORT …` or `NODE_OPTIONS="--import MODULES_IMPORT"`
 * (a data URL, no spaces or quotes in it).
 */
export const MODULES_IMPORT = "data:text/javascript," + encodeURIComponent(PRELOAD).replace(/'/g, "%27");

/**
 * The modules a child started with {@link MODULES_IMPORT} loaded, each once, in load order: file
 * URLs (`file:///…/dist/x.js`, a CommonJS file by its resolved path) and `node:` built-ins; and the
 * child's stderr without those lines.
 */
export function loadedModules(stderr: string): { modules: string[]; stderr: string } {
  const lines = stderr.split("\n");
  const modules = [...new Set(lines.filter((l) => l.startsWith(MARK)).map((l) => l.slice(MARK.length)))];
  return { modules, stderr: lines.filter((l) => !l.startsWith(MARK)).join("\n") };
}

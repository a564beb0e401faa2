// Which modules a child Node process loads, for the tests that check a command or a subpath loads
// no more than it says (no record schema, no DuckDB …). Start the child with MODULES_IMPORT as an
// `--import` (on its argv or in NODE_OPTIONS): a module resolve hook (node:module register) names
// every ES module it resolves, and a wrapper of the CommonJS loader (Module._load) names every
// require, createRequire's included (Node 20's resolve hooks do not see those), each on a line of
// stderr. loadedModules reads them back, and names the modules inside each bundle file it sees
// (from the metafile `bundle.meta.json` beside it, esbuild's shape), so a bundled bin is checked by the
// modules it is made of.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

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
 * URLs (`file:///…/dist/x.js`, a CommonJS file by its resolved path) and `node:` built-ins, a bundle
 * file followed by the modules it holds; `files`: the files and built-ins as loaded (a bundle file
 * as itself only); and the child's stderr without those lines.
 */
export function loadedModules(stderr: string): { modules: string[]; files: string[]; stderr: string } {
  const lines = stderr.split("\n");
  const files = [...new Set(lines.filter((l) => l.startsWith(MARK)).map((l) => l.slice(MARK.length)))];
  const modules = [...new Set(files.flatMap((u) => [u, ...bundled(u)]))];
  return { modules, files, stderr: lines.filter((l) => !l.startsWith(MARK)).join("\n") };
}

/** A bundle's metafile (esbuild's shape; the collector's bundle script writes it too): each output file (relative to the build's directory) with the input modules in it. */
interface Metafile {
  readonly outputs: Record<string, { readonly inputs: Record<string, unknown> }>;
}

const metafiles = new Map<string, Metafile | undefined>();

/** The modules a bundle file holds (file URLs), from the `bundle.meta.json` in its directory; none for a file that is not one. */
function bundled(url: string): string[] {
  if (!url.startsWith("file:")) return [];
  const file = fileURLToPath(url);
  const dir = dirname(file);
  if (!metafiles.has(dir)) {
    const meta = join(dir, "bundle.meta.json");
    metafiles.set(dir, existsSync(meta) ? (JSON.parse(readFileSync(meta, "utf8")) as Metafile) : undefined);
  }
  const meta = metafiles.get(dir);
  if (!meta) return [];
  for (const [out, { inputs }] of Object.entries(meta.outputs)) {
    // The build ran where `out` (a path relative to it) names this file.
    if (!file.endsWith("/" + out)) continue;
    const base = file.slice(0, file.length - out.length);
    return Object.keys(inputs).map((i) => pathToFileURL(join(base, i)).href);
  }
  return [];
}

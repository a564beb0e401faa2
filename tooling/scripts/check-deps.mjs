// Checks that a package's runtime `dependencies` are exactly the packages its shipped code imports.
// Run from a package directory after the build: `node ../../tooling/scripts/check-deps.mjs`.
// It reads every .js file under dist/ and bin/ (the compiled code a tarball ships) and collects the
// bare specifiers of static imports and re-exports, `import("x")`, and `require("x")` /
// `requireCjs("x")` (native modules loaded through createRequire). A dependency (or peer dependency) nothing imports,
// or an import no dependency provides, is one line on stderr and exit 1.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { join } from "node:path";

const dir = process.cwd();
const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));

const PATTERNS = [
  /^\s*(?:import|export)\b[^;"]*?\bfrom\s*"([^"]+)"/gm,
  /^\s*import\s*"([^"]+)"/gm,
  /\b(?:import|require\w*)\(\s*"([^"]+)"\s*\)/g,
];

/** The package name a bare specifier names, or undefined for relative paths and node built-ins. */
function packageOf(specifier) {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("node:")) return undefined;
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
  if (builtinModules.includes(name)) return undefined;
  return name;
}

const imported = new Map();
const walk = (d) => {
  for (const entry of readdirSync(d)) {
    const path = join(d, entry);
    if (statSync(path).isDirectory()) walk(path);
    else if (/\.(?:m?js)$/.test(entry)) {
      const text = readFileSync(path, "utf8");
      for (const pattern of PATTERNS) {
        for (const match of text.matchAll(pattern)) {
          const name = packageOf(match[1]);
          if (name !== undefined && name !== pkg.name && !imported.has(name)) imported.set(name, path.slice(dir.length + 1));
        }
      }
    }
  }
};
for (const sub of ["dist", "bin"]) if (existsSync(join(dir, sub))) walk(join(dir, sub));
if (!existsSync(join(dir, "dist"))) {
  console.error(`${pkg.name}: check-deps: dist/ does not exist (build first)`);
  process.exit(1);
}

// A peer dependency counts as declared: an optional peer is what a `./testing` subpath imports
// (vitest), which only the tests of the package's users load.
const declared = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
let bad = 0;
for (const name of declared) {
  if (!imported.has(name)) {
    console.error(`${pkg.name}: package.json: dependency ${name} is not imported by dist/ or bin/ (move it to devDependencies)`);
    bad++;
  }
}
for (const [name, file] of imported) {
  if (!declared.has(name)) {
    console.error(`${pkg.name}: ${file}: imports ${name}, which is not in dependencies`);
    bad++;
  }
}
process.exit(bad === 0 ? 0 : 1);

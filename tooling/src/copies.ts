// Two real builds of a package side by side, for the tests that check an error from one copy is
// recognised by the other copy's guard (a brand, not `instanceof`). installBuild copies a built
// package (package.json and dist/) into a node_modules folder, copies each workspace package it
// depends on the same way (so every install holds its own copy of @lake/errors, @lake/cli …), and
// links every other dependency to the copy the workspace resolves.
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

interface Manifest {
  readonly name: string;
  readonly dependencies?: Readonly<Record<string, string>>;
}

/**
 * Install the built package in `dir` into `nodeModules` (a `node_modules` folder) and return the
 * installed copy's directory. Fails when the package is not built (no `dist/`).
 */
export function installBuild(dir: string, nodeModules: string): string {
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
  const target = join(nodeModules, pkg.name);
  if (existsSync(target)) return target;
  if (!existsSync(join(dir, "dist"))) throw new Error(`${dir}: dist/ does not exist (build first)`);
  mkdirSync(target, { recursive: true });
  cpSync(join(dir, "package.json"), join(target, "package.json"));
  cpSync(join(dir, "dist"), join(target, "dist"), { recursive: true });
  for (const [dep, version] of Object.entries(pkg.dependencies ?? {})) {
    const real = realpathSync(join(dir, "node_modules", dep));
    if (version.startsWith("workspace:")) {
      installBuild(real, nodeModules);
      continue;
    }
    const link = join(nodeModules, dep);
    if (existsSync(link)) {
      if (realpathSync(link) !== real) throw new Error(`${pkg.name}: ${dep} resolves to ${real}, another package of the install to ${realpathSync(link)}`);
      continue;
    }
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(real, link, "dir");
  }
  return target;
}

/** Import a module of an installed copy by its path inside the package (`dist/index.js`). */
export async function importFrom<T = Record<string, unknown>>(installed: string, file: string): Promise<T> {
  return (await import(pathToFileURL(join(installed, file)).href)) as T;
}

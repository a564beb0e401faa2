"use strict";
// V8's code cache for the bundle's chunks (README "Start-up"): a chunk is compiled with the cache the
// last run of the same command left, and a chunk that had none (or whose cache V8 refused: another
// build, another Node) has one written as the process exits, taken after the command ran, so it holds
// the functions the command compiled as it ran, not only the chunk's top level.
//
// Where: $LAKE_COMPILE_CACHE, else $XDG_CACHE_HOME/lake-collector, else ~/.cache/lake-collector;
// LAKE_COMPILE_CACHE=off turns it off. Under it, one directory per build of the bin (its cli.js's size
// and mtime) and Node, holding one per command; a new build's first write removes the other builds'
// (directories named as builds are, nothing else).
// V8 checks each cache against the chunk's source and its own version and flags and refuses any other,
// so a stale or damaged cache costs a compile, never a wrong result; every failure to read or write it
// is ignored. A run writes caches only if V8's flags at its end are those it compiled its first
// uncached chunk with (a cache is for the flags it was made under; a run that loads the chunk under
// others refuses it). The flags are read from node:v8 at that first miss only: a run that finds every
// cache loads no node:v8 (some 2 ms of its start).
const Module = require("node:module");
const { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } = require("node:fs");
const { dirname, join } = require("node:path");
const vm = require("node:vm");

const main = require.main;

/** A build's directory name: Node's version, the architecture, cli.js's size and mtime (ms). */
const BUILD = /^v\d+\.\d+\.\d+-[a-z0-9]+-\d+-\d+$/;

/** The directory this run's caches are read from and written to, or undefined when it is off. */
function cacheDir(bundle, command, env) {
  const setting = env.LAKE_COMPILE_CACHE;
  if (setting === "off") return undefined;
  const home = env.HOME || require("node:os").homedir();
  const base = setting || join(env.XDG_CACHE_HOME || join(home, ".cache"), "lake-collector");
  let st;
  try {
    st = statSync(join(bundle, "cli.js"));
  } catch {
    return undefined;
  }
  const build = `${process.version}-${process.arch}-${st.size}-${Math.trunc(st.mtimeMs)}`;
  return { base, build, dir: join(base, build, /^[a-z][a-z-]{0,31}$/.test(command) ? command : "other") };
}

/** Compile the bundle's chunks (the files directly in `bundle`) with their caches. */
function useCompileCache(bundle, command, env = process.env) {
  const where = cacheDir(bundle, command, env);
  if (!where) return;
  const made = [];
  let tag;
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    if (dirname(filename) !== bundle) return compile.call(this, content, filename);
    const file = join(where.dir, filename.slice(bundle.length + 1));
    let cachedData;
    try {
      cachedData = readFileSync(file);
    } catch {
      // None yet.
    }
    const script = new vm.Script(Module.wrap(content), { filename, cachedData });
    if (cachedData === undefined || script.cachedDataRejected) {
      tag ??= flagHash();
      made.push({ file, script });
    }
    const fn = script.runInThisContext({ displayErrors: true });
    const mod = this;
    const require = (id) => mod.require(id);
    require.resolve = (request, options) => Module._resolveFilename(request, mod, false, options);
    require.main = main;
    require.cache = Module._cache;
    return fn.call(mod.exports, mod.exports, require, mod, filename, bundle);
  };
  process.once("exit", () => {
    // V8's flags changed since the first uncached chunk was compiled (a watch whose passes landed:
    // heap-flags.ts): the caches would be for other flags than that chunk's; none are written.
    if (made.length === 0 || flagHash() !== tag) return;
    try {
      const fresh = !existsDir(join(where.base, where.build));
      mkdirSync(where.dir, { recursive: true, mode: 0o700 });
      // Only directories named as builds are: LAKE_COMPILE_CACHE may name a directory that holds more.
      if (fresh) for (const other of readdirSync(where.base)) if (other !== where.build && BUILD.test(other)) rmSync(join(where.base, other), { recursive: true, force: true });
      for (const { file, script } of made) {
        const tmp = `${file}.${process.pid}.tmp`;
        writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
        renameSync(tmp, file);
      }
    } catch {
      // A cache not written is a compile next time.
    }
  });
}

/** V8's version and flags, as its code caches are checked against them. */
function flagHash() {
  return require("node:v8").cachedDataVersionTag();
}

function existsDir(path) {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

module.exports = { useCompileCache };

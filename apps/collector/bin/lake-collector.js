#!/usr/bin/env node
"use strict";
// CommonJS (bin/package.json), as the bundle is: a process that loads no ES module never starts Node's ES module loader.
const { join } = require("node:path");
const bundle = join(__dirname, "..", "dist", "bin");
const command = process.argv[2] ?? "";
// `hook` runs from its own entry, one file of the code it runs (src/hook-cli.ts); the other commands
// from cli.js, with V8's code cache (compile-cache.js). A hook loads too little for reading caches to
// cost less than compiling (1.04× its time with them, 0.93× a no-op push's).
const hook = command === "hook";
if (!hook) require("./compile-cache.js").useCompileCache(bundle, command);
require(join(bundle, hook ? "hook-cli.js" : "cli.js"))
  .main(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
  });

#!/usr/bin/env node
"use strict";
// CommonJS (bin/package.json), as the bundle is: a process that loads no ES module never starts Node's ES module loader.
const { join } = require("node:path");
const bundle = join(__dirname, "..", "dist", "bin");
const command = process.argv[2] ?? "";
// V8's code cache (compile-cache.js), for every command but `hook`: a hook loads too little for
// reading the caches to cost less than compiling (1.04× its time with them, 0.93× a no-op push's).
if (command !== "hook") require("./compile-cache.js").useCompileCache(bundle, command);
require(join(bundle, "cli.js"))
  .main(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
  });

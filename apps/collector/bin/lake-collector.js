#!/usr/bin/env node
"use strict";
// CommonJS (bin/package.json), as the bundle is: a process that loads no ES module never starts Node's ES module loader.
require("../dist/bin/cli.js")
  .main(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
  });

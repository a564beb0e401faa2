#!/usr/bin/env node
// Runs every bench/*.bench.ts of the package in the current directory, one after another, with tsx.
// Benchmarks print medians and ratios against a baseline measured in the same run; they never
// fail on a time (a crash still fails).
import { readdirSync, existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const tsx = require.resolve("tsx/cli");
const files = existsSync("bench") ? readdirSync("bench").filter((f) => f.endsWith(".bench.ts")).sort() : [];
if (files.length === 0) {
  console.log("no benchmarks in this package");
  process.exit(0);
}
let failed = 0;
for (const f of files) {
  console.log(`\n# ${process.env.npm_package_name ?? ""} ${f}`);
  const r = spawnSync(process.execPath, ["--expose-gc", tsx, `bench/${f}`], { stdio: "inherit" });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);

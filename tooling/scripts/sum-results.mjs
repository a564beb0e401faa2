#!/usr/bin/env node
// Sums the vitest JSON reports (test-results.json) of every package and app into one line,
// "N passed, N failed", printed last. A package with tests whose report is missing (its run
// crashed before writing one) counts as one failure, named on stderr.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

let passed = 0;
let failed = 0;
for (const group of ["packages", "apps"]) {
  if (!existsSync(group)) continue;
  for (const name of readdirSync(group).sort()) {
    const dir = join(group, name);
    if (!existsSync(join(dir, "package.json"))) continue;
    const hasTests = existsSync(join(dir, "test")) && readdirSync(join(dir, "test"), { recursive: true }).some((f) => String(f).endsWith(".test.ts"));
    const report = join(dir, "test-results.json");
    if (!existsSync(report)) {
      if (hasTests) {
        console.error(`sum-results: ${dir}: no test-results.json (its test run did not finish)`);
        failed++;
      }
      continue;
    }
    try {
      const r = JSON.parse(readFileSync(report, "utf8"));
      const p = r.numPassedTests ?? 0;
      // Suites that failed to load count as failures too.
      const f = (r.numFailedTests ?? 0) + filesFailedWithoutTests(r);
      console.error(`sum-results: ${dir}: ${p} passed, ${f} failed`);
      passed += p;
      failed += f;
    } catch (err) {
      console.error(`sum-results: ${report}: unreadable (${err.message})`);
      failed++;
    }
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);

function filesFailedWithoutTests(r) {
  // A test file that failed without a failed test (it did not load, or a hook threw) is one failure.
  return (r.testResults ?? []).filter((t) => t.status === "failed" && !(t.assertionResults ?? []).some((a) => a.status === "failed")).length;
}

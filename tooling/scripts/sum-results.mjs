#!/usr/bin/env node
// Sums the vitest JSON reports (test-results.json) of every package and app into one line,
// "N passed, N failed", printed last. A package with tests whose report is missing (its run
// crashed before writing one) counts as one failure, named on stderr. Each failed test is named on
// stderr (file, title, the first line of its message), just before the total, so the end of a
// long log says what failed.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

let passed = 0;
let failed = 0;
const failures = [];
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
      failures.push(...failedTests(dir, r));
      passed += p;
      failed += f;
    } catch (err) {
      console.error(`sum-results: ${report}: unreadable (${err.message})`);
      failed++;
    }
  }
}
for (const line of failures) console.error(line);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);

function filesFailedWithoutTests(r) {
  // A test file that failed without a failed test (it did not load, or a hook threw) is one failure.
  return (r.testResults ?? []).filter((t) => t.status === "failed" && !(t.assertionResults ?? []).some((a) => a.status === "failed")).length;
}

function failedTests(dir, r) {
  const out = [];
  for (const file of r.testResults ?? []) {
    const rel = String(file.name ?? "").split(`/${dir}/`).pop();
    const failedHere = (file.assertionResults ?? []).filter((a) => a.status === "failed");
    for (const a of failedHere) out.push(`FAILED ${dir}/${rel} > ${a.fullName ?? a.title}: ${firstLine(a.failureMessages?.[0])}`);
    if (file.status === "failed" && failedHere.length === 0) out.push(`FAILED ${dir}/${rel}: ${firstLine(file.message)}`);
  }
  return out;
}

function firstLine(text) {
  // Colour codes and the stack are left out; the first line names the expectation.
  return String(text ?? "").replace(/\x1b\[[0-9;]*m/g, "").split("\n")[0].slice(0, 300);
}

// No catastrophic backtracking: for inputs built to stress each rule (its keywords repeated,
// long runs of its secret alphabet, unterminated structures), time grows linearly with size.
import { describe, expect, it } from "vitest";
import { performance } from "node:perf_hooks";
import { createRedactor, defaultRules, memoryKey } from "../src/index.js";

const red = createRedactor({ key: memoryKey(), quarantineRules: [] });

function adversarial(unit: string, bytes: number): string {
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

function timeOf(s: string): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    red.redactString(s);
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

const units: [string, string][] = [];
for (const r of defaultRules) {
  for (const k of r.keywords.slice(0, 1)) {
    units.push([`${r.id}:${k}:run`, k + "aB3".repeat(30)]);
    units.push([`${r.id}:${k}:sep`, `${k}=:"' `]);
    units.push([`${r.id}:${k}:url`, `${k}://u:p`]);
  }
}
units.push(["pem-unterminated", "-----BEGIN RSA PRIVATE KEY-----\n" + "QUJD".repeat(20)]);
units.push(["jwt-no-dots", "eyJ" + "a".repeat(100)]);
units.push(["jwt-dots", "eyJhbGciOi.eyJ"]);
units.push(["url-no-at", "://" + "a".repeat(120) + ":" + "b".repeat(250) + "/"]);
units.push(["curl-no-user", "curl " + "-x ".repeat(50)]);
units.push(["generic-long", "password=" + "x9".repeat(400)]);
units.push(["escapes", '\\"\\\\n\\u0041' + "token"]);
units.push(["continuations", "ghp_ab\\\n  cd\\\n"]);

// Size: 64 KiB and 256 KiB per unit (about 350 units; 30–60 s in total on 2 cores). A unit that
// looks super-linear is measured again (up to 3 times) before it counts: the machine is shared.
const SMALL = 64 * 1024;
const LARGE = 256 * 1024;

describe("adversarial inputs", () => {
  it("time grows linearly (4x bytes → under 8x time, where quadratic is 16x) and stays bounded", () => {
    const slow: string[] = [];
    for (const [name, unit] of units) {
      const a = adversarial(unit, SMALL);
      const b = adversarial(unit, LARGE);
      let verdict = "";
      for (let attempt = 0; attempt < 3; attempt++) {
        const ta = timeOf(a);
        const tb = timeOf(b);
        // Quadratic growth would be 16x; tiny times are noise-dominated.
        verdict = tb > 50 && tb / Math.max(ta, 1) > 8 ? `${name}: ${ta.toFixed(1)}ms → ${tb.toFixed(1)}ms` : "";
        // Absolute bound: 256 KiB of adversarial text in under 1 s even on a loaded 2-core machine.
        if (tb > 1000) verdict = `${name}: ${tb.toFixed(0)}ms for 256 KiB`;
        if (!verdict) break;
      }
      if (verdict) slow.push(verdict);
    }
    expect(slow).toEqual([]);
  }, 300_000);
});

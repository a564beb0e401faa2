// The README's demo (tooling/scripts/main-job.sh: the built collector, maint and reader on the
// bundled samples), piped as a newcomer's `| less` or CI would: plain text, no escape codes, in the
// directory LAKE_DEMO_DIR names, as the README says.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";

afterAll(cleanupTempDirs);

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

describe("the demo", () => {
  it("piped, or with NO_COLOR, prints no escape codes; it works in LAKE_DEMO_DIR as the README documents", () => {
    const readme = readFileSync(join(REPO, "README.md"), "utf8");
    expect(readme).toContain("LAKE_DEMO_DIR");
    expect(readme).toContain("NO_COLOR");
    // No "update available" notice from the package manager in the demo's output.
    expect(readFileSync(join(REPO, "tooling/scripts/run.sh"), "utf8")).toMatch(/^export npm_config_update_notifier=false$/m);
    const demo = join(REPO, "tooling/scripts/main-job.sh");
    // Piped; then on a terminal (util-linux `script` gives it a pty) with NO_COLOR set.
    for (const [cmd, args, extra] of [
      ["bash", [demo], {}],
      ["script", ["-qec", `bash ${demo}`, "/dev/null"], { NO_COLOR: "1" }],
    ] as const) {
      const work = join(tempDir("demo"), "work");
      const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, LAKE_DEMO_DIR: work, ...extra };
      const r = spawnSync(cmd, args, { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 300_000 });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain("\u001b");
      expect(r.stdout).toContain("\n$ lake-collector collect");
      expect(r.stdout).toContain(`Everything above is in ${work} (root/, fleet/, cache/).`);
      for (const d of ["root", "fleet", "cache"]) expect(existsSync(join(work, d))).toBe(true);
    }
  }, 600_000);
});

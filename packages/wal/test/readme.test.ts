import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");

describe("README", () => {
  it("the example runs (against the built package, imported by name)", () => {
    const md = readFileSync(join(pkg, "README.md"), "utf8");
    const code = /```ts\n([\s\S]*?)```/.exec(md)?.[1];
    expect(code).toBeDefined();
    const dir = join(pkg, ".lake-tmp");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "readme-example.ts");
    writeFileSync(file, code!);
    const require = createRequire(import.meta.url);
    const r = spawnSync(process.execPath, ["--import", pathToFileURL(require.resolve("tsx")).href, file], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('"status":"ok"');
    expect(r.stdout).toContain("2:steered (gated)");
    expect(r.stdout).toContain("input_tokens: 12");
    expect(r.stdout).toContain("where: 'live'");
    expect(r.stdout).toContain("where: 'archive'");
  }, 60_000);
});

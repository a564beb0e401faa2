// The README's example, run as written against a temp directory.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import * as layout from "../src/index.js";

afterAll(() => cleanupTempDirs());

it("the README example runs and prints the segment key it shows", async () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const code = /## Example\n\n```ts\n([\s\S]*?)```/.exec(readme)![1]!;
  const body = code.replace(/^import .*$/m, "").replace(/<\{ n: number \}>/g, "");
  const logs: unknown[] = [];
  const env = { LAKE_STORE: pathToFileURL(join(tempDir("layout-readme"), "fleet")).href };
  const run = new Function("layout", "process", "console", `const {${Object.keys(layout).join(",")}} = layout; return (async () => {${body}})();`);
  await run(layout, { env }, { log: (x: unknown) => logs.push(x) });
  expect(logs).toEqual(["sessions/dt=2025-03-09/fleet=teamA/runtime=codex/agent=a1/session=s1/seg-000000.parquet"]);
});

// A converter's cross-line state travels in the cursor: a Codex rollout collected in two halves,
// in small windows, lands the same usage as the adapter reading the whole file, and the second
// pass reads only the bytes it had not read.
import { readFileSync, writeFileSync, appendFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { usageBySession } from "@lake/events";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";
import { adapterTotals, fleetRecords, runCli, vendorTree, walk } from "./helpers.js";

afterAll(cleanupTempDirs);

describe("carried adapter state", { timeout: 300_000 }, () => {
  it("a Codex rollout read in two passes and many windows: only new bytes read, usage equal to a whole-file parse", async () => {
    const dir = tempDir("carried");
    const tree = vendorTree(join(dir, "vendor"));
    const file = walk(join(tree.codex, "sessions")).find((f) => f.endsWith(".jsonl"))!;
    const whole = readFileSync(file);
    const lines = whole.toString("utf8").split("\n");
    const firstHalf = lines.slice(0, Math.floor(lines.length / 2)).join("\n") + "\n";
    writeFileSync(file, firstHalf);
    const root = join(dir, "root");
    const flags = ["--sources-only", "--source", `codex=${tree.codex}`, "--max-delta-bytes", "65536", "--json"];
    const a = await runCli(["collect", "--root", root, ...flags]);
    expect(a.code, a.stderr).toBe(0);
    expect(JSON.parse(a.stdout).landed_files).toBeGreaterThan(2);
    const cursor = walk(root).find((f) => f.endsWith("transcript.cursor"))!;
    expect(readFileSync(cursor, "utf8")).toMatch(/^adapter_state +\{"offset":\d+,"state":\{"metas":1,/m);
    appendFileSync(file, whole.subarray(Buffer.byteLength(firstHalf)));
    const b = await runCli(["collect", "--root", root, ...flags]);
    expect(b.code, b.stderr).toBe(0);
    expect(JSON.parse(b.stdout).bytes_read).toBe(whole.length - Buffer.byteLength(firstHalf));
    expect((await runCli(["push", "--root", root, "--store", `file://${join(dir, "fleet")}`, "--agent", "t"])).code).toBe(0);
    const got = new Map([...usageBySession(await fleetRecords(join(dir, "fleet")))].map(([k, v]) => [k, v.usage]));
    expect(got).toEqual(await adapterTotals({ codex: tree.codex }));
    expect(got.size).toBe(1);
  });
});

// processIo over a real pipe whose reader goes away (`| head -1`): the command is not killed by
// the stream error; what it writes afterwards is dropped and it ends with its own exit code.
import { spawn } from "node:child_process";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const DIST = pathToFileURL(new URL("../dist/index.js", import.meta.url).pathname).href;

/** A command writing 20 MB to stdout in lines, then "finished" to stderr, exiting 3. */
const SCRIPT = `
const { defineCommand, processIo, runCli } = await import(${JSON.stringify(DIST)});
const big = defineCommand({ summary: "write a lot", options: {}, run: async ({ io }) => {
  for (let i = 0; i < 200_000; i++) { io.out("line " + i + " " + "x".repeat(90) + "\\n"); if (i % 1000 === 0) await new Promise((r) => setImmediate(r)); }
  io.err("finished\\n");
  return 3;
} });
process.exitCode = await runCli({ name: "t", version: "0", summary: "t", commands: { big }, describeError: () => undefined }, ["big"], processIo());
`;

describe("processIo", () => {
  it("a closed stdout (EPIPE) drops further output: the command finishes with its own exit code and no stack", async () => {
    const p = spawn(process.execPath, ["--input-type=module", "-e", SCRIPT], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    let first = "";
    p.stdout.once("data", (d: Buffer) => {
      first = d.toString();
      p.stdout.destroy(); // the reader goes away, as `head -1` does after its line
    });
    const code = await new Promise<number | null>((resolve) => p.on("close", (c) => resolve(c)));
    expect(first).toMatch(/^line 0 /);
    expect(stderr).toBe("finished\n");
    expect(code).toBe(3);
  });
});

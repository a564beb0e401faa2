// processIo over a real pipe whose reader goes away (`| head -1`): the command is not killed by
// the stream error; what it writes afterwards is dropped and it ends with its own exit code. And over
// a non-blocking pipe that fills (EAGAIN): every line arrives, in order; and a line written without
// Node's stdout stream (no net, no tty module loaded).
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

/** Run SCRIPT-like code in a child: its stdout, stderr, exit code and the built-in modules it loaded. */
async function child(code: string, opts: { preload?: string; readAfterMs?: number } = {}): Promise<{ out: string; err: string; code: number | null }> {
  const p = spawn(process.execPath, [...(opts.preload ? ["--import", opts.preload] : []), "--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  p.stderr.on("data", (d: Buffer) => (err += d.toString()));
  // Not read at first: the pipe (64 KiB) fills and the child's writes would block.
  if (opts.readAfterMs) p.stdout.pause();
  p.stdout.on("data", (d: Buffer) => (out += d.toString()));
  if (opts.readAfterMs) setTimeout(() => p.stdout.resume(), opts.readAfterMs);
  const exit = await new Promise<number | null>((resolve) => p.on("close", (c) => resolve(c)));
  return { out, err, code: exit };
}

describe("processIo", () => {
  it("a non-blocking stdout that fills (EAGAIN) hands the rest to Node's stream: every line arrives, in order", async () => {
    // The preload makes fd 1 non-blocking, as a parent sharing the pipe could have (Node's own stream does).
    const preload = "data:text/javascript," + encodeURIComponent("process.stdout;");
    const code = `
const { defineCommand, processIo, runCli } = await import(${JSON.stringify(DIST)});
const lines = defineCommand({ summary: "lines", options: {}, run: async ({ io }) => { for (let i = 0; i < 20000; i++) io.out("line " + i + " " + "y".repeat(60) + "\\n"); io.err("done\\n"); return 4; } });
process.exitCode = await runCli({ name: "t", version: "0", summary: "t", commands: { lines }, describeError: () => undefined }, ["lines"], processIo());
`;
    const r = await child(code, { preload, readAfterMs: 300 });
    expect(r.err).toBe("done\n");
    expect(r.code).toBe(4);
    const got = r.out.split("\n").filter(Boolean);
    expect(got).toHaveLength(20000);
    got.forEach((l, i) => expect(l.startsWith(`line ${i} `)).toBe(true));
  });

  it("writes a line without making Node's stdout or stderr stream (no net or tty module loaded)", async () => {
    const code = `
const { defineCommand, processIo, runCli } = await import(${JSON.stringify(DIST)});
const say = defineCommand({ summary: "say", options: {}, run: async ({ io }) => { io.out("hello\\n"); io.err("note\\n"); return 0; } });
process.exitCode = await runCli({ name: "t", version: "0", summary: "t", commands: { say }, describeError: () => undefined }, ["say"], processIo());
process.on("exit", () => require("node:fs").writeSync(2, JSON.stringify(process.moduleLoadList.filter((m) => /^NativeModule (net|tty)$/.test(m))) + "\\n"));
`.replace('process.on("exit", () => require("node:fs")', 'const fs = (await import("node:module")).createRequire(import.meta.url)("node:fs"); process.on("exit", () => fs');
    const r = await child(code);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe("hello\n");
    const [note, loaded] = r.err.trimEnd().split("\n");
    expect(note).toBe("note");
    expect(JSON.parse(loaded!)).toEqual([]);
  });

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

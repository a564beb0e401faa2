// The three apps' command lines behave alike (@lake/cli): one table of cases runs against each app's
// real bin, expecting the same exit code and the same message shape from every one.
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { EXIT, formatExitCodes } from "@lake/cli";
import { cleanupTempDirs, tempDir } from "@lake/tooling/tmp";

interface AppUnderTest {
  readonly name: string;
  readonly bin: string;
  /** A command that takes --store (and reads it before anything else fails). */
  readonly storeCommand: readonly string[];
  /** A command line ending in an option that takes a runtime id, or undefined when the app has none. */
  readonly runtimeOption?: (runtime: string) => readonly string[];
}

const path = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const version = (app: string) => (JSON.parse(readFileSync(path(`../../${app}/package.json`), "utf8")) as { version: string }).version;

const APPS: readonly AppUnderTest[] = [
  // lake-maint's commands are partitioned by date and fleet, none by runtime.
  { name: "lake-collector", bin: path("../../collector/bin/lake-collector.js"), storeCommand: ["push"], runtimeOption: (rt) => ["collect", "--source", `${rt}=/tmp`] },
  { name: "lake-maint", bin: path("../../maint/bin/lake-maint.js"), storeCommand: ["verify"] },
  { name: "lake-reader", bin: path("../bin/lake-reader.js"), storeCommand: ["sessions"], runtimeOption: (rt) => ["usage", "daily", "--runtime", rt] },
];

function run(bin: string, args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // A case that were not refused would run on an empty home, never the user's.
    const home = tempDir("cli-contract");
    mkdirSync(join(home, "root"));
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, LAKE_ROOT: join(home, "root"), XDG_DATA_HOME: "", XDG_CACHE_HOME: "", CLAUDE_CONFIG_DIR: "", LAKE_STORE: "", LAKE_DEBUG: "", ...extraEnv };
    delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
    execFile(process.execPath, [bin, ...args], { env }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** One line on stderr, `<app>: …` or `<app> <command>: …`, nothing on stdout. */
function oneErrorLine(app: string, command: string | undefined, rest: RegExp) {
  const prefix = command === undefined ? `${app}: ` : `${app} ${command}: `;
  return { stdout: "", stderr: expect.stringMatching(new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}${rest.source}\\n$`)) };
}

interface Case {
  readonly name: string;
  readonly args: (a: AppUnderTest) => readonly string[] | undefined;
  readonly code: number;
  readonly expect: (a: AppUnderTest) => Record<string, unknown>;
}

const CASES: readonly Case[] = [
  { name: "no arguments", args: () => [], code: 2, expect: (a) => ({ stdout: "", stderr: expect.stringMatching(new RegExp(`^${a.name} \\d+\\.\\d+\\.\\d+ — [^\\n]+\\n[\\s\\S]*\\nExit codes:\\n    0  ok\\n    1  [^\\n]+\\n    2  usage`)) }) },
  { name: "--help", args: () => ["--help"], code: 0, expect: (a) => ({ stderr: "", stdout: expect.stringMatching(new RegExp(`^${a.name} \\d+\\.\\d+\\.\\d+ — [\\s\\S]*\\nExit codes:\\n    0  ok\\n[\\s\\S]*\\n  130  interrupted`)) }) },
  // One exit-code table: every app's help ends with it, the same rows.
  { name: "--help ends with the one exit-code table", args: () => ["--help"], code: 0, expect: () => ({ stderr: "", stdout: expect.stringMatching(new RegExp(`\n${formatExitCodes().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\n$`)) }) },
  { name: "--version", args: () => ["--version"], code: 0, expect: (a) => ({ stderr: "", stdout: `${a.name} ${version(a.name.replace("lake-", ""))}\n` }) },
  { name: "an unknown command", args: () => ["no-such-command"], code: 2, expect: (a) => oneErrorLine(a.name, undefined, /unknown command "no-such-command" \(.+ --help lists them\)/) },
  { name: "an unknown flag", args: (a) => [...a.storeCommand, "--no-such-flag"], code: 2, expect: (a) => oneErrorLine(a.name, a.storeCommand.join(" "), /unknown option --no-such-flag \(.+ --help lists the options\)/) },
  { name: "--store ftp://x", args: (a) => [...a.storeCommand, "--store", "ftp://x"], code: 2, expect: (a) => oneErrorLine(a.name, a.storeCommand.join(" "), /--store "ftp:\/\/x": expected file:\/\/\/absolute\/dir or s3:\/\/bucket\/prefix/) },
  { name: "--store relative/dir", args: (a) => [...a.storeCommand, "--store", "relative/dir"], code: 2, expect: (a) => oneErrorLine(a.name, a.storeCommand.join(" "), /--store "relative\/dir": expected file:\/\/\/absolute\/dir or s3:\/\/bucket\/prefix/) },
  {
    name: "an unknown runtime",
    args: (a) => a.runtimeOption?.("cursor"),
    code: 2,
    expect: (a) => oneErrorLine(a.name, a.runtimeOption?.("cursor")[0], /.*"cursor.*": expected one of claude-code, codex, gemini, broca, hook/),
  },
];

afterAll(cleanupTempDirs);

describe("every app's command line", () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const results = [];
      for (const a of APPS) {
        const args = c.args(a);
        if (args === undefined) continue;
        const r = await run(a.bin, args);
        expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }, `${a.name} ${args.join(" ")}`).toEqual({ code: c.code, ...c.expect(a) });
        results.push(r);
      }
      // Every case runs on at least two of the three apps.
      expect(results.length).toBeGreaterThanOrEqual(2);
      // The AWS SDK's Node version warning is never printed.
      for (const r of results) expect(r.stderr).not.toContain("NodeVersionSupportWarning");
    });
  }

  it("an s3:// store without a region: one line naming the store, no AWS SDK notice, the store-failure code (5) in every app", async () => {
    for (const a of APPS) {
      const noAws = { AWS_REGION: undefined, AWS_DEFAULT_REGION: undefined, AWS_CONFIG_FILE: "/nonexistent", AWS_SHARED_CREDENTIALS_FILE: "/nonexistent", AWS_ENDPOINT_URL_S3: undefined, AWS_PROFILE: undefined };
      const r = await run(a.bin, [...a.storeCommand, "--store", "s3://lake-no-region/p"], noAws);
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }, a.name).toEqual({ code: EXIT.store, ...oneErrorLine(a.name, a.storeCommand.join(" "), /.*s3:\/\/lake-no-region\/p.*Region is missing/) });
    }
  });
});

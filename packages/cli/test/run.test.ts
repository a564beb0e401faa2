import { describe, expect, it } from "vitest";
import { appHelp, choice, commandHelp, defineCommand, flag, formatExitCodes, runCli, type App, type Io } from "../src/index.js";
import { parseStoreArg, resolveStore, storeOption } from "../src/store.js";

class AppError extends Error {
  constructor(
    message: string,
    readonly exit: number,
  ) {
    super(message);
  }
}

const show = defineCommand({
  summary: "show one thing",
  positionals: { names: "ID", min: 1, max: 1 },
  options: { store: storeOption(), color: choice("WHEN", ["auto", "always", "never"], "colour", { default: "auto" }), json: flag("print JSON") },
  run: async ({ values, positionals, io }) => {
    if (positionals[0] === "boom") throw new AppError("show: boom.txt: no such thing", 5);
    if (positionals[0] === "bug") throw new TypeError("x is not a function");
    io.out(JSON.stringify({ id: positionals[0], store: values.store ?? resolveStore(undefined, io.env), color: values.color, json: values.json }) + "\n");
    return 0;
  },
});

const APP: App = {
  name: "lake-test",
  version: "1.2.3",
  summary: "a test program",
  commands: {
    show,
    "lease acquire": { summary: "take a lease", load: async () => defineCommand({ summary: "take a lease", options: {}, run: async () => 0 }) },
    "lease list": { summary: "list leases", load: async () => defineCommand({ summary: "list leases", options: {}, run: async () => 0 }) },
  },
  describeError: (e) => (e instanceof AppError ? { message: e.message, code: e.exit } : undefined),
};

async function run(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: Io = { out: (s) => void (out += s), err: (s) => void (err += s), env };
  const code = await runCli(APP, argv, io);
  return { code, out, err };
}

describe("runCli", () => {
  it("no arguments: the help on stderr, exit 2; --help: on stdout, exit 0; --version from the app", async () => {
    const none = await run([]);
    expect(none).toEqual({ code: 2, out: "", err: appHelp(APP) + "\n" });
    expect(await run(["--help"])).toEqual({ code: 0, out: appHelp(APP) + "\n", err: "" });
    expect(await run(["--version"])).toEqual({ code: 0, out: "lake-test 1.2.3\n", err: "" });
    expect(appHelp(APP)).toContain("Exit codes:\n    0  ok\n    1  internal error (LAKE_DEBUG=1 prints the stack)\n    2  usage");
    expect(appHelp(APP)).toContain(formatExitCodes());
    expect(appHelp(APP)).toContain("    9  refused: newer writer, lost lease, conflicting change, already there\n  130  interrupted");
  });

  it("a command's help lists its table, and -h anywhere asks for it", async () => {
    const r = await run(["show", "--bogus", "-h"]);
    expect(r.code).toBe(0);
    expect(r.out).toBe(commandHelp(APP, "show", show) + "\n");
    expect(r.out).toMatch(/^lake-test show ID \[options\]\n/);
    expect(r.out).toContain("  --color WHEN  colour");
    expect(r.out).toContain("  --store URL   fleet store: file:///dir, /abs/dir or s3://bucket/prefix\n");
    expect(r.out).toContain("    8  not found: no such session, store or object");
  });

  it("runs a command with typed values and the io it was given", async () => {
    const r = await run(["show", "abc", "--color", "never", "--store", "/srv/fleet"]);
    expect(r).toEqual({ code: 0, out: JSON.stringify({ id: "abc", store: "file:///srv/fleet", color: "never", json: false }) + "\n", err: "" });
    const env = await run(["show", "abc"], { LAKE_STORE: "s3://bucket/team/" });
    expect(JSON.parse(env.out).store).toBe("s3://bucket/team");
  });

  it("usage errors: one line, one prefix, exit 2", async () => {
    const cases: [string[], string][] = [
      [["nope"], 'lake-test: unknown command "nope" (lake-test --help lists them)\n'],
      [["--bogus"], "lake-test: unknown option --bogus (lake-test --help lists the commands)\n"],
      [["show", "x", "--bogus"], "lake-test show: unknown option --bogus (lake-test show --help lists the options)\n"],
      [["show", "x", "--store", "ftp://x"], 'lake-test show: --store "ftp://x": expected file:///absolute/dir or s3://bucket/prefix\n'],
      [["show", "x", "--store", "relative/dir"], 'lake-test show: --store "relative/dir": expected file:///absolute/dir or s3://bucket/prefix\n'],
      [["show", "x", "--color", "blue"], 'lake-test show: --color "blue": expected one of auto, always, never\n'],
      [["show"], "lake-test show: expected ID\n"],
      [["lease"], "lake-test lease: needs a subcommand: acquire, list\n"],
      [["lease", "drop"], 'lake-test lease: unknown subcommand "drop"; expected acquire, list\n'],
    ];
    for (const [argv, err] of cases) expect(await run(argv), argv.join(" ")).toEqual({ code: 2, out: "", err });
    expect(await run(["show", "x"], { LAKE_STORE: "ftp://x" })).toEqual({ code: 2, out: "", err: 'lake-test show: $LAKE_STORE "ftp://x": expected file:///absolute/dir or s3://bucket/prefix\n' });
  });

  it("an app's error: printed once without its repeated prefix, the app's exit code; LAKE_DEBUG=1 adds the stack", async () => {
    expect(await run(["show", "boom"])).toEqual({ code: 5, out: "", err: "lake-test show: boom.txt: no such thing\n" });
    const dbg = await run(["show", "bug"], { LAKE_DEBUG: "1" });
    expect(dbg.code).toBe(1);
    const lines = dbg.err.split("\n");
    expect(lines[0]).toBe("lake-test show: internal error: x is not a function");
    expect(lines[1]).toBe("TypeError: x is not a function");
    expect(lines[2]).toMatch(/^ {4}at /);
    expect((await run(["show", "bug"], { LAKE_DEBUG: "0" })).err).toBe("lake-test show: internal error: x is not a function\n");
  });

  it("silences the AWS SDK's Node version warning unless the user set the variable", async () => {
    await run(["--version"]);
    expect(process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED).toBeDefined();
  });
});

describe("parseStoreArg", () => {
  it("is @lake/layout's parser: file URLs, absolute paths and s3 URLs in normal form", () => {
    expect(parseStoreArg("file:///srv/fleet/")).toBe("file:///srv/fleet");
    expect(parseStoreArg("/srv/fleet")).toBe("file:///srv/fleet");
    expect(parseStoreArg("s3://my-bucket/team/")).toBe("s3://my-bucket/team");
    for (const bad of ["ftp://x", "relative/dir", "s3://A/x", ""]) expect(() => parseStoreArg(bad), bad).toThrow();
  });
});

describe("jsonLine", () => {
  it("writes snake_case keys at every depth and keeps keys that are not camelCase", async () => {
    const { jsonLine } = await import("../src/index.js");
    expect(jsonLine({ landedFiles: 2, pendingSources: [{ sessionId: "s", source_gone: 1 }], index: { "sess-1": { linesRead: 3 } }, at: new Date(0) })).toBe(
      '{"landed_files":2,"pending_sources":[{"session_id":"s","source_gone":1}],"index":{"sess-1":{"lines_read":3}},"at":"1970-01-01T00:00:00.000Z"}\n',
    );
  });
});

